package sim

import (
	"math"
	"sort"

	"github.com/seedance/seedance/profile"
)

// The simulated cluster's Kueue ClusterQueues, one cohort: each
// namespace's pods are admitted through one, and each holds a share of
// the cluster's GPUs as its nominal quota (docs/queues.md).
var simQueues = []struct {
	name       string
	namespaces []string
	share      float64
}{
	{"research", []string{"training", "notebooks"}, 0.4},
	{"serving", []string{"inference"}, 0.4},
	{"platform", []string{"eval"}, 0.2},
}

// SimCohort is the simulated queues' cohort.
const SimCohort = "gpu-pool"

// simQueueOf is the queue a namespace's pods are admitted through.
func simQueueOf(namespace string) string {
	for _, q := range simQueues {
		for _, ns := range q.namespaces {
			if ns == namespace {
				return q.name
			}
		}
	}
	return ""
}

// setQueues names each workload's queue.
func setQueues(ws []profile.Workload) {
	for i := range ws {
		ws[i].Queue = simQueueOf(ws[i].Labels["namespace"])
	}
}

// queueBook gathers the queues' reservations (running pods, for their
// tenure) and waits (pending pods) node by node.
type queueBook struct {
	gpus  int
	spans map[string]*profile.Queue
}

func newQueueBook() *queueBook { return &queueBook{spans: map[string]*profile.Queue{}} }

// add books the nodes' workloads; spanS is the profile's length.
func (b *queueBook) add(nodes []profile.Node, spanS float64) {
	for _, n := range nodes {
		b.gpus += len(n.GPUs)
		for _, w := range n.Workloads {
			if w.Queue == "" {
				continue
			}
			q := b.spans[w.Queue]
			if q == nil {
				q = &profile.Queue{}
				b.spans[w.Queue] = q
			}
			tenure := w.Intervals
			if tenure == nil {
				tenure = []profile.Tenure{{StartS: 0, EndS: spanS}}
			}
			for _, t := range tenure {
				if w.State == profile.StatePending {
					q.Pending = append(q.Pending, profile.QueueSpan{Workload: w.ID, GPUs: float64(max(1, w.GPUCount)), StartS: t.StartS, EndS: t.EndS})
				} else if len(w.GPUs) > 0 {
					q.Admitted = append(q.Admitted, profile.QueueSpan{Workload: w.ID, GPUs: float64(len(w.GPUs)), StartS: t.StartS, EndS: t.EndS})
				}
			}
		}
	}
}

// queues are the ClusterQueues with their quota of the GPUs booked.
func (b *queueBook) queues() []profile.Queue {
	var out []profile.Queue
	for _, sq := range simQueues {
		nominal := math.Floor(float64(b.gpus) * sq.share)
		q := profile.Queue{Name: sq.name, Kind: profile.QueueKueue, Cohort: SimCohort, NominalGPUs: &nominal, Flavors: []string{"default-flavor"},
			QuotaRef: "/spec/resourceGroups/0/flavors/0/resources/0/nominalQuota"}
		if s := b.spans[sq.name]; s != nil {
			q.Admitted, q.Pending = s.Admitted, s.Pending
		}
		for _, ss := range [][]profile.QueueSpan{q.Admitted, q.Pending} {
			sort.Slice(ss, func(i, j int) bool {
				return ss[i].Workload < ss[j].Workload || ss[i].Workload == ss[j].Workload && ss[i].StartS < ss[j].StartS
			})
		}
		out = append(out, q)
	}
	return out
}

// Queues implements source.Queuer: the ClusterQueues of p's nodes.
func (s *Sim) Queues(p *profile.Profile) []profile.Queue {
	b := newQueueBook()
	b.add(p.Nodes, p.EndedAt.Sub(p.StartedAt).Seconds())
	return b.queues()
}
