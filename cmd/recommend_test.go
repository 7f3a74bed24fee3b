package cmd

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/seedance/seedance/internal/schematest"
	"github.com/seedance/seedance/recommend"
)

func TestRecommendOnSimulatedCluster(t *testing.T) {
	p := simProfile(t, "--sim-nodes", "16")
	r := run(t, nil, "recommend", "--input", p, "--dialect", "json")
	if r.code != 0 {
		t.Fatal(r.errOut)
	}
	schematest.Validate(t, "plan-v1.schema.json", []byte(r.out))
	var plan recommend.Plan
	json.Unmarshal([]byte(r.out), &plan)
	released := strings.Join(plan.ReleasedNodes, ",")
	// The idle A100 nodes, and node-gpu-05 once its one notebook moves to the
	// other one-GPU H100 node.
	if released != "node-gpu-05,node-gpu-08,node-gpu-16" {
		t.Fatalf("released %s", released)
	}
	var jupyter, pending int
	for _, m := range plan.Moves {
		if strings.Contains(m.Workload, "jupyter-alice") && m.To == "node-gpu-13" {
			jupyter++
		}
		if m.From == nil {
			pending++
		}
	}
	if jupyter != 1 || pending != 4 {
		t.Fatalf("moves %+v", plan.Moves)
	}
	if !strings.Contains(r.errOut, "plan: 5 move(s), 3 node(s) released") {
		t.Fatalf("stderr %q", r.errOut)
	}
	// The script, written atomically and executable.
	out := filepath.Join(t.TempDir(), "plan.sh")
	if r := run(t, nil, "recommend", "--input", p, "--output", out); r.code != 0 {
		t.Fatal(r.errOut)
	}
	fi, _ := os.Stat(out)
	b, _ := os.ReadFile(out)
	if fi.Mode().Perm()&0o100 == 0 || !strings.HasPrefix(string(b), "#!/usr/bin/env bash") || !strings.Contains(string(b), "evict ml ") {
		t.Fatalf("mode %v script %.300s", fi.Mode(), b)
	}
	for _, args := range [][]string{{"recommend"}, {"recommend", "--input", p, "--dialect", "ansible"}, {"recommend", "--input", "/nope.json"}} {
		if r := run(t, nil, args...); r.code != ExitUsage {
			t.Errorf("%v: exit %d", args, r.code)
		}
	}
}
