package recommend

import (
	"context"
	"slices"
	"strings"
	"testing"

	"github.com/seedance/seedance/analyze"
	"github.com/seedance/seedance/hwtopo"
)

// dgx returns an 8-GPU node whose GPUs all meet over NVLink (NV18).
func dgx(name, model string, price float64) *Node {
	n := &Node{Name: name, Model: model, PricePerHour: price}
	t := &hwtopo.Topology{}
	for i := 0; i < 8; i++ {
		n.GPUs = append(n.GPUs, GPU{MemBytes: 80 << 30})
		row, bw := make([]string, 8), make([]float64, 8)
		for j := range row {
			row[j], bw[j] = "NV18", 478
			if i == j {
				row[j], bw[j] = "X", 0
			}
		}
		t.Matrix, t.NVLinkGBps = append(t.Matrix, row), append(t.NVLinkGBps, bw)
	}
	n.Topology = t
	return n
}

// pcieBox is an 8-GPU node without NVLink: GPUs meet across sockets.
func pcieBox(name, model string) *Node {
	n := dgx(name, model, 10)
	for i := range n.Topology.Matrix {
		for j := range n.Topology.Matrix[i] {
			if i != j {
				n.Topology.Matrix[i][j], n.Topology.NVLinkGBps[i][j] = "SYS", 0
			}
		}
	}
	return n
}

// occupy marks the GPUs the running workloads hold.
func occupy(c *Cluster) {
	for _, w := range c.Workloads {
		if w.Pending {
			continue
		}
		for _, n := range c.Nodes {
			if n.Name == w.Node {
				for _, g := range w.GPUs {
					n.GPUs[g].UsedMilli += w.Milli
					n.GPUs[g].UsedMem += w.MemPerGPU
				}
			}
		}
	}
}

func pod(id, node string, gpus ...int) *Workload {
	return &Workload{ID: "ml/" + id, Name: id, Namespace: "ml", Kind: "pod", Node: node, GPUs: gpus, Count: len(gpus), Milli: milliPerGPU, MemPerGPU: 20 << 30}
}

func build(nodes []*Node, ws ...*Workload) *Cluster {
	c := &Cluster{Nodes: nodes, Workloads: ws}
	occupy(c)
	return c
}

func TestReleaseByConsolidation(t *testing.T) {
	// a holds 2 one-GPU pods, b holds 5 GPUs: a's pods move to b, a is freed;
	// c is idle and released without moves.
	c := build([]*Node{dgx("a", "H100", 40), dgx("b", "H100", 40), dgx("c", "H100", 40)},
		pod("p1", "a", 0), pod("p2", "a", 3), pod("big", "b", 0, 1, 2, 3, 4))
	plan, err := makePlan(context.Background(), c, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if strings.Join(plan.ReleasedNodes, ",") != "a,c" || plan.SavingsUSDPerHour != 80 || plan.SavingsUSDPerMonth != 80*730 {
		t.Fatalf("released %v, $%v/h", plan.ReleasedNodes, plan.SavingsUSDPerHour)
	}
	if len(plan.Moves) != 2 || plan.Moves[0].To != "b" || *plan.Moves[0].From != "a" || plan.Moves[0].SavingsUSDPerHour != 20 {
		t.Fatalf("moves %+v", plan.Moves)
	}
	// "big" stays: a workload on a node that stays does not move.
	for _, m := range plan.Moves {
		if m.Workload == "ml/big" {
			t.Fatal("moved a workload without a reason")
		}
	}
}

func TestNeverAWorseInterconnect(t *testing.T) {
	// A 2-GPU job on NVLink may not move to a PCIe-only box, even one with
	// room; a 1-GPU job may.
	nv := dgx("nv", "H100", 40)
	pc := pcieBox("pc", "H100")
	c := build([]*Node{nv, pc}, pod("pair", "nv", 0, 1), pod("keep", "pc", 0))
	plan, err := makePlan(context.Background(), c, Options{})
	if err != nil {
		t.Fatal(err)
	}
	for _, m := range plan.Moves {
		if m.Workload == "ml/pair" {
			t.Fatalf("NVLink pair moved to %s", m.To)
		}
	}
	// The single-GPU pod leaves the PCIe box for the NVLink node.
	if strings.Join(plan.ReleasedNodes, ",") != "pc" {
		t.Fatalf("released %v", plan.ReleasedNodes)
	}
}

func TestConstraints(t *testing.T) {
	pinned := pod("db", "a", 0)
	pinned.Pinned = true
	c := build([]*Node{dgx("a", "H100", 40), dgx("b", "H100", 40), dgx("x", "A100", 20)}, pinned, pod("w", "b", 0), pod("v", "x", 0))
	plan, _ := makePlan(context.Background(), c, Options{})
	for _, m := range plan.Moves {
		if m.Workload == "ml/db" || m.Workload == "ml/v" {
			t.Fatalf("moved %s (pinned, or to another model)", m.Workload)
		}
	}
	// With model changes allowed, the A100's pod may go to an H100.
	c = build([]*Node{dgx("a", "H100", 40), dgx("x", "A100", 20)}, pod("w", "a", 0), pod("v", "x", 0))
	plan, _ = makePlan(context.Background(), c, Options{AllowModelChange: true})
	if len(plan.ReleasedNodes) != 1 {
		t.Fatalf("released %v", plan.ReleasedNodes)
	}
	// Max moves per node.
	c = build([]*Node{dgx("a", "H100", 40), dgx("b", "H100", 40)}, pod("1", "a", 0), pod("2", "a", 1), pod("3", "b", 0, 1, 2))
	plan, _ = makePlan(context.Background(), c, Options{MaxMovesPerNode: 1})
	// a would need 2 evictions; b needs 1, so b is the one freed.
	if strings.Join(plan.ReleasedNodes, ",") != "b" || len(plan.Moves) != 1 || plan.Moves[0].Workload != "ml/3" {
		t.Fatalf("released %v moves %+v with one move allowed", plan.ReleasedNodes, plan.Moves)
	}
	// Memory: a pod holding 70 GB per GPU does not fit next to one of 20 GB
	// on a GPU... but whole GPUs never share, so it fits any free GPU of 80.
	big := pod("big", "a", 0)
	big.MemPerGPU = 90 << 30 // more than the target's GPUs have
	c = build([]*Node{dgx("a", "H100", 40), dgx("b", "H100", 40)}, big, pod("x", "b", 0, 1))
	c.Nodes[0].GPUs[0].MemBytes = 141 << 30
	plan, _ = makePlan(context.Background(), c, Options{})
	for _, m := range plan.Moves {
		if m.Workload == "ml/big" {
			t.Fatal("a pod moved to GPUs with too little memory")
		}
	}
}

func TestPendingPlacement(t *testing.T) {
	// Two pending pods wait on stalled node s; n has room and NVLink.
	pend := func(id string) *Workload {
		w := pod(id, "s")
		w.Pending, w.Count, w.GPUs = true, 2, nil
		return w
	}
	c := build([]*Node{pcieBox("s", "H100"), dgx("n", "H100", 40)}, pend("p1"), pend("p2"), pod("r", "n", 0))
	// By default pending work keeps the node its owner asked for (#26):
	// nothing moves it, s stays, and its 4 reserved GPUs are not given away.
	plan, err := makePlan(context.Background(), c, Options{})
	if err != nil {
		t.Fatal(err)
	}
	for _, m := range plan.Moves {
		if m.From == nil {
			t.Fatalf("a pending pod moved by default: %+v", m)
		}
		if m.To == "s" && len(m.GPUs) > 0 && m.GPUs[0] < 4 {
			t.Fatalf("a move took GPUs reserved for the pending pods: %+v", m)
		}
	}
	if slices.Contains(plan.ReleasedNodes, "s") {
		t.Fatalf("the node pending work waits on was released: %v", plan.ReleasedNodes)
	}
	c = build([]*Node{pcieBox("s", "H100"), dgx("n", "H100", 40)}, pend("p1"), pend("p2"), pod("r", "n", 0))
	plan, err = makePlan(context.Background(), c, Options{MovePending: true})
	if err != nil {
		t.Fatal(err)
	}
	if len(plan.Moves) != 2 || plan.Moves[0].From != nil || plan.Moves[0].To != "n" || !strings.Contains(plan.Moves[0].Reason, "a higher NVLink bandwidth than on s") {
		t.Fatalf("moves %+v", plan.Moves)
	}
	// s, idle and no longer needed by anyone, is released.
	if strings.Join(plan.ReleasedNodes, ",") != "s" {
		t.Fatalf("released %v", plan.ReleasedNodes)
	}
	// A pending pod that fits nowhere keeps its node.
	c = build([]*Node{pcieBox("s", "H100")}, pend("p1"))
	plan, _ = makePlan(context.Background(), c, Options{MovePending: true})
	if len(plan.ReleasedNodes) != 0 || len(plan.Unplaced) != 1 {
		t.Fatalf("released %v unplaced %v", plan.ReleasedNodes, plan.Unplaced)
	}
}

func TestSharing(t *testing.T) {
	frac := func(id, node string, gpu, milli int) *Workload {
		w := pod(id, node, gpu)
		w.Milli, w.MemPerGPU = milli, 4<<30
		return w
	}
	c := build([]*Node{dgx("a", "A100-SXM4-80GB", 20), dgx("b", "A100-SXM4-80GB", 20)},
		frac("s1", "a", 0, 300), frac("s2", "a", 1, 300), frac("s3", "b", 0, 300))
	plan, err := makePlan(context.Background(), c, Options{AllowSharing: true})
	if err != nil {
		t.Fatal(err)
	}
	if len(plan.ReleasedNodes) != 1 || plan.Moves[0].Sharing == nil || *plan.Moves[0].Sharing != "mig:1g.10gb" || plan.Moves[0].GPUs[0] != 0 {
		t.Fatalf("released %v moves %+v", plan.ReleasedNodes, plan.Moves)
	}
}

func TestVerifyCatchesOverbooking(t *testing.T) {
	c := build([]*Node{dgx("a", "H100", 40), dgx("b", "H100", 40)}, pod("x", "a", 0), pod("y", "b", 0))
	from := "a"
	bad := &Plan{Moves: []Move{{Workload: "ml/x", From: &from, To: "b", GPUs: []int{0}}}, ReleasedNodes: []string{"a"}}
	if err := verify(c, bad); err == nil || !strings.Contains(err.Error(), "over capacity") {
		t.Fatalf("err = %v", err)
	}
	bad = &Plan{ReleasedNodes: []string{"a"}}
	if err := verify(c, bad); err == nil || !strings.Contains(err.Error(), "still runs") {
		t.Fatalf("err = %v", err)
	}
}

// TestRunningJobsMoveOnlyWhenAllowed: a running batch job (a Slurm job)
// pins its node unless Options.MoveJobs (the Slurm dialect, which requeues
// it); a job pinned by label never moves.
func TestRunningJobsMoveOnlyWhenAllowed(t *testing.T) {
	job := func(id, node string, gpus ...int) *Workload {
		w := pod(id, node, gpus...)
		w.ID, w.Name, w.Namespace, w.Kind, w.Job = id, id, "", "job", true
		return w
	}
	cluster := func() *Cluster {
		return build([]*Node{dgx("a", "H100", 40), dgx("b", "H100", 40)}, job("4242", "a", 0), pod("big", "b", 0, 1, 2, 3))
	}
	plan, err := makePlan(context.Background(), cluster(), Options{})
	if err != nil {
		t.Fatal(err)
	}
	for _, m := range plan.Moves {
		if m.Workload == "4242" {
			t.Fatalf("a running job moved without MoveJobs: %+v", plan)
		}
	}
	if strings.Contains(strings.Join(plan.ReleasedNodes, ","), "a") {
		t.Fatalf("the job's node was released without MoveJobs: %+v", plan)
	}
	plan, err = makePlan(context.Background(), cluster(), Options{MoveJobs: true})
	if err != nil {
		t.Fatal(err)
	}
	if len(plan.Moves) != 1 || plan.Moves[0].Workload != "4242" || plan.Moves[0].To != "b" || strings.Join(plan.ReleasedNodes, ",") != "a" {
		t.Fatalf("with MoveJobs: %+v", plan)
	}
	c := cluster()
	c.Workloads[0].Pinned = true // seedance.io/pinned=true
	if plan, err = makePlan(context.Background(), c, Options{MoveJobs: true}); err != nil {
		t.Fatal(err)
	}
	for _, m := range plan.Moves {
		if m.Workload == "4242" {
			t.Fatalf("a pinned job moved: %+v", plan)
		}
	}
}

// TestNoMovesOntoDrainedNodes: a node the analysis advises draining takes
// no work: a's pods cannot go to b or c, so a stays, and b's work goes to
// a instead (b is being drained anyway); c, empty, is released.
func TestNoMovesOntoDrainedNodes(t *testing.T) {
	c := build([]*Node{dgx("a", "H100", 40), dgx("b", "H100", 40), dgx("c", "H100", 40)},
		pod("p1", "a", 0), pod("p2", "a", 3), pod("big", "b", 0, 1, 2, 3, 4))
	plan, err := makePlan(context.Background(), c, Options{Avoid: map[string]bool{"b": true, "c": true}})
	if err != nil {
		t.Fatal(err)
	}
	for _, m := range plan.Moves {
		if m.To != "a" {
			t.Errorf("a move onto a drained node: %+v", m)
		}
	}
	if strings.Join(plan.ReleasedNodes, ",") != "b,c" {
		t.Fatalf("moves %+v, released %v", plan.Moves, plan.ReleasedNodes)
	}
	// Through PlanReport, the release-node suggestions are what is avoided.
	if got := draining(&analyze.Report{Suggestions: []analyze.Suggestion{{Kind: analyze.SuggestReleaseNode, Node: "b"}, {Kind: analyze.SuggestScheduleNode, Node: "c"}}}); !got["b"] || got["c"] {
		t.Errorf("draining: %v", got)
	}
}

// TestStaleNodesKept (#26): a node whose data is stale is neither released
// nor given work.
func TestStaleNodesKept(t *testing.T) {
	c := build([]*Node{dgx("a", "H100", 40), dgx("b", "H100", 40), dgx("c", "H100", 40)}, pod("p1", "a", 0), pod("big", "b", 0, 1, 2, 3, 4))
	plan, err := makePlan(context.Background(), c, Options{Keep: map[string]bool{"c": true, "b": true}})
	if err != nil {
		t.Fatal(err)
	}
	if len(plan.ReleasedNodes) != 0 || len(plan.Moves) != 0 {
		t.Fatalf("released %v moves %+v: a stale node was released or took work", plan.ReleasedNodes, plan.Moves)
	}
}
