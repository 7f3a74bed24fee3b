package analyze

import (
	"bytes"
	"context"
	"fmt"
	"math"
	"math/rand/v2"
	"testing"
	"time"

	"github.com/seedance/seedance/profile"
	"github.com/seedance/seedance/source/sim"
)

// TestBucketSplitsAsSplits: the queues' timelines cut each GPU's time by
// bucket from one sweep (bucketSplits); each bucket's splits are exactly,
// bit for bit, those splits gives that bucket alone: on GPUs whose
// holders come and go at random times, inside buckets and on their edges,
// with buckets of several sizes (one that does not divide the window, and
// one the window long). The lean cut (the timelines') has the same splits
// with their covered and utilized seconds alone.
func TestBucketSplitsAsSplits(t *testing.T) {
	p, err := sim.Record(sim.Options{Nodes: 12, Scenario: sim.ScenarioMixed, Seed: 3}, 30*time.Second, time.Hour, profile.Generator{Name: "test"})
	if err != nil {
		t.Fatal(err)
	}
	churn(p, rand.New(rand.NewPCG(7, 1)))
	var doc bytes.Buffer
	if err := profile.Encode(&doc, p); err != nil {
		t.Fatal(err)
	}
	st, err := profile.OpenStream(bytes.NewReader(doc.Bytes()), "p.json")
	if err != nil {
		t.Fatal(err)
	}
	ap := DefaultParams()
	qp := DefaultQueueParams()
	ap.Queues = &qp
	a, _, err := read(context.Background(), []Source{{Name: "p.json", Stream: st}}, ap)
	if err != nil {
		t.Fatal(err)
	}
	pieces, cut := 0, 0
	for _, bucketS := range []float64{300, 77, 3600} {
		n := int(math.Ceil(a.windowS/bucketS - 1e-9))
		for _, node := range a.order {
			for _, g := range node.gpus {
				holders := holdersOf(node, g)
				if g.share == 0 || len(holders) == 0 {
					continue
				}
				tenure := a.tenures(node, holders)
				got, lean := make([][]split, n), make([][]split, n)
				bucketSplits(g, holders, tenure, bucketS, n, a.windowS, false, func(b int, sp split) { got[b] = append(got[b], sp) })
				bucketSplits(g, holders, tenure, bucketS, n, a.windowS, true, func(b int, sp split) {
					sp.t.idleS, sp.t.energyJ = got[b][len(lean[b])].t.idleS, got[b][len(lean[b])].t.energyJ
					lean[b] = append(lean[b], sp)
				})
				for b := range n {
					if err := sameSplits(lean[b], got[b]); err != nil {
						t.Fatalf("node %s GPU %s, buckets of %g s, bucket %d, lean: %v", node.name, g.uuid, bucketS, b, err)
					}
					want := splits(g, holders, tenure, float64(b)*bucketS, min(a.windowS, float64(b+1)*bucketS), a.windowS)
					if err := sameSplits(got[b], want); err != nil {
						t.Fatalf("node %s GPU %s, buckets of %g s, bucket %d: %v", node.name, g.uuid, bucketS, b, err)
					}
					pieces += len(want)
					if len(want) > 1 {
						cut++
					}
				}
			}
		}
	}
	if cut < 50 {
		t.Fatalf("only %d buckets (of %d splits) had a holder come or go inside them", cut, pieces)
	}
}

// churn replaces two in three running workloads of p by up to four that
// hold its GPUs one after another, from random instants, with gaps.
func churn(p *profile.Profile, r *rand.Rand) {
	spanS := p.EndedAt.Sub(p.StartedAt).Seconds()
	for ni := range p.Nodes {
		var ws []profile.Workload
		for _, w := range p.Nodes[ni].Workloads {
			if w.State == profile.StatePending {
				ws = append(ws, w)
				continue
			}
			w.Work, w.Queue = nil, "q"
			if r.IntN(3) == 0 { // held throughout
				ws = append(ws, w)
				continue
			}
			at := 0.0
			for k := range 1 + r.IntN(4) {
				part := w
				part.ID = fmt.Sprintf("%s-%d", w.ID, k)
				end := math.Min(spanS, at+30+r.Float64()*spanS/2)
				if r.IntN(3) == 0 {
					end = math.Round(end/300) * 300 // on a bucket's edge
				}
				if end <= at {
					break
				}
				part.Intervals = []profile.Tenure{{StartS: at, EndS: end}}
				part.Queue = "q"
				ws = append(ws, part)
				at = end + r.Float64()*120
			}
		}
		p.Nodes[ni].Workloads = ws
	}
	quota := 10.0
	p.Queues = []profile.Queue{{Name: "q", Kind: profile.QueueKueue, NominalGPUs: &quota}}
}

// sameSplits says how two lists of splits differ, bit for bit.
func sameSplits(got, want []split) error {
	if len(got) != len(want) {
		return fmt.Errorf("%d splits, want %d", len(got), len(want))
	}
	bits := func(xs ...float64) (out []uint64) {
		for _, x := range xs {
			out = append(out, math.Float64bits(x))
		}
		return out
	}
	for i := range got {
		g, w := got[i], want[i]
		if fmt.Sprint(bits(g.t.observedS, g.t.utilSum, g.t.idleS, g.t.energyJ, g.lo, g.hi), bits(g.weights...), g.basis) !=
			fmt.Sprint(bits(w.t.observedS, w.t.utilSum, w.t.idleS, w.t.energyJ, w.lo, w.hi), bits(w.weights...), w.basis) {
			return fmt.Errorf("split %d: %+v, want %+v", i, g, w)
		}
	}
	return nil
}
