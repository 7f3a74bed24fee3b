package source

import (
	"context"
	"maps"
	"math"
	"slices"
	"sort"
	"time"

	"github.com/seedance/seedance/profile"
)

// RecordOptions controls a recording run.
type RecordOptions struct {
	Interval time.Duration
	// Duration ends the run after this much time; zero runs until ctx is done
	// or Stop is closed.
	Duration time.Duration
	Clock    Clock
	// Stop, when closed, ends the run normally (the wrapped command exited).
	Stop <-chan struct{}
	// Checkpoint, when positive, calls OnCheckpoint with the profile so far
	// (complete=false) every Checkpoint of clock time.
	Checkpoint   time.Duration
	OnCheckpoint func(*profile.Profile) error
	// OnSample is called after each sample (progress display).
	OnSample  func(Progress)
	Generator profile.Generator
	// Job, when set, adds the wrapped command as a workload of the first node.
	Job *Job
	// TempDir is where a source that streams nodes keeps what it has read
	// but not yet handed out ("" for the system's temporary directory).
	TempDir string
}

// Progress describes the run after one sample.
type Progress struct {
	Elapsed, Total time.Duration
	Samples        int
	// NodesDone of Nodes have been recorded, by a source that records
	// one node at a time over the whole run (a jumping clock's simulator);
	// Nodes is 0 for one that samples them all at once.
	NodesDone, Nodes int
	// MeanUtil is the mean GPU utilization over the GPUs that reported it at
	// this sample; NaN when none did.
	MeanUtil float64
}

// Record samples src every Interval and returns the profile. When ctx is
// cancelled (SIGINT, SIGTERM) it returns what was collected with Complete
// false and no error: an interrupted run keeps its data. A checkpoint that
// fails is returned as an error together with the profile so far.
func Record(ctx context.Context, src Source, o RecordOptions) (*profile.Profile, error) {
	if o.Clock == nil {
		o.Clock = RealClock{}
	}
	inv := src.Inventory()
	p := &profile.Profile{
		SchemaVersion: profile.SchemaVersion,
		Generator:     o.Generator,
		Source:        src.Name(),
		IntervalS:     o.Interval.Seconds(),
		Nodes:         inv,
	}
	// With a known duration the columns are allocated once, at full size.
	capacity := 64
	if o.Duration > 0 && o.Interval > 0 {
		capacity = int(o.Duration/o.Interval) + 1
	}
	for ni := range p.Nodes {
		for gi := range p.Nodes[ni].GPUs {
			InitSeries(&p.Nodes[ni].GPUs[gi], capacity)
		}
	}
	merged := make([]*workloadSet, len(p.Nodes))
	for i := range merged {
		merged[i] = newWorkloadSet()
	}
	start := o.Clock.Now().UTC()
	p.StartedAt = start
	lastCheckpoint := start
	interrupted, samples := false, 0
	lastT := math.NaN()
	var cpErr error
	lastErr := make([][]string, len(p.Nodes))
	for ni := range lastErr {
		lastErr[ni] = make([]string, len(p.Nodes[ni].GPUs))
	}
	for i := 0; ; i++ {
		target := start.Add(time.Duration(i) * o.Interval)
		if o.Duration > 0 && target.Sub(start) >= o.Duration {
			break
		}
		if err := o.Clock.WaitUntil(ctx, target); err != nil {
			interrupted = true
			break
		}
		if stopped(o.Stop) {
			break
		}
		now := o.Clock.Now()
		t := math.Round(now.Sub(start).Seconds()*1e3) / 1e3
		if t <= lastT { // the clock went backwards or sampling overran
			continue
		}
		rows, wls := src.Sample(ctx)
		if ctx.Err() != nil {
			interrupted = true
			break
		}
		lastT = t
		samples++
		AppendRows(p, t, rows, lastErr)
		for ni := range wls {
			merged[ni].add(wls[ni], t, p.IntervalS)
		}
		if o.Job != nil && len(merged) > 0 {
			o.Job.observe(wls)
		}
		if o.OnSample != nil {
			o.OnSample(Progress{Elapsed: now.Sub(start), Total: o.Duration, Samples: samples, MeanUtil: meanUtil(rows)})
		}
		// Skip ticks that sampling overran.
		if next := start.Add(time.Duration(i+1) * o.Interval); o.Clock.Now().After(next) {
			i = int(o.Clock.Now().Sub(start) / o.Interval)
		}
		if o.Checkpoint > 0 && o.OnCheckpoint != nil && now.Sub(lastCheckpoint) >= o.Checkpoint {
			lastCheckpoint = now
			finish(p, src, merged, o, lastT, false)
			if cpErr = o.OnCheckpoint(p); cpErr != nil {
				break
			}
		}
	}
	finish(p, src, merged, o, lastT, !interrupted && cpErr == nil)
	return p, cpErr
}

func stopped(c <-chan struct{}) bool {
	if c == nil {
		return false
	}
	select {
	case <-c:
		return true
	default:
		return false
	}
}

// finish fills in the fields that depend on the samples so far. ended_at is
// the end of the last sample's coverage: started_at + t_last + interval.
func finish(p *profile.Profile, src Source, merged []*workloadSet, o RecordOptions, lastT float64, complete bool) {
	p.Complete = complete
	end := o.Clock.Now().UTC()
	if !math.IsNaN(lastT) {
		end = p.StartedAt.Add(time.Duration((lastT + p.IntervalS) * float64(time.Second)))
	}
	p.EndedAt = end
	for ni := range p.Nodes {
		p.Nodes[ni].Workloads = merged[ni].list(p.EndedAt.Sub(p.StartedAt).Seconds())
	}
	if o.Job != nil && len(p.Nodes) > 0 {
		w := o.Job.Workload()
		p.Nodes[0].Workloads = append(p.Nodes[0].Workloads, w)
	}
	if q, ok := src.(Queuer); ok {
		p.Queues = q.Queues(p)
	}
}

// InitSeries gives g an empty column of the given capacity for each metric
// it supports.
func InitSeries(g *profile.GPU, capacity int) {
	unsupported := map[string]bool{}
	for _, u := range g.Unsupported {
		unsupported[u] = true
	}
	g.Series.T = make(profile.Values, 0, capacity)
	for m := profile.Metric(0); m < profile.NumMetrics; m++ {
		if !unsupported[m.String()] {
			*g.Series.Col(m) = make(profile.Values, 0, capacity)
		}
	}
}

// AppendRows adds one sample to every GPU. An error is recorded at the first
// sample of each run of the same error, so a GPU lost for an hour has one
// entry, not 3,600.
func AppendRows(p *profile.Profile, t float64, rows [][]Row, lastErr [][]string) {
	for ni := range p.Nodes {
		for gi := range p.Nodes[ni].GPUs {
			g := &p.Nodes[ni].GPUs[gi]
			r := rows[ni][gi]
			g.Series.T = append(g.Series.T, t)
			for m := profile.Metric(0); m < profile.NumMetrics; m++ {
				if col := g.Series.Col(m); *col != nil {
					*col = append(*col, r.V[m])
				}
			}
			appendUse(g, r.Use)
			if r.Err != "" && r.Err != lastErr[ni][gi] {
				g.Errors = append(g.Errors, profile.SampleError{T: t, Error: r.Err})
			}
			lastErr[ni][gi] = r.Err
		}
	}
}

// appendUse adds a sample's measured use to g's usage columns (the sample
// just appended to its series): a workload's first adds its column, null
// before; one measured before and not now is null now.
func appendUse(g *profile.GPU, use map[string]float64) {
	n := len(g.Series.T)
	for k := range g.Usage {
		u := &g.Usage[k]
		v, ok := use[u.Workload]
		if !ok {
			v = profile.Null
		}
		u.UtilPct = append(u.UtilPct, v)
	}
	for _, id := range slices.Sorted(maps.Keys(use)) {
		if !hasUsage(g, id) {
			col := make(profile.Values, n)
			for i := range col {
				col[i] = profile.Null
			}
			col[n-1] = use[id]
			g.Usage = append(g.Usage, profile.Usage{Workload: id, UtilPct: col})
		}
	}
}

func hasUsage(g *profile.GPU, id string) bool {
	for _, u := range g.Usage {
		if u.Workload == id {
			return true
		}
	}
	return false
}

func meanUtil(rows [][]Row) float64 {
	sum, n := 0.0, 0
	for _, node := range rows {
		for _, r := range node {
			if !profile.IsNull(r.V[profile.GPUUtilPct]) {
				sum += r.V[profile.GPUUtilPct]
				n++
			}
		}
	}
	if n == 0 {
		return profile.Null
	}
	return sum / float64(n)
}

// workloadSet merges the workloads seen over a run: GPUs and pids are
// unions, memory is the peak, state is the latest seen, and the samples
// that saw each one are its tenure.
type workloadSet struct {
	byID   map[string]*profile.Workload
	tenure map[string][]profile.Tenure
}

func newWorkloadSet() *workloadSet {
	return &workloadSet{byID: map[string]*profile.Workload{}, tenure: map[string][]profile.Tenure{}}
}

// add merges the workloads seen by the sample at t.
func (s *workloadSet) add(ws []profile.Workload, t, interval float64) {
	for _, w := range ws {
		s.tenure[w.ID] = profile.AddTenure(s.tenure[w.ID], t, interval)
		cur, ok := s.byID[w.ID]
		if !ok {
			c := w
			c.GPUs = append([]int(nil), w.GPUs...)
			c.PIDs = append([]int(nil), w.PIDs...)
			c.GPUUUIDs = append([]string(nil), w.GPUUUIDs...)
			c.Work = nil
			addWork(&c, w.Work, t)
			s.byID[w.ID] = &c
			continue
		}
		addWork(cur, w.Work, t)
		cur.State = w.State
		if cur.CPUsAllowed == "" {
			cur.CPUsAllowed = w.CPUsAllowed
		}
		for _, g := range w.GPUs {
			AddSorted(&cur.GPUs, g)
		}
		for _, pid := range w.PIDs {
			AddSorted(&cur.PIDs, pid)
		}
		for _, u := range w.GPUUUIDs {
			AddSorted(&cur.GPUUUIDs, u)
		}
		if w.GPUMemoryBytes > cur.GPUMemoryBytes {
			cur.GPUMemoryBytes = w.GPUMemoryBytes
		}
		if w.GPUCount > cur.GPUCount {
			cur.GPUCount = w.GPUCount
		}
	}
}

// addWork appends a sample's work readings, taken at t (a source gives
// each counter's reading as its one value), to dst's counters.
func addWork(dst *profile.Workload, ws []profile.Work, t float64) {
	for _, w := range ws {
		if len(w.V) == 0 {
			continue
		}
		i := slices.IndexFunc(dst.Work, func(h profile.Work) bool { return h.Unit == w.Unit && h.Model == w.Model && h.Series == w.Series })
		if i < 0 {
			dst.Work = append(dst.Work, profile.Work{Unit: w.Unit, Model: w.Model, Series: w.Series})
			i = len(dst.Work) - 1
		}
		c := &dst.Work[i]
		c.T, c.V = append(c.T, t), append(c.V, w.V[0])
	}
}

// list returns the workloads by id, each with its intervals in a profile
// of spanS seconds.
func (s *workloadSet) list(spanS float64) []profile.Workload {
	out := make([]profile.Workload, 0, len(s.byID))
	for id, w := range s.byID {
		c := *w
		if len(c.GPUs) > c.GPUCount {
			c.GPUCount = len(c.GPUs)
		}
		c.Intervals, _ = profile.FinishTenure(s.tenure[id], 0, 1, spanS)
		out = append(out, c)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].ID < out[j].ID })
	return out
}
