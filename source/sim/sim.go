package sim

import (
	"context"
	"fmt"
	"math"
	"strings"
	"time"

	"github.com/seedance/seedance/internal/nvapi"
	"github.com/seedance/seedance/profile"
	"github.com/seedance/seedance/source"
	"github.com/seedance/seedance/source/gpu"
)

// Scenarios of the simulated cluster.
const (
	ScenarioMixed      = "mixed"
	ScenarioIdle       = "idle"
	ScenarioBusy       = "busy"
	ScenarioFragmented = "fragmented"
)

// Scenarios lists the scenario names.
var Scenarios = []string{ScenarioMixed, ScenarioIdle, ScenarioBusy, ScenarioFragmented}

// DefaultStart is where a simulated run's clock starts unless told
// otherwise, so that the same seed gives the same profile byte for byte.
var DefaultStart = time.Date(2026, 1, 5, 9, 0, 0, 0, time.UTC)

// Options configures the simulated cluster.
type Options struct {
	Nodes    int
	Scenario string
	Seed     int64
	// Clock drives the telemetry; Start is the time telemetry counts from.
	Clock source.Clock
	Start time.Time
}

// simNodeKind is the plan of one simulated node.
type simNodeKind struct {
	hw       string // a100, h100, h200
	roles    [8]simRole
	pods     []simPod // running pods and the GPUs they hold
	pending  []simPod
	noFields int  // index of a GPU whose counters are unsupported, or -1
	pcie     bool // a PCIe server: no NVLink
}

type simPod struct {
	app   string
	gpus  []int
	cpus  string // Cpus_allowed_list; "" for the GPUs' own NUMA node
	count int    // GPUs a pending pod requests (1 when 0)
}

func all(r simRole) (a [8]simRole) {
	for i := range a {
		a[i] = r
	}
	return a
}

func pods1(app string, n int) []simPod {
	var out []simPod
	for i := 0; i < n; i++ {
		out = append(out, simPod{app: app, gpus: []int{i}})
	}
	return out
}

var (
	kindTrainH100     = simNodeKind{hw: "h100", roles: all(roleTrain), pods: []simPod{{app: "llama-70b-train", gpus: []int{0, 1, 2, 3, 4, 5, 6, 7}, cpus: "0-207"}}, noFields: -1}
	kindTrainH200Full = simNodeKind{hw: "h200", roles: all(roleTrain), pods: []simPod{{app: "mixtral-8x7b-train", gpus: []int{0, 1, 2, 3, 4, 5, 6, 7}, cpus: "0-207"}}, noFields: -1}
	// A 4-GPU fine-tuning job on half of a DGX H200; GPUs 4–7 are free.
	kindTrainH200 = simNodeKind{hw: "h200", roles: [8]simRole{roleTrain, roleTrain, roleTrain, roleTrain}, pods: []simPod{{app: "mixtral-8x7b-train", gpus: []int{0, 1, 2, 3}}}, noFields: -1}
	kindInferA100 = simNodeKind{hw: "a100", roles: all(roleInfer), pods: pods1("llama-7b-infer", 8), noFields: 7}
	// Six one-GPU servers, and one two-GPU server spread over both NUMA nodes.
	kindInferH100 = simNodeKind{hw: "h100", roles: all(roleInfer), pods: append(pods1("llama-13b-infer", 3),
		simPod{app: "llama-70b-infer", gpus: []int{3, 4}}, simPod{app: "llama-13b-infer", gpus: []int{5}},
		simPod{app: "llama-13b-infer", gpus: []int{6}}, simPod{app: "llama-13b-infer", gpus: []int{7}}), noFields: -1}
	kindSpiky = simNodeKind{hw: "a100", roles: all(roleSpiky), pods: []simPod{{app: "nightly-eval", gpus: []int{0, 1, 2, 3}}, {app: "nightly-eval", gpus: []int{4, 5, 6, 7}}}, noFields: -1}
	// A PCIe H200 server (no NVLink) where two 2-GPU servers wait.
	kindStalled = simNodeKind{hw: "h200", roles: all(roleIdle), pcie: true, pending: []simPod{{app: "llama-7b-infer", count: 2}, {app: "llama-7b-infer", count: 2}}, noFields: -1}
	// A notebook on GPU 0 (NUMA node 0) whose CPUs are on NUMA node 1.
	kindOneBusy  = simNodeKind{hw: "h100", roles: [8]simRole{roleTrain}, pods: []simPod{{app: "jupyter-alice", gpus: []int{0}, cpus: "52-103,156-207"}}, noFields: -1}
	kindIdleA100 = simNodeKind{hw: "a100", roles: all(roleIdle), noFields: -1}
	// The fragmented scenario (docs/simulator.md): H100s running 4-, 3- and
	// 2-GPU work, whose free GPUs stand alone on six nodes of eight.
	kindFragA = simNodeKind{hw: "h100", roles: [8]simRole{roleTrain, roleTrain, roleTrain, roleTrain, roleSpiky, roleSpiky, roleSpiky},
		pods: []simPod{{app: "llama-8b-finetune-train", gpus: []int{0, 1, 2, 3}}, {app: "batch-eval", gpus: []int{4, 5, 6}}}, noFields: -1}
	kindFragB = simNodeKind{hw: "h100", roles: [8]simRole{roleSpiky, roleSpiky, roleSpiky, roleIdle, roleTrain, roleTrain, roleTrain, roleTrain},
		pods: []simPod{{app: "batch-eval", gpus: []int{0, 1, 2}}, {app: "llama-8b-finetune-train", gpus: []int{4, 5, 6, 7}}}, noFields: -1}
	kindFragC = simNodeKind{hw: "h100", roles: [8]simRole{roleSpiky, roleSpiky, roleSpiky, roleInfer, roleInfer, roleIdle, roleInfer, roleInfer},
		pods: []simPod{{app: "batch-eval", gpus: []int{0, 1, 2}}, {app: "llama-70b-infer", gpus: []int{3, 4}}, {app: "llama-70b-infer", gpus: []int{6, 7}}}, noFields: -1}
	kindFragD = simNodeKind{hw: "h100", roles: [8]simRole{roleTrain, roleTrain, roleTrain, roleTrain, roleInfer, roleInfer},
		pods: []simPod{{app: "llama-8b-finetune-train", gpus: []int{0, 1, 2, 3}}, {app: "llama-70b-infer", gpus: []int{4, 5}}}, noFields: -1}
	kindFragE = simNodeKind{hw: "h100", roles: [8]simRole{roleSpiky, roleSpiky, roleSpiky},
		pods: []simPod{{app: "batch-eval", gpus: []int{0, 1, 2}}}, noFields: -1}
	kindIdleH100 = simNodeKind{hw: "h100", roles: all(roleIdle), noFields: -1}
)

// scenarioPlan returns the kind of each node. The mixed cluster cycles through
// eight kinds of node so that every finding seedance makes shows up once.
func scenarioPlan(scenario string, n int) ([]simNodeKind, error) {
	var cycle []simNodeKind
	switch scenario {
	case ScenarioMixed:
		cycle = []simNodeKind{kindTrainH100, kindInferA100, kindSpiky, kindStalled, kindOneBusy, kindTrainH200, kindInferH100, kindIdleA100}
	case ScenarioIdle:
		cycle = []simNodeKind{kindIdleH100, kindIdleA100}
	case ScenarioBusy:
		cycle = []simNodeKind{kindTrainH100, kindTrainH200Full}
	case ScenarioFragmented:
		cycle = []simNodeKind{kindFragA, kindFragB, kindFragC, kindFragD, kindFragE, kindFragA, kindFragB, kindFragC}
	default:
		return nil, fmt.Errorf("unknown simulation scenario %q (choose %s)", scenario, strings.Join(Scenarios, ", "))
	}
	out := make([]simNodeKind, n)
	for i := range out {
		out[i] = cycle[i%len(cycle)]
	}
	return out, nil
}

// simHardware is each kind of simulated server: its GPU model's name and
// memory (as NVML reports them: go-nvml's mock inventory of the DGX A100,
// H100 and H200), its telemetry model and its cloud instance type.
var simHardware = map[string]struct {
	name         string
	memoryMB     uint64
	model        simModel
	instanceType string
}{
	"a100": {"NVIDIA A100-SXM4-80GB", 81920, simModel{idleW: 55, maxW: 400, idleMHz: 210, maxMHz: 1410, idleTemp: 31, nvlinkBytesPerSec: 2.4e11}, "p4de.24xlarge"},
	"h100": {"NVIDIA H100 80GB HBM3", 81920, simModel{idleW: 69, maxW: 700, idleMHz: 345, maxMHz: 1980, idleTemp: 33, nvlinkBytesPerSec: 3.6e11, gpm: true}, "p5.48xlarge"},
	"h200": {"NVIDIA H200 141GB HBM3e", 144384, simModel{idleW: 75, maxW: 700, idleMHz: 345, maxMHz: 1980, idleTemp: 34, nvlinkBytesPerSec: 3.6e11, gpm: true}, "p5e.48xlarge"},
}

// Sim is a simulated cluster: one go-nvml mock server per node, with telemetry
// functions installed on its devices, sampled by the same gpu.Node code that
// samples real GPUs.
type Sim struct {
	nodes  []*gpu.Node
	clock  source.Clock
	served map[string]*simServed // the serving pods' work counters
}

// newSim is a simulated cluster of the nodes, on the clock.
func newSim(clock source.Clock, nodes ...*gpu.Node) *Sim {
	return &Sim{nodes: nodes, clock: clock, served: map[string]*simServed{}}
}

// Open builds the simulated cluster.
func Open(o Options) (*Sim, error) {
	if o.Nodes < 1 {
		return nil, fmt.Errorf("--sim-nodes must be at least 1, got %d", o.Nodes)
	}
	plan, err := scenarioPlan(o.Scenario, o.Nodes)
	if err != nil {
		return nil, err
	}
	seed := uint64(o.Seed)
	s := newSim(o.Clock)
	for ni, kind := range plan {
		node, err := openSimNode(o, seed, ni, kind)
		if err != nil {
			s.Close()
			return nil, err
		}
		s.nodes = append(s.nodes, node)
	}
	return s, nil
}

func openSimNode(o Options, seed uint64, ni int, kind simNodeKind) (*gpu.Node, error) {
	hw := simHardware[kind.hw]
	name := fmt.Sprintf("node-gpu-%02d", ni+1)
	topo := simTopologies[kind.hw]
	if kind.pcie {
		topo.links = 0
	}
	procs := simProcs{}
	lib := &simLib{}
	for gi := 0; gi < 8; gi++ {
		g := &simGPU{clock: o.Clock, start: o.Start, seed: seed, node: ni, index: gi,
			model: hw.model, role: kind.roles[gi], memTotal: float64(hw.memoryMB) * (1 << 20),
			noFields: gi == kind.noFields}
		// Energy counted since the driver loaded, some days before the run.
		g.energyMJ = math.Floor(hash01(g.seed, uint64(g.node), uint64(g.index), 9, 0) * 5e10)
		numa := gi / 4
		lib.devs = append(lib.devs, &simDevice{g: g, name: hw.name, uuid: simUUID(seed, ni, gi),
			busID: fmt.Sprintf("0000:%02x:00.0", simBusIDs[gi]), numa: numa, cpus: mask(topo.cpus[numa]), topo: topo})
	}
	for pi, pod := range kind.pods {
		info := simPodInfo(seed, ni, pi, pod.app)
		info.CPUsAllowed = pod.cpus
		if info.CPUsAllowed == "" && len(pod.gpus) > 0 {
			info.CPUsAllowed = simTopologies[kind.hw].cpus[pod.gpus[0]/4]
		}
		pid := 4000 + 100*ni + pi
		procs[pid] = info
		for _, gi := range pod.gpus {
			g := lib.devs[gi].g
			g.procs = append(g.procs, nvapi.ProcessInfo{Pid: uint32(pid)})
		}
	}
	var pending []profile.Workload
	for pi, pod := range kind.pending {
		info := simPodInfo(seed, ni, 50+pi, pod.app)
		w := info.Workload(0)
		w.State, w.GPUCount = profile.StatePending, max(1, pod.count)
		w.Labels["app"] = pod.app
		pending = append(pending, *w)
	}
	labels := map[string]string{
		"nvidia.com/gpu.product":           modelLabel(hw.name),
		"nvidia.com/gpu.count":             "8",
		"node.kubernetes.io/instance-type": hw.instanceType,
		"kubernetes.io/hostname":           name,
	}
	return gpu.OpenNode(lib, gpu.NodeOptions{
		Name: name, Labels: labels, Procs: procs,
		Pending:  func() []profile.Workload { return pending },
		Topology: true, Host: topo.host(),
	})
}

// The PCI bus numbers of the eight GPUs of a DGX H100, as nvidia-smi shows them.
var simBusIDs = [8]int{0x18, 0x2a, 0x3a, 0x5d, 0x9a, 0xab, 0xba, 0xdb}

func simUUID(seed uint64, node, gpu int) string {
	a := splitmix(seed ^ uint64(node)<<32 ^ uint64(gpu)<<8 ^ 0x5eed)
	b := splitmix(a)
	return fmt.Sprintf("GPU-%08x-%04x-%04x-%04x-%012x", uint32(a>>32), uint16(a>>16), uint16(a), uint16(b>>48), b&0xffffffffffff)
}

const podAlphabet = "bcdfghjklmnpqrstvwxz2456789"

func simPodInfo(seed uint64, node, pod int, app string) gpu.ProcInfo {
	h := splitmix(seed ^ uint64(node)<<20 ^ uint64(pod)<<4 ^ 0x90d)
	suffix := make([]byte, 5)
	for i := range suffix {
		suffix[i] = podAlphabet[h%uint64(len(podAlphabet))]
		h /= uint64(len(podAlphabet))
	}
	// Six hex digits, as a ReplicaSet hash: zero-padded when the number is
	// small (the ids that were 6 digits or more are as they always were).
	rs := fmt.Sprintf("%06x", splitmix(h)&0xfffffff)
	u := splitmix(h ^ 0xabc)
	v := splitmix(u)
	ns, team := simOwner(app)
	return gpu.ProcInfo{
		Name:      "python3",
		PodUID:    fmt.Sprintf("%08x-%04x-4%03x-8%03x-%012x", uint32(u>>32), uint16(u>>16), uint16(u)&0xfff, uint16(v>>48)&0xfff, v&0xffffffffffff),
		Namespace: ns,
		Pod:       app + "-" + rs[:6] + "-" + string(suffix),
		Container: fmt.Sprintf("%016x", splitmix(v)),
		Labels:    map[string]string{"team": team, profile.ControllerLabel: simController(app)},
	}
}

// simController is the controller of a simulated app's pods, as
// kube-state-metrics' kube_pod_owner names it: serving apps are
// Deployments, training and evaluation runs Jobs, notebooks StatefulSets.
func simController(app string) string {
	switch {
	case strings.HasSuffix(app, "-infer"):
		return "Deployment/" + app
	case strings.HasPrefix(app, "jupyter-"):
		return "StatefulSet/" + app
	}
	return "Job/" + app
}

// simOwner is the namespace and team of a simulated app, so that every
// attribution view (--group-by namespace, team=team) has several groups.
func simOwner(app string) (namespace, team string) {
	switch {
	case strings.HasSuffix(app, "-train"):
		return "training", "research"
	case strings.HasSuffix(app, "-infer"):
		return "inference", "serving"
	case strings.HasPrefix(app, "jupyter-"):
		return "notebooks", "research"
	}
	return "eval", "platform"
}

// simProcs resolves the simulated pods' process ids.
type simProcs map[int]gpu.ProcInfo

// Resolve implements ProcResolver.
func (s simProcs) Resolve(pid int) gpu.ProcInfo { return s[pid] }

// Name implements Source.
func (s *Sim) Name() string { return profile.SourceSim }

// Inventory implements Source.
func (s *Sim) Inventory() []profile.Node {
	var out []profile.Node
	for _, n := range s.nodes {
		out = append(out, n.Inventory()...)
	}
	return out
}

// Sample implements Source.
func (s *Sim) Sample(ctx context.Context) ([][]source.Row, [][]profile.Workload) {
	var rows [][]source.Row
	var wls [][]profile.Workload
	for _, n := range s.nodes {
		r, w := n.Sample(ctx)
		for i := range w {
			setQueues(w[i])
			s.addWork(r[i], w[i])
		}
		rows = append(rows, r...)
		wls = append(wls, w...)
	}
	return rows, wls
}

// Close implements Source.
func (s *Sim) Close() error {
	for _, n := range s.nodes {
		n.Close()
	}
	return nil
}

// Clock is a clock that jumps to the time it is asked to wait for.
type Clock struct{ t time.Time }

// NewClock returns a clock that starts at t.
func NewClock(t time.Time) *Clock { return &Clock{t: t} }

// Now returns the simulated time.
func (c *Clock) Now() time.Time { return c.t }

// WaitUntil moves the simulated time forward to t at once.
func (c *Clock) WaitUntil(ctx context.Context, t time.Time) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	if t.After(c.t) {
		c.t = t
	}
	return nil
}

// Record samples a simulated cluster of o (whose Clock and Start are set
// here) every interval for d of simulated time, at once: the profile that
// "seedance profile --source sim" writes, for tests and benchmarks.
func Record(o Options, interval, d time.Duration, gen profile.Generator) (*profile.Profile, error) {
	clk := NewClock(o.Start)
	if o.Start.IsZero() {
		clk, o.Start = NewClock(DefaultStart), DefaultStart
	}
	o.Clock = clk
	s, err := Open(o)
	if err != nil {
		return nil, err
	}
	defer s.Close()
	return source.Record(context.Background(), s, source.RecordOptions{Interval: interval, Duration: d, Clock: clk, Generator: gen})
}
