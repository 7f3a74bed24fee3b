package profile

import (
	"math"
	"regexp"
	"strconv"
	"strings"
	"time"

	"github.com/seedance/seedance/hwtopo"
)

// SchemaVersion is the value of "schema_version" that this package writes.
const SchemaVersion = "seedance.profile/v1.3"

// Source names used in the "source" field.
const (
	SourceNVML       = "nvml"
	SourceSim        = "sim"
	SourcePrometheus = "prometheus"
	SourceScrape     = "scrape"
)

// Profile is one profiling run: the nodes, their GPUs with columnar time series,
// and the workloads seen on them.
type Profile struct {
	SchemaVersion string    `json:"schema_version"`
	Generator     Generator `json:"generator"`
	Source        string    `json:"source,omitempty"`
	// Cluster names the cluster the profile is of, where the source knows
	// it (Prometheus: the cluster label every series shares); the ledger
	// counts the profile as that cluster's unless told another.
	Cluster   string    `json:"cluster,omitempty"`
	StartedAt time.Time `json:"started_at"`
	EndedAt   time.Time `json:"ended_at"`
	IntervalS float64   `json:"interval_s"`
	// ContextS is how far before started_at and after ended_at the source
	// read context samples (Frame): a sample outside the window by more
	// is an error.
	ContextS float64 `json:"context_s,omitempty"`
	// Complete is false when the run was interrupted or failed part-way.
	Complete bool `json:"complete"`
	// PendingUnknown, when set, says why the source could not see the work
	// waiting for GPUs (no kube-state-metrics series matched, squeue
	// failed): readers must not advise releasing or draining a node, since
	// work may be waiting for it.
	PendingUnknown string `json:"pending_unknown,omitempty"`
	// Unscheduled is the work that waits for GPUs on no node yet: pods
	// pending with no node (kube-state-metrics), Slurm jobs pending for
	// any node of a partition. It counts against the idle capacity that
	// could run it (docs/analysis.md, Demand not on a node).
	Unscheduled []Workload `json:"unscheduled,omitempty"`
	// Queues are the queues and accounts that hold GPU quota, with their
	// workloads' reservations and waits (v1.3; docs/queues.md).
	Queues []Queue `json:"queues,omitempty"`
	// Notes say what a source could not see (a partial answer, pods not
	// scheduled on any node); readers show them as warnings, but those
	// that inform (IsInfo) as notes.
	Notes []string `json:"notes,omitempty"`
	Nodes []Node   `json:"nodes"`
}

// Generator names the program that wrote a profile.
type Generator struct {
	Name    string `json:"name"`
	Version string `json:"version,omitempty"`
}

// Node is one machine.
type Node struct {
	Name      string            `json:"name"`
	Labels    map[string]string `json:"labels,omitempty"`
	GPUs      []GPU             `json:"gpus"`
	Workloads []Workload        `json:"workloads,omitempty"`
	// Topology is the node's interconnect and NUMA layout (nvml and sim
	// sources; docs/profile-format.md).
	Topology *hwtopo.Topology `json:"topology,omitempty"`
}

// GPU is one physical GPU or one MIG device.
type GPU struct {
	Index            int    `json:"index"`
	UUID             string `json:"uuid"`
	Model            string `json:"model,omitempty"`
	MemoryTotalBytes uint64 `json:"memory_total_bytes,omitempty"`
	PCIBusID         string `json:"pci_bus_id,omitempty"`
	NUMANode         *int   `json:"numa_node,omitempty"`
	// IntervalS is this GPU's own sampling interval when it differs from
	// the profile's (targets scraped at different intervals); 0: the
	// profile's interval_s.
	IntervalS   float64       `json:"interval_s,omitempty"`
	MIG         *MIG          `json:"mig"`
	Series      Series        `json:"series"`
	Unsupported []string      `json:"unsupported,omitempty"`
	Errors      []SampleError `json:"errors,omitempty"`
	// Usage is each workload's measured use of the GPU where the source
	// measures it (v1.1; docs/sharing.md).
	Usage []Usage `json:"usage,omitempty"`
}

// migSlices finds a MIG profile's GPU-instance slices ("3g.40gb",
// "1c.2g.20gb").
var migSlices = regexp.MustCompile(`(?:^|\.)(\d+)g\.`)

// Share is the fraction of its parent GPU that a MIG device holds: its
// GPU-instance slices out of the 7 of an A100, H100, H200 or B200 (1/7
// when the profile does not say).
func (m *MIG) Share() float64 {
	s := migSlices.FindStringSubmatch(m.Profile)
	if s == nil {
		return 1.0 / 7
	}
	n, _ := strconv.Atoi(s[1])
	return math.Min(1, float64(n)/7)
}

// MIG identifies a MIG device inside its parent GPU.
type MIG struct {
	ParentUUID string `json:"parent_uuid"`
	Profile    string `json:"profile"`
	GI         int    `json:"gi"`
	CI         int    `json:"ci"`
}

// SampleError records a failure of one GPU at one sample.
type SampleError struct {
	T     float64 `json:"t"`
	Error string  `json:"error"`
}

// ControllerLabel is the workload label a source sets to the controller
// that owns a pod, as "Deployment/llama-7b-infer" (kube-state-metrics'
// kube_pod_owner).
const ControllerLabel = "seedance.io/controller"

// Workload is a pod, process or batch job that uses (or waits for) GPUs.
type Workload struct {
	ID             string   `json:"id"`
	Name           string   `json:"name,omitempty"`
	Kind           string   `json:"kind,omitempty"`
	State          string   `json:"state,omitempty"`
	GPUs           []int    `json:"gpus,omitempty"`
	GPUUUIDs       []string `json:"gpu_uuids,omitempty"`
	GPUCount       int      `json:"gpu_count,omitempty"`
	GPUMemoryBytes uint64   `json:"gpu_memory_bytes,omitempty"`
	PIDs           []int    `json:"pids,omitempty"`
	// CPUsAllowed is the CPU list its processes may run on
	// (/proc/PID/status Cpus_allowed_list), to check NUMA placement.
	CPUsAllowed string            `json:"cpus_allowed,omitempty"`
	Labels      map[string]string `json:"labels,omitempty"`
	// Intervals say when the workload held its GPUs, in seconds from
	// started_at, ascending and apart; nil means the whole profile
	// (docs/profile-format.md, Workload tenure).
	Intervals []Tenure `json:"intervals,omitempty"`
	// Sharing says how it shares its GPUs and what it asked of each
	// (v1.1; docs/sharing.md); nil when the source knows nothing of it.
	Sharing *Sharing `json:"sharing,omitempty"`
	// Work is its counters of work done (v1.2; docs/units.md): requests,
	// tokens, a unit the user named. Nil when the source read none.
	Work []Work `json:"work,omitempty"`
	// Queue names the Profile.Queues entry it was admitted through (a
	// Kueue ClusterQueue, a Slurm account; v1.3); "" when none.
	Queue string `json:"queue,omitempty"`
}

// Tenure is one interval [StartS, EndS) in which a workload held its GPUs.
type Tenure struct {
	StartS float64 `json:"start_s"`
	EndS   float64 `json:"end_s"`
}

// Workload kinds and states.
const (
	KindPod      = "pod"
	KindProcess  = "process"
	KindJob      = "job"
	StateRunning = "running"
	StatePending = "pending"
)

// InfoPrefix begins a note that informs rather than warns (what a
// pushdown read read): analyze lists it with its notes, not its warnings,
// and the ledger keeps it with no bucket.
const InfoPrefix = "pushdown: "

// IsInfo says whether a note informs rather than warns (InfoPrefix).
func IsInfo(note string) bool { return strings.HasPrefix(note, InfoPrefix) }
