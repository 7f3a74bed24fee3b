package hwtopo

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// fixtureHost writes a sysfs tree of a 2-socket host: NUMA node 0 with CPUs
// 0-3 and 64 GiB, node 1 with CPUs 4-7 and 32 GiB.
func fixtureHost(t *testing.T) string {
	root := t.TempDir()
	write := func(path, s string) {
		p := filepath.Join(root, path)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(s), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	for node, mem := range map[int]int{0: 64 << 20, 1: 32 << 20} {
		base := fmt.Sprintf("sys/devices/system/node/node%d", node)
		write(base+"/distance", map[int]string{0: "10 21\n", 1: "21 10\n"}[node])
		write(base+"/meminfo", fmt.Sprintf("Node %d MemTotal:       %d kB\nNode %d MemFree:        1000 kB\nNode %d Hugetlb:        0 kB\n", node, mem, node, node))
		write(base+"/cpulist", fmt.Sprintf("%d-%d\n", 4*node, 4*node+3))
		if err := os.MkdirAll(filepath.Join(root, base, "hugepages"), 0o755); err != nil {
			t.Fatal(err)
		}
		for c := 4 * node; c < 4*node+4; c++ {
			write(fmt.Sprintf("%s/cpu%d/topology/core_id", base, c), fmt.Sprint(c))
			if err := os.MkdirAll(filepath.Join(root, fmt.Sprintf("%s/cpu%d/cache", base, c)), 0o755); err != nil {
				t.Fatal(err)
			}
			write(fmt.Sprintf("sys/devices/system/cpu/cpu%d/topology/physical_package_id", c), fmt.Sprint(node))
			write(fmt.Sprintf("sys/devices/system/cpu/cpu%d/topology/core_id", c), fmt.Sprint(c))
		}
	}
	write("sys/devices/system/cpu/online", "0-7\n")
	var cpuinfo string
	for c := 0; c < 8; c++ {
		cpuinfo += fmt.Sprintf("processor\t: %d\nvendor_id\t: AuthenticAMD\nmodel name\t: AMD EPYC 9654\nphysical id\t: %d\ncore id\t\t: %d\ncpu cores\t: 4\n\n", c, c/4, c%4)
	}
	write("proc/cpuinfo", cpuinfo)
	write("proc/meminfo", "MemTotal:       100663296 kB\nMemFree:         1000 kB\nHugepagesize:       2048 kB\nHugetlb:               0 kB\n")
	return root
}

func TestHostFromFixture(t *testing.T) {
	h, err := HostFromGHW(fixtureHost(t))
	if err != nil {
		t.Fatal(err)
	}
	if len(h.NUMANodes) != 2 || h.NUMANodes[0].CPUs != "0-3" || h.NUMANodes[1].CPUs != "4-7" {
		t.Fatalf("host %+v", h)
	}
	if h.NUMANodes[0].MemoryBytes != 64<<30 || h.NUMANodes[1].MemoryBytes != 32<<30 {
		t.Fatalf("memory %d %d", h.NUMANodes[0].MemoryBytes, h.NUMANodes[1].MemoryBytes)
	}
	if h.NodeOfCPUs("5-6") != 1 || h.NodeOfCPUs("0,1,2,7") != 0 || h.NodeOfCPUs("40") != -1 {
		t.Fatal("NodeOfCPUs")
	}
}

func TestHostOfThisMachine(t *testing.T) {
	h, err := HostFromGHW("/")
	if err != nil {
		t.Fatal(err)
	}
	if len(h.NUMANodes) == 0 || h.NUMANodes[0].CPUs == "" {
		t.Fatalf("host %+v", h)
	}
}

func TestWarnings(t *testing.T) {
	zero, one := 0, 1
	topo := &Topology{
		GPUs: []GPU{
			{Index: 0, NUMANode: &zero, CPUAffinity: "0-3", NVLinks: []NVLink{{Link: 0, Up: true}, {Link: 1, Up: false}}},
			{Index: 1, NUMANode: &one, CPUAffinity: "4-7"},
		},
		Matrix: [][]string{{"X", "SYS"}, {"SYS", "X"}},
		Host:   &Host{NUMANodes: []NUMANode{{ID: 0, CPUs: "0-3"}, {ID: 1, CPUs: "4-7"}}},
	}
	w := Warnings(topo, []Process{{PID: 42, Name: "python3", GPU: 0, CPUsAllowed: "4-7"}, {PID: 43, Name: "ok", GPU: 1, CPUsAllowed: "4-7"}})
	want := []string{
		"GPU0 and GPU1 meet only across sockets (SYS)",
		"GPU0: NVLink 1 is down",
		"process 42 (python3) on GPU0 (NUMA node 0) may run on CPUs 4-7 (mostly NUMA node 1): bind it with numactl --cpunodebind=0 --membind=0",
	}
	if len(w) != len(want) {
		t.Fatalf("warnings %q", w)
	}
	for i := range want {
		if !strings.HasPrefix(w[i], want[i]) {
			t.Errorf("warning %d = %q, want prefix %q", i, w[i], want[i])
		}
	}
}

func TestProcessCPUs(t *testing.T) {
	root := t.TempDir()
	if err := os.MkdirAll(filepath.Join(root, "77"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(root, "77", "comm"), []byte("trainer\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(root, "77", "status"), []byte("Name:\ttrainer\nCpus_allowed:\tff\nCpus_allowed_list:\t0-7\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if name, cpus := ProcessCPUs(root, 77); name != "trainer" || cpus != "0-7" {
		t.Fatalf("%q %q", name, cpus)
	}
	if _, cpus := ProcessCPUs(root, 78); cpus != "" {
		t.Fatal("a missing process has CPUs")
	}
}

// TestFractionOnRanges: the range arithmetic gives what counting CPU by
// CPU gives, with lists unsorted, overlapping and adjacent.
func TestFractionOnRanges(t *testing.T) {
	h := &Host{NUMANodes: []NUMANode{{ID: 0, CPUs: "0-3,8-11"}, {ID: 1, CPUs: "4-7,12-15,3"}}}
	byCPU := func(list string, id int) float64 {
		want, _ := ParseCPUList(list)
		var have []int
		for _, n := range h.NUMANodes {
			if n.ID == id {
				have, _ = ParseCPUList(n.CPUs)
			}
		}
		k := 0
		for _, c := range want {
			if slices.Contains(have, c) {
				k++
			}
		}
		return float64(k) / float64(len(want))
	}
	for _, list := range []string{"0-15", "3", "2-5,4-9", "11,10,9,8", "0-1,2-3,4", "12-15,0", "7-7,7", "100-101"} {
		for _, id := range []int{0, 1} {
			if got, want := h.FractionOn(list, id), byCPU(list, id); got != want {
				t.Errorf("FractionOn(%q, %d) = %v, counting CPUs gives %v", list, id, got, want)
			}
		}
	}
	if got := h.NodeOfCPUs("4-6,0"); got != 1 {
		t.Errorf("NodeOfCPUs: %d, want 1", got)
	}
}
