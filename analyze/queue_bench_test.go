package analyze

import (
	"bytes"
	"fmt"
	"hash/fnv"
	"testing"
	"time"

	"github.com/seedance/seedance/profile"
	"github.com/seedance/seedance/source/sim"
)

// BenchmarkQueueStructureCPU (#58): what joining the queue structure adds
// to an analysis of 1,000 nodes with 100 queues and 10,000 workloads: an
// hour of 1,000 simulated nodes at 30 s, each running pod split into four
// workloads that hold its GPUs a quarter of the hour each (short-lived:
// 10,000 running, 250 pending), each workload in one of 100 Kueue
// ClusterQueues of 10 cohorts (a hash of its id), each with a nominal
// quota, its workloads' reservations and waits; against the same profile
// with no queue. Both analyzed with the attribution and queue reports
// (`--report queues`), from memory, alternated, each round collecting its
// own garbage; CPU time of the process, with queues against without (the
// sums' ratio, and the median of the rounds' ratios, which a round slowed
// by the machine moves less):
// go test ./analyze -run XXX -bench QueueStructureCPU -benchtime 10x
func BenchmarkQueueStructureCPU(b *testing.B) {
	p, err := sim.Record(sim.Options{Nodes: 1000, Scenario: sim.ScenarioMixed, Seed: 1}, 30*time.Second, time.Hour, profile.Generator{Name: "bench"})
	if err != nil {
		b.Fatal(err)
	}
	with, without, workloads := queuedProfiles(b, p)
	ap := DefaultParams()
	ap.Attribution = &AttributionParams{GroupBy: []string{"namespace"}}
	qp := DefaultQueueParams()
	ap.Queues = &qp
	alternated(b, [2][]byte{without, with}, ap, func(i int, r *Report) {
		if (len(r.Queues) == 100) != (i == 1) {
			b.Fatalf("input %d: %d queues", i, len(r.Queues))
		}
	})
	b.ReportMetric(float64(workloads), "workloads")
}

// queuedProfiles is p with its running pods split in four and put in 100
// queues, and the same without queues, each encoded; and how many
// workloads they have.
func queuedProfiles(b *testing.B, p *profile.Profile) (with, without []byte, workloads int) {
	spanS := p.EndedAt.Sub(p.StartedAt).Seconds()
	queueOf := func(id string) string {
		h := fnv.New32a()
		h.Write([]byte(id))
		return fmt.Sprintf("cq-%02d", h.Sum32()%100)
	}
	qs := map[string]*profile.Queue{}
	for i := range 100 {
		quota := 40.0
		name := fmt.Sprintf("cq-%02d", i)
		qs[name] = &profile.Queue{Name: name, Kind: profile.QueueKueue, Cohort: fmt.Sprintf("cohort-%d", i%10), NominalGPUs: &quota, Flavors: []string{"h100"}}
	}
	p.Queues = nil
	for ni := range p.Nodes {
		n := &p.Nodes[ni]
		var ws []profile.Workload
		for _, w := range n.Workloads {
			w.Work = nil
			if w.State == profile.StatePending {
				w.Queue = queueOf(w.ID)
				q := qs[w.Queue]
				q.Pending = append(q.Pending, profile.QueueSpan{Workload: w.ID, GPUs: float64(max(1, w.GPUCount)), StartS: 0, EndS: spanS})
				ws = append(ws, w)
				continue
			}
			for k := range 4 {
				part := w
				part.ID, part.Name = fmt.Sprintf("%s-%d", w.ID, k), fmt.Sprintf("%s-%d", w.Name, k)
				part.Intervals = []profile.Tenure{{StartS: spanS * float64(k) / 4, EndS: spanS * float64(k+1) / 4}}
				part.Queue = queueOf(part.ID)
				q := qs[part.Queue]
				q.Admitted = append(q.Admitted, profile.QueueSpan{Workload: part.ID, GPUs: float64(len(w.GPUs)), StartS: part.Intervals[0].StartS, EndS: part.Intervals[0].EndS})
				ws = append(ws, part)
			}
		}
		n.Workloads = ws
		workloads += len(ws)
	}
	for i := range 100 {
		p.Queues = append(p.Queues, *qs[fmt.Sprintf("cq-%02d", i)])
	}
	var a, c bytes.Buffer
	if err := profile.Encode(&a, p); err != nil {
		b.Fatal(err)
	}
	p.Queues = nil
	for ni := range p.Nodes {
		for wi := range p.Nodes[ni].Workloads {
			p.Nodes[ni].Workloads[wi].Queue = ""
		}
	}
	if err := profile.Encode(&c, p); err != nil {
		b.Fatal(err)
	}
	return a.Bytes(), c.Bytes(), workloads
}
