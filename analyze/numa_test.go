package analyze

import (
	"fmt"
	"os"
	"strings"
	"testing"

	"github.com/seedance/seedance/hwtopo"
	"github.com/seedance/seedance/profile"
)

// dgxA100 is the topology of a DGX A100 (`nvidia-smi topo -m`): GPUs 0–3
// on NUMA node 0 (CPUs 0-23), 4–7 on node 1 (CPUs 24-47).
func dgxA100(t *testing.T) *hwtopo.Topology {
	t.Helper()
	f, err := os.Open("../hwtopo/testdata/topo-dgxa100.txt")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	topo, err := hwtopo.ParseMatrix(f)
	if err != nil {
		t.Fatal(err)
	}
	// The host's NUMA layout, as the node's sysfs gives it.
	topo.Host = &hwtopo.Host{Sockets: 2, NUMANodes: []hwtopo.NUMANode{{ID: 0, CPUs: "0-23"}, {ID: 1, CPUs: "24-47"}}}
	return topo
}

// TestNUMASuggestions: a workload whose GPUs sit on two NUMA nodes though
// one node has enough is told to keep them on one; one whose GPU is on
// node 0 but whose CPUs are on node 1 is told to rebind, with the CPUs; a
// workload bound where its GPUs are (or half of its CPUs there), one too
// large for a node, one on a GPU the topology lacks, and a pending one
// are left alone; four GPUs fit a node of four. Without the host's NUMA layout nothing is
// said.
func TestNUMASuggestions(t *testing.T) {
	var gpus []gpuSpec
	for i := range 8 {
		gpus = append(gpus, gpuSpec{uuid: fmt.Sprintf("GPU-%d", i), t: every10(7), util: fill(80, 7)})
	}
	run := func(id string, cpus string, gs ...int) profile.Workload {
		return profile.Workload{ID: id, Name: id, Kind: profile.KindPod, State: profile.StateRunning, GPUs: gs, CPUsAllowed: cpus}
	}
	ws := []profile.Workload{
		run("ml/spread", "", 3, 4),
		run("ml/misbound", "24-47", 0),
		run("ml/bound", "24-35", 5),
		run("ml/all", "0-47", 0, 1, 2, 3, 4, 5, 6, 7),
		run("ml/half", "12-35", 1),      // half its CPUs on its GPU's node: enough
		run("ml/four", "", 2, 3, 4, 5),  // four GPUs over two nodes of four
		run("ml/elsewhere", "24-47", 8), // a GPU the topology does not have
		{ID: "ml/waiting", Name: "waiting", Kind: profile.KindPod, State: profile.StatePending, GPUCount: 2, GPUs: []int{3, 4}},
	}
	topo := dgxA100(t)
	for _, c := range []struct {
		host bool
		want []string
	}{
		{true, []string{
			SuggestPackNUMA + " n: ml/four's 4 GPUs (2, 3, 4, 5) sit on NUMA nodes 0, 1: keep them on one NUMA node",
			SuggestRebindNUMA + " n: ml/misbound may run on CPUs 24-47, but its GPU(s) 0 are on NUMA node 0: bind it to CPUs 0-23",
			SuggestPackNUMA + " n: ml/spread's 2 GPUs (3, 4) sit on NUMA nodes 0, 1: keep them on one NUMA node",
		}},
		{false, nil},
	} {
		tp := *topo
		if !c.host {
			tp.Host = nil
		}
		r := mustAnalyze(t, DefaultParams(), mkProfile(t, t0, 70, 10, nodeSpec{name: "n", gpus: gpus, workloads: ws, topology: &tp}))
		var got []string
		for _, s := range r.Suggestions {
			if s.Kind == SuggestRebindNUMA || s.Kind == SuggestPackNUMA {
				got = append(got, s.Kind+" "+s.Text)
			}
		}
		if len(got) != len(c.want) {
			t.Fatalf("host %v: suggestions %q", c.host, got)
		}
		for i := range got {
			if !strings.HasPrefix(got[i], c.want[i]) {
				t.Errorf("host %v: %q\nwant %q…", c.host, got[i], c.want[i])
			}
		}
	}
}
