package sim

import (
	"bytes"
	"context"
	"testing"
	"time"

	"github.com/seedance/seedance/profile"
	"github.com/seedance/seedance/source"
)

// TestStreamedMatchesAtOnce: the cluster recorded one node at a time is
// the profile the whole cluster sampled at once gives, byte for byte, in
// every scenario.
func TestStreamedMatchesAtOnce(t *testing.T) {
	for _, sc := range Scenarios {
		o := Options{Nodes: 6, Scenario: sc, Seed: 3, Start: DefaultStart}
		ro := source.RecordOptions{Interval: time.Second, Duration: 90 * time.Second, Generator: profile.Generator{Name: "seedance", Version: "test"}}
		whole, err := Record(o, ro.Interval, ro.Duration, ro.Generator)
		if err != nil {
			t.Fatal(err)
		}
		st, err := newStreamed(o, DefaultDuration)
		if err != nil {
			t.Fatal(err)
		}
		var nodes []profile.Node
		head, err := st.ProfileNodes(context.Background(), ro, func(ns []profile.Node) error {
			nodes = append(nodes, ns...)
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
		head.Nodes = nodes
		var a, b bytes.Buffer
		if err := profile.Encode(&a, whole); err != nil {
			t.Fatal(err)
		}
		if err := profile.Encode(&b, head); err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(a.Bytes(), b.Bytes()) {
			t.Fatalf("%s: streamed (%d bytes) differs from at once (%d bytes)", sc, b.Len(), a.Len())
		}
		if !head.Complete || len(nodes) != 6 {
			t.Fatalf("%s: complete %v, %d nodes", sc, head.Complete, len(nodes))
		}
	}
}

// TestStreamedInterrupted: a run interrupted ends with what it recorded,
// marked incomplete.
func TestStreamedInterrupted(t *testing.T) {
	st, err := newStreamed(Options{Nodes: 4, Scenario: ScenarioMixed, Seed: 1, Start: DefaultStart}, DefaultDuration)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	n := 0
	head, err := st.ProfileNodes(ctx, source.RecordOptions{Interval: time.Second, Duration: time.Minute}, func(ns []profile.Node) error {
		n += len(ns)
		cancel() // after the first node
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if head.Complete || n != 2 {
		t.Fatalf("complete %v after %d nodes (want incomplete after 2: the one done, the one interrupted)", head.Complete, n)
	}
}
