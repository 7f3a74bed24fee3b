package dcgm

import (
	"strconv"
	"strings"
	"testing"
)

// TestOneGPUPerIndex: a node whose series put two GPUs at one index is
// refused with one line naming both UUIDs and the likely cause, never
// written as a profile no reader accepts; an index a later series of the
// GPU gives is taken; MIG devices share their parent's index.
func TestOneGPUPerIndex(t *testing.T) {
	add := func(b *Builder, labels map[string]string) {
		t.Helper()
		id, ok := ParseLabels(func(k string) string { return labels[k] })
		if !ok {
			t.Fatalf("labels %v name no GPU", labels)
		}
		b.Add(id, "DCGM_FI_DEV_GPU_UTIL", []Pair{{1000, 50}})
	}
	for _, c := range []struct {
		name   string
		series []map[string]string
		want   string // the error, or the GPUs' "uuid@index" when ""
		gpus   string
	}{
		{"no gpu label", []map[string]string{{"Hostname": "h", "UUID": "GPU-b"}, {"Hostname": "h", "UUID": "GPU-a"}},
			`node "h": GPUs "GPU-a" and "GPU-b" both have index 0: a series without dcgm-exporter's gpu label has no index (has a relabeling dropped it?)`, ""},
		{"replaced", []map[string]string{{"Hostname": "h", "gpu": "3", "UUID": "GPU-b"}, {"Hostname": "h", "gpu": "3", "UUID": "GPU-a"}},
			`node "h": GPUs "GPU-a" and "GPU-b" both have index 3: a GPU replaced within the window, or two hosts' series under one node name`, ""},
		{"index from a later series", []map[string]string{{"Hostname": "h", "UUID": "GPU-b"}, {"Hostname": "h", "gpu": "1", "UUID": "GPU-b"}, {"Hostname": "h", "gpu": "0", "UUID": "GPU-a"}},
			"", "GPU-a@0 GPU-b@1"},
		{"one GPU without the label", []map[string]string{{"Hostname": "h", "UUID": "GPU-a"}}, "", "GPU-a@0"},
		{"MIG devices", []map[string]string{{"Hostname": "h", "gpu": "0", "UUID": "GPU-a", "GPU_I_ID": "1"}, {"Hostname": "h", "gpu": "0", "UUID": "GPU-a", "GPU_I_ID": "2"}, {"Hostname": "h", "gpu": "0", "UUID": "GPU-a"}},
			"", "GPU-a@0 GPU-a/gi1@0 GPU-a/gi2@0"},
		{"one index on two nodes", []map[string]string{{"Hostname": "h", "gpu": "0", "UUID": "GPU-a"}, {"Hostname": "i", "gpu": "0", "UUID": "GPU-b"}}, "", "GPU-a@0 GPU-b@0"},
	} {
		t.Run(c.name, func(t *testing.T) {
			b := NewBuilder(0)
			for _, s := range c.series {
				add(b, s)
			}
			nodes, err := b.Build(0, 5000)
			if c.want != "" {
				if err == nil || err.Error() != c.want {
					t.Fatalf("err = %v, want %s", err, c.want)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			var got []string
			for _, n := range nodes {
				for _, g := range n.GPUs {
					got = append(got, g.UUID+"@"+strconv.Itoa(g.Index))
				}
			}
			if strings.Join(got, " ") != c.gpus {
				t.Fatalf("gpus %v, want %s", got, c.gpus)
			}
		})
	}
}
