package recommend

import "github.com/seedance/seedance/hwtopo"

// milliPerGPU is one whole GPU in the planner's units.
const milliPerGPU = 1000

// Cluster is the planner's view of the nodes and workloads.
type Cluster struct {
	Nodes     []*Node
	Workloads []*Workload
}

// Node is one machine: its GPUs, interconnect and price.
type Node struct {
	Name         string
	Model        string
	GPUs         []GPU
	Topology     *hwtopo.Topology // nil when unknown
	PricePerHour float64
}

// GPU is one GPU's capacity and what holds it now.
type GPU struct {
	MemBytes  uint64
	UsedMilli int    // 0–1000
	UsedMem   uint64 // bytes held by workloads
	// Busy marks a GPU doing work no known workload accounts for: it
	// cannot be freed.
	Busy bool
}

// Workload is a running or pending workload.
type Workload struct {
	ID, Name, Namespace, Kind string
	Node                      string // running: where; pending: where it waits
	Pending                   bool
	GPUs                      []int  // running: the GPUs it holds
	Count                     int    // GPUs it needs
	Milli                     int    // share of each GPU, 1000 for whole GPUs
	MemPerGPU                 uint64 // bytes on each GPU
	Pinned                    bool   // seedance.io/pinned=true, or not a pod or job: never moves
	Job                       bool   // a running batch job: moves only with Options.MoveJobs
	// Blocker says why moving this pod loses something (no controller
	// would bring it back, a Job's work restarts, a StatefulSet's volumes
	// may be bound to its node); it moves only with Options.MoveBlockers.
	Blocker string
}
