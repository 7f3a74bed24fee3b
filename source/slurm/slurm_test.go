package slurm

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/seedance/seedance/profile"
)

func TestAddPending(t *testing.T) {
	p := &profile.Profile{Nodes: []profile.Node{{Name: "node-gpu-01"}, {Name: "node-gpu-02"}}}
	squeue := func(_ context.Context, args ...string) ([]byte, error) {
		if strings.Join(args, " ") != "--noheader --states=PENDING --format=%i|%b|%n|%u|%a" {
			t.Fatalf("squeue %v", args)
		}
		return []byte("3|gres:gpu:2|node-gpu-02|alice|research\n" +
			"4|gres:gpu:1||bob|ml\n" + // waits for any node
			"5|N/A|node-gpu-01|carol|ml\n" + // no GPUs
			"6|gres/gpu:a100:4|node-gpu-01|dave|(null)\n" +
			"7|gres:gpu:1|node-gpu-[01-02]|erin|ml\n" + // several nodes
			"garbage\n"), nil
	}
	notes, err := AddPending(context.Background(), p, squeue)
	if err != nil {
		t.Fatal(err)
	}
	a, b := p.Nodes[0].Workloads, p.Nodes[1].Workloads
	if len(a) != 1 || a[0].ID != "6" || a[0].GPUCount != 4 || a[0].Kind != profile.KindJob || a[0].State != profile.StatePending ||
		a[0].Labels["user"] != "dave" || a[0].Labels["account"] != "" {
		t.Fatalf("node-gpu-01: %+v", a)
	}
	if len(b) != 1 || b[0].ID != "3" || b[0].GPUCount != 2 || b[0].Labels["account"] != "research" {
		t.Fatalf("node-gpu-02: %+v", b)
	}
	if len(notes) != 1 || !strings.Contains(notes[0], "2 pending GPU job(s) wait for no one node of this profile: 4, 7") {
		t.Fatalf("notes %q", notes)
	}
	if _, err := AddPending(context.Background(), p, func(context.Context, ...string) ([]byte, error) { return nil, errors.New("no controller") }); err == nil {
		t.Fatal("a failed squeue was not said")
	}
}
