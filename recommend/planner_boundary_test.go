package recommend

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/seedance/seedance/hwtopo"
)

// The cases below are computed by hand at each boundary of the planner:
// the evacuation order and its tie-break, exact fits (GPU count, memory,
// compute share), the rollback of a node that cannot be emptied, the scan
// limit and the bandwidth tie-break. Each one fails when the comparison it
// names is moved by one (mutation testing, docs/testing.md).

// box is a node of n GPUs of memGiB each; links, when given, is its
// matrix, row by row ("X NV18 SYS" …), with 478 GB/s per NV link.
func box(name string, n int, memGiB uint64, links ...string) *Node {
	node := &Node{Name: name, Model: "H100", PricePerHour: 10}
	for range n {
		node.GPUs = append(node.GPUs, GPU{MemBytes: memGiB << 30})
	}
	if len(links) > 0 {
		t := &hwtopo.Topology{}
		for _, row := range links {
			cells := strings.Fields(row)
			bw := make([]float64, len(cells))
			for j, c := range cells {
				if strings.HasPrefix(c, "NV") {
					bw[j] = 478
				}
			}
			t.Matrix, t.NVLinkGBps = append(t.Matrix, cells), append(t.NVLinkGBps, bw)
		}
		node.Topology = t
	}
	return node
}

// share is a workload using milli of one GPU with memGiB on it.
func share(id, node string, gpu, milli int, memGiB uint64) *Workload {
	w := pod(id, node, gpu)
	w.Milli, w.MemPerGPU = milli, memGiB<<30
	return w
}

func pinned(w *Workload) *Workload { w.Pinned = true; return w }

func withMem(w *Workload, memGiB uint64) *Workload { w.MemPerGPU = memGiB << 30; return w }

// outline is a plan in one line: released nodes, then each move as
// workload from>to gpus [sharing].
func outline(p *Plan) string {
	var b strings.Builder
	fmt.Fprintf(&b, "released=%s", strings.Join(p.ReleasedNodes, ","))
	for _, m := range p.Moves {
		from := "-"
		if m.From != nil {
			from = *m.From
		}
		fmt.Fprintf(&b, " %s:%s>%s%v", m.Name, from, m.To, m.GPUs)
		if m.Sharing != nil {
			b.WriteString(":" + *m.Sharing)
		}
	}
	return b.String()
}

func TestPlannerBoundaries(t *testing.T) {
	nv4 := []string{"X NV18 NV18 NV18", "NV18 X NV18 NV18", "NV18 NV18 X NV18", "NV18 NV18 NV18 X"}
	// GPUs 0 and 2 meet over NVLink; 1 and 3 meet the others across sockets.
	split4 := []string{"X SYS NV18 SYS", "SYS X SYS SYS", "NV18 SYS X SYS", "SYS SYS SYS X"}
	cases := []struct {
		name  string
		nodes []*Node
		ws    []*Workload
		o     Options
		want  string
	}{
		{"equal use: evacuated by name", []*Node{box("a", 2, 80), box("b", 2, 80)},
			[]*Workload{pod("p1", "a", 0), pod("p2", "b", 0)}, Options{},
			"released=a p1:a>b[1]"},
		{"lighter node first whatever the names", []*Node{box("a", 4, 80), box("b", 4, 80)},
			[]*Workload{pod("p1", "a", 0), pod("p2", "a", 1), pod("p3", "b", 0)}, Options{},
			"released=b p3:b>a[2]"},
		{"equal workloads move in their order", []*Node{box("a", 2, 80), box("b", 4, 80)},
			[]*Workload{pod("p1", "a", 0), pod("p2", "a", 1), pod("big", "b", 0, 1)}, Options{},
			"released=a p1:a>b[2] p2:a>b[3]"},
		{"biggest first: the small one would take a large-memory GPU", []*Node{box("s", 4, 80), withGPUMem(box("t", 4, 80), 80, 80, 40, 80)},
			// t's free GPUs: 0 and 1 (80 GiB), 2 (40 GiB). The 1-GPU pod
			// placed first would take GPU 0, leaving the 60 GiB pair one
			// GPU with room.
			[]*Workload{pod("a", "s", 0), withMem(pod("b", "s", 1, 2), 60), pinned(pod("t3", "t", 3))}, Options{},
			"released=s b:s>t[0 1] a:s>t[2]"},
		{"rollback frees what was placed before the failure", []*Node{box("s", 4, 80), box("t", 4, 40), box("u", 4, 40)},
			[]*Workload{pod("w1", "s", 0, 1), withMem(pod("w2", "s", 2), 70), pinned(pod("t1", "t", 0, 1)),
				pod("u1", "u", 0, 1), pod("u2", "u", 2)}, Options{},
			"released=u u1:u>t[2 3] u2:u>s[3]"},
		{"exact memory fits a whole GPU", []*Node{box("a", 1, 80), box("b", 2, 40)},
			[]*Workload{withMem(pod("p", "a", 0), 40), pinned(pod("b0", "b", 0))}, Options{},
			"released=a p:a>b[1]"},
		{"a pair keeps NVLink: not the first two free GPUs", []*Node{box("a", 2, 80, "X NV18", "NV18 X"), box("b", 4, 80, split4...)},
			[]*Workload{pod("pair", "a", 0, 1), pinned(pod("b3", "b", 3))}, Options{},
			"released=a pair:a>b[0 2]"},
		{"a pair without topology fits a node without topology", []*Node{box("a", 2, 80), box("b", 3, 80)},
			[]*Workload{pod("pair", "a", 0, 1), pinned(pod("b0", "b", 0))}, Options{},
			"released=a pair:a>b[1 2]"},
		{"a partial topology constrains nothing", []*Node{box("a", 4, 80, "X NV18", "NV18 X"), box("b", 4, 80)},
			[]*Workload{pod("w", "a", 1, 2), pinned(pod("b0", "b", 0))}, Options{},
			"released=a w:a>b[1 2]"},
		{"the most bandwidth among nodes of one free count", []*Node{box("src", 3, 80), box("pc", 4, 80, pcie4()...), box("nv", 4, 80, nv4...)},
			[]*Workload{pod("w", "src", 0, 1), pinned(pod("pc0", "pc", 0, 1)), pinned(pod("nv0", "nv", 0, 1))}, Options{},
			"released=src w:src>nv[2 3]"},
		{"equal bandwidth: the first node", []*Node{box("src", 3, 80), box("n1", 4, 80, nv4...), box("n2", 4, 80, nv4...)},
			[]*Workload{pod("w", "src", 0, 1), pinned(pod("x", "n1", 0, 1)), pinned(pod("y", "n2", 0, 1))}, Options{},
			"released=src w:src>n1[2 3]"},
		{"the scan stops at its bound", []*Node{box("src", 3, 80), box("pc", 4, 80, pcie4()...), box("nv", 4, 80, nv4...)},
			[]*Workload{pod("w", "src", 0, 1), pinned(pod("pc0", "pc", 0, 1)), pinned(pod("nv0", "nv", 0, 1))}, Options{Scan: 1},
			"released=src w:src>pc[2 3]"},
		{"a share fills a GPU exactly", []*Node{box("a", 1, 80), box("b", 1, 80)},
			[]*Workload{pinned(share("a0", "a", 0, 500, 50)), share("y", "b", 0, 500, 30)}, Options{AllowSharing: true},
			"released=b y:b>a[0]:mig:3g.40gb"},
		{"a share over the GPU does not fit", []*Node{box("a", 1, 80), box("b", 1, 80)},
			[]*Workload{pinned(share("a0", "a", 0, 500, 50)), share("y", "b", 0, 600, 30)}, Options{AllowSharing: true},
			"released="},
		{"a share's memory over the GPU's does not fit", []*Node{box("a", 1, 80), box("b", 1, 80)},
			[]*Workload{pinned(share("a0", "a", 0, 500, 50)), share("y", "b", 0, 300, 31)}, Options{AllowSharing: true},
			"released="},
		{"a share goes to the partly used GPU, not a free one", []*Node{box("a", 2, 80), box("b", 1, 80)},
			[]*Workload{pinned(share("a1", "a", 1, 500, 50)), share("y", "b", 0, 300, 30)}, Options{AllowSharing: true},
			"released=b y:b>a[1]:mig:3g.40gb"},
		{"two shares stack on one GPU", []*Node{box("a", 1, 80), box("b", 2, 80)},
			[]*Workload{pinned(share("a0", "a", 0, 200, 10)), share("y1", "b", 0, 300, 10), share("y2", "b", 1, 300, 10)}, Options{AllowSharing: true},
			"released=b y1:b>a[0]:mig:2g.20gb y2:b>a[0]:mig:2g.20gb"},
		{"a share placed on a free GPU says how it shares", []*Node{box("a", 2, 80), box("b", 2, 80)},
			[]*Workload{pinned(pod("a0", "a", 0)), share("y", "b", 0, 300, 30)}, Options{AllowSharing: true},
			"released=b y:b>a[1]:mig:3g.40gb"},
		{"a whole GPU moved with sharing allowed shares nothing", []*Node{box("a", 2, 80), box("b", 2, 80)},
			[]*Workload{pinned(pod("a0", "a", 0)), pod("y", "b", 0)}, Options{AllowSharing: true},
			"released=b y:b>a[1]"},
		{"a rolled-back share gives back only its part", []*Node{box("a", 1, 80), box("b", 2, 80), box("v", 1, 80)},
			[]*Workload{pinned(share("a0", "a", 0, 200, 10)), share("y1", "b", 0, 300, 10), share("y2", "b", 1, 100, 75), pod("v1", "v", 0)},
			Options{AllowSharing: true},
			"released="},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			plan, err := makePlan(context.Background(), build(c.nodes, c.ws...), c.o)
			if err != nil {
				t.Fatal(err)
			}
			if got := outline(plan); got != c.want {
				t.Errorf("got  %s\nwant %s", got, c.want)
			}
		})
	}
}

// withGPUMem sets each GPU's memory, in GiB.
func withGPUMem(n *Node, memGiB ...uint64) *Node {
	for i, m := range memGiB {
		n.GPUs[i].MemBytes = m << 30
	}
	return n
}

func pcie4() []string {
	return []string{"X SYS SYS SYS", "SYS X SYS SYS", "SYS SYS X SYS", "SYS SYS SYS X"}
}

// TestPendingReasons: the reason of a placed pending pod names the NVLink
// bandwidth it gets only when there is some, and "higher" only when it is
// more than the node it waits on has (equal is not higher).
func TestPendingReasons(t *testing.T) {
	nv4 := []string{"X NV18 NV18 NV18", "NV18 X NV18 NV18", "NV18 NV18 X NV18", "NV18 NV18 NV18 X"}
	pend := func(node string) *Workload {
		w := pod("p", node)
		w.Pending, w.Count = true, 2
		return w
	}
	cases := []struct {
		name    string
		src, to *Node
		reason  string
		higher  bool
	}{
		{"equal bandwidth", box("s", 4, 80, nv4...), box("n", 4, 80, nv4...), "pending on s; n has the GPUs with 478 GB/s NVLink between them", false},
		{"from a node without topology", box("s", 4, 80), box("n", 4, 80, nv4...), "pending on s; n has the GPUs with 478 GB/s NVLink between them, a higher NVLink bandwidth than on s", true},
		{"to a node without NVLink", box("s", 4, 80), box("n", 4, 80), "pending on s; n has room", false},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			plan, err := makePlan(context.Background(), build([]*Node{c.src, c.to}, pend("s"), pinned(pod("n0", "n", 0))), Options{MovePending: true})
			if err != nil {
				t.Fatal(err)
			}
			if len(plan.Moves) != 1 || plan.Moves[0].Reason != c.reason || plan.Moves[0].HigherNVLink != c.higher {
				t.Fatalf("moves %+v", plan.Moves)
			}
		})
	}
}

// TestLinkRankOfByHand: the worst link among a workload's GPUs, pairs the
// topology does not cover left out, in whatever order the GPUs come.
func TestLinkRankOfByHand(t *testing.T) {
	t2 := box("a", 4, 80, "X NV18", "NV18 X").Topology
	for _, c := range []struct {
		gpus []int
		want int
	}{{[]int{0, 1}, hwtopo.LinkRank("NV18")}, {[]int{1, 0}, hwtopo.LinkRank("NV18")}, {[]int{2, 1}, 0}, {[]int{1, 2}, 0}, {[]int{1}, 0}} {
		if got := linkRankOf(t2, c.gpus); got != c.want {
			t.Errorf("linkRankOf(%v) = %d, want %d", c.gpus, got, c.want)
		}
	}
	if got := linkRankOf(nil, []int{0, 1}); got != 0 {
		t.Errorf("no topology: %d", got)
	}
}
