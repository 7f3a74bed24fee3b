package profile

import (
	"math"
	"slices"
	"time"
)

// Span is where the earliest of the profiles starts and the latest ends.
func Span(ps []*Profile) (start, end time.Time) {
	for i, p := range ps {
		if i == 0 || p.StartedAt.Before(start) {
			start = p.StartedAt
		}
		if p.EndedAt.After(end) {
			end = p.EndedAt
		}
	}
	return start, end
}

// Join joins consecutive profiles of one cluster (in time order) into one
// that spans [from, to]: each GPU's samples in it, and with keepLast the
// last sample of each GPU before from too, and its last energy reading
// before from (its coverage and its energy counter reach into the span);
// each node's workloads with their tenure cut to [from, to] (so that the
// tenure of joins of [a, b] and [b, c] meets at b), the latest profile's
// state of each winning; the latest labels, topology, source and interval. It ends
// at to or where the latest profile does, if sooner. Times stay to the
// millisecond. The ledger reads its updates and keeps the tail of what it
// read this way (docs/ledger.md).
//
// One profile without keepLast is joined without a copy of its columns:
// the result's columns and usage are slices of p's (only the times are
// new), which neither may change in place afterwards. In every join a
// workload's counters of work keep slices of the inputs' readings, and
// those that read at the same times share one array of them (new), as a
// node's GPUs that sample at the same times do: a caller that changes
// times in place changes each array once (Reframe, shiftTenure).
func Join(ps []*Profile, from, to time.Time, keepLast bool) *Profile {
	if len(ps) == 1 && !keepLast && distinct(ps[0]) {
		return joinOne(ps[0], from, to)
	}
	return joinAll(ps, from, to, keepLast)
}

// joinAll is Join, copying.
func joinAll(ps []*Profile, from, to time.Time, keepLast bool) *Profile {
	out := &Profile{SchemaVersion: SchemaVersion, StartedAt: from, EndedAt: to, Complete: true}
	latest := time.Time{}
	for _, p := range ps {
		if p.EndedAt.After(latest) {
			latest = p.EndedAt
		}
	}
	if latest.Before(to) {
		out.EndedAt = latest
	}
	nodes, gpus := map[string]*Node{}, map[[2]string]*gpuAt{}
	var order []string
	uuids := map[string][]string{} // each node's GPUs in the order first seen
	fromMS := float64(from.UnixMilli())
	for _, p := range ps {
		out.Generator, out.Source, out.IntervalS, out.Cluster = p.Generator, p.Source, p.IntervalS, p.Cluster
		out.ContextS = max(out.ContextS, p.ContextS)
		out.Complete = out.Complete && p.Complete
		out.PendingUnknown, out.Unscheduled = p.PendingUnknown, p.Unscheduled
		// each input's spans from from (the latest quota), cut to [from, to]
		out.Queues = MergeQueues(out.Queues, ShiftQueues(p.Queues, (float64(p.StartedAt.UnixMilli())-fromMS)/1000, float64(to.UnixMilli()-from.UnixMilli())/1000))
		base := float64(p.StartedAt.UnixMilli())
		for ni := range p.Nodes {
			pn := &p.Nodes[ni]
			n := nodes[pn.Name]
			if n == nil {
				n = &Node{Name: pn.Name}
				nodes[pn.Name] = n
				order = append(order, pn.Name)
			}
			n.Labels, n.Topology = pn.Labels, pn.Topology
			joinWorkloads(n, pn.Workloads, base, p.EndedAt.Sub(p.StartedAt).Seconds(), [2]float64{fromMS, float64(out.EndedAt.UnixMilli())}, fromMS)
			for gi := range pn.GPUs {
				pg := &pn.GPUs[gi]
				k := [2]string{pn.Name, pg.UUID}
				g := gpus[k]
				if g == nil {
					g = &gpuAt{gpu: &GPU{}}
					gpus[k] = g
					uuids[pn.Name] = append(uuids[pn.Name], pg.UUID)
				}
				*g.gpu = *pg
				if pg.IntervalS == 0 {
					g.gpu.IntervalS = p.IntervalS
				}
				g.add(pg, base, fromMS, float64(to.UnixMilli()), keepLast)
			}
		}
	}
	start := fromMS
	for _, g := range gpus {
		if len(g.t) > 0 {
			start = min(start, g.t[0])
		}
	}
	out.StartedAt = time.UnixMilli(int64(start)).UTC()
	out.Queues = ShiftQueues(out.Queues, (fromMS-start)/1000, (float64(to.UnixMilli())-start)/1000)
	for _, name := range order {
		n := nodes[name]
		var times sharedTimes
		for _, uuid := range uuids[name] {
			g := gpus[[2]string{name, uuid}]
			if len(g.t) == 0 {
				continue
			}
			s := Series{T: times.of(g.t, func() Values {
				out := make(Values, len(g.t))
				for i, t := range g.t {
					out[i] = (t - start) / 1000
				}
				return out
			})}
			for m := Metric(0); m < NumMetrics; m++ {
				if hasValue(g.cols[m]) {
					*s.Col(m) = g.cols[m]
				}
			}
			g.gpu.Series, g.gpu.Errors, g.gpu.Usage = s, nil, g.usage.columns()
			n.GPUs = append(n.GPUs, *g.gpu)
		}
		shiftTenure(n, (fromMS-start)/1000)
		out.Nodes = append(out.Nodes, *n)
	}
	return out
}

// gpuAt is one GPU of a join: its samples' absolute times (Unix ms) and
// columns.
type gpuAt struct {
	gpu   *GPU
	t     []float64
	cols  [NumMetrics][]float64
	usage usageAt
}

// add appends pg's samples at or after from and at or before to (base is
// pg's profile's start); with keepLast, the last one before from too, and
// the last energy reading before from (the counter's next increase is
// counted from it).
func (g *gpuAt) add(pg *GPU, base, from, to float64, keepLast bool) {
	for i, t := range pg.Series.T {
		abs := base + math.Round(t*1000)
		if abs > to {
			break
		}
		if abs < from {
			if !keepLast {
				continue
			}
			g.keepEnergyReading()
		}
		g.t = append(g.t, abs)
		for m := Metric(0); m < NumMetrics; m++ {
			c := *pg.Series.Col(m)
			if c == nil && g.cols[m] == nil {
				continue // a column no profile has so far: none kept
			}
			if g.cols[m] == nil {
				g.cols[m] = nullValues(len(g.t) - 1)
			}
			g.cols[m] = append(g.cols[m], at(c, i))
		}
		g.usage.add(pg.Usage, i, len(g.t))
	}
}

// keepEnergyReading drops the samples kept so far (all before from) but
// the latest with an energy reading.
func (g *gpuAt) keepEnergyReading() {
	keep := -1
	for i := len(g.cols[EnergyJ]) - 1; i >= 0; i-- { // none: no energy column
		if !IsNull(g.cols[EnergyJ][i]) {
			keep = i
			break
		}
	}
	n := 0
	if keep >= 0 {
		g.t[0] = g.t[keep]
		for m := range g.cols {
			if g.cols[m] != nil {
				g.cols[m][0] = g.cols[m][keep]
			}
		}
		n = 1
	}
	g.t = g.t[:n]
	for m := range g.cols {
		if g.cols[m] != nil {
			g.cols[m] = g.cols[m][:n]
		}
	}
	g.usage.keep(keep, n)
}

// at is v[i], null past its end (a column one profile lacks).
func at(v Values, i int) float64 {
	if i < len(v) {
		return v[i]
	}
	return Null
}

func hasValue(v []float64) bool {
	for _, x := range v {
		if !IsNull(x) {
			return true
		}
	}
	return false
}

// joinWorkloads merges a profile's workloads into n, their tenure
// absolute (ms) and cut to [cut[0], cut[1]] ms, relative to rel (ms) in
// seconds; a workload with no tenure left is dropped.
func joinWorkloads(n *Node, ws []Workload, base, spanS float64, cut [2]float64, rel float64) {
	for _, w := range ws {
		ivs := w.Intervals
		if ivs == nil {
			ivs = []Tenure{{StartS: 0, EndS: spanS}}
		}
		var kept []Tenure
		for _, iv := range ivs {
			lo, hi := max(base+math.Round(iv.StartS*1000), cut[0]), min(base+math.Round(iv.EndS*1000), cut[1])
			if hi > lo {
				kept = append(kept, Tenure{(lo - rel) / 1000, (hi - rel) / 1000})
			}
		}
		var work []Work
		i := workloadIndex(n.Workloads, w.ID)
		if i >= 0 {
			kept = JoinTenure(append(n.Workloads[i].Intervals, kept...), 0)
			work = n.Workloads[i].Work
			n.Workloads = append(n.Workloads[:i], n.Workloads[i+1:]...)
		}
		if w.Work != nil {
			w.Work = joinWork(work, w.Work, base, cut, rel)
		} else {
			w.Work = work
		}
		if len(kept) == 0 && w.State != StatePending {
			continue
		}
		w.Intervals = kept
		n.Workloads = append(n.Workloads, w)
	}
}

func workloadIndex(ws []Workload, id string) int {
	for i, w := range ws {
		if w.ID == id {
			return i
		}
	}
	return -1
}

// shiftTenure moves n's workloads' tenure and work readings by d seconds (from from to the
// profile's start, which a kept last sample may put earlier).
func shiftTenure(n *Node, d float64) {
	for i := range n.Workloads {
		ts := make([]Values, 0, len(n.Workloads[i].Work))
		for _, w := range n.Workloads[i].Work { // and their counters' readings, the join's own
			ts = append(ts, w.T)
		}
		for _, t := range distinctTimes(ts) { // counters share them (joinWork)
			for k := range t {
				t[k] += d
			}
		}
		for j := range n.Workloads[i].Intervals {
			n.Workloads[i].Intervals[j].StartS += d
			n.Workloads[i].Intervals[j].EndS += d
		}
	}
}

// sharedTimes is the arrays of times that a join's GPUs of one node, or
// counters of one workload, share: each with what it was made of.
type sharedTimes []struct{ in, t []float64 }

// of is the array made of in: one made of equal times before, else a new
// one (build's).
func (s *sharedTimes) of(in []float64, build func() Values) Values {
	for _, x := range *s {
		if slices.Equal(x.in, in) {
			return x.t
		}
	}
	t := build()
	*s = append(*s, struct{ in, t []float64 }{in, t})
	return t
}

// distinctTimes is ts, each array once: arrays of times may be shared
// (sharedTimes), and whatever moves them in place must move each once.
func distinctTimes(ts []Values) []Values {
	var out []Values
	for _, t := range ts {
		if len(t) > 0 && !slices.ContainsFunc(out, func(o Values) bool { return &o[0] == &t[0] }) {
			out = append(out, t)
		}
	}
	return out
}
