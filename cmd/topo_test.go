package cmd

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/seedance/seedance/internal/exit"
)

func TestTopoWithoutGPU(t *testing.T) {
	r := run(t, nil, "topo")
	if r.code != 0 || !strings.Contains(r.out, "NUMA NODE") || !strings.Contains(r.out, "No NVIDIA GPU found: NVML library not found") {
		t.Fatalf("exit %d:\n%s%s", r.code, r.out, r.errOut)
	}
	r = run(t, nil, "topo", "--format", "json")
	var res map[string]any
	if err := json.Unmarshal([]byte(r.out), &res); err != nil || res["gpu_topology"] != nil || res["host"] == nil {
		t.Fatalf("json %v: %s", err, r.out)
	}
	if r := run(t, nil, "topo", "--format", "dot"); r.code != exit.Usage {
		t.Fatalf("bad format: %d", r.code)
	}
}
