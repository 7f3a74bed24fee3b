package scrape

import (
	"context"
	"fmt"
	"math"
	"net/http"
	"net/url"
	"slices"
	"sort"
	"strings"
	"time"

	dto "github.com/prometheus/client_model/go"

	"github.com/seedance/seedance/profile"
	"github.com/seedance/seedance/source"
)

// ServingTarget is a serving engine's metrics endpoint (vLLM, SGLang,
// TGI, Triton) and the pod it serves from, namespace/name: its counters of
// work done become the pod's (docs/units.md, Sources).
type ServingTarget struct {
	Pod string
	URL string
}

// ParseServing reads "NAMESPACE/POD=URL" (a host:port gets /metrics).
func ParseServing(spec string) (ServingTarget, error) {
	pod, raw, ok := strings.Cut(strings.TrimSpace(spec), "=")
	ns, name, okPod := strings.Cut(pod, "/")
	if !ok || !okPod || ns == "" || name == "" || strings.Contains(name, "/") || len(pod) > profile.MaxWorkloadIDBytes {
		return ServingTarget{}, fmt.Errorf("serving target %q: give NAMESPACE/POD=URL (or host:port)", spec)
	}
	t, err := parseTarget(raw)
	if err != nil {
		return ServingTarget{}, fmt.Errorf("serving target %q: %v", spec, err)
	}
	return ServingTarget{Pod: pod, URL: t.url}, nil
}

// served is what the run read of one serving target: each counter's
// readings by unit and model, and its failures.
type served struct {
	ServingTarget
	work          map[[2]string]*profile.Work
	failed, total int
	lastErr       string
}

// servedCounters are the counters a scrape reads from each serving
// target: the built-in ones and the user's units: given by a metric name
// (docs/units.md); notes say which of the user's it cannot read: an
// expression needs a PromQL engine, and a Slurm job label joins nothing
// when the endpoint names its pod.
func servedCounters(user []source.WorkQuery) (out []source.ServedCounter, notes []string) {
	out = slices.Clone(source.ServedCounters)
	for i, q := range user {
		switch {
		case q.Expr != "":
			notes = append(notes, fmt.Sprintf("units[%d] (%s): an expression is read through a PromQL engine (--source prometheus), not from a scrape", i, q.Unit))
		case q.JobLabel != "":
			notes = append(notes, fmt.Sprintf("units[%d] (%s): joined by the Slurm job label %s, but a scrape's serving target names its pod: not read", i, q.Unit, q.JobLabel))
		default:
			out = append(out, source.ServedCounter{Metric: q.Metric, Unit: q.Unit, ModelLabel: q.ModelLabel})
		}
	}
	return out, notes
}

// scrapeServed reads each serving target once, at t seconds from the
// start: each counter summed over its series by model.
func scrapeServed(ctx context.Context, hc *http.Client, targets []*served, counters []source.ServedCounter, t float64) {
	for _, s := range targets {
		s.total++
		fams, err := scrapeOne(ctx, hc, s.URL)
		if err != nil {
			s.failed++
			s.lastErr = redactURLText(err.Error())
			continue
		}
		for _, c := range counters {
			for model, v := range counterSums(fams, c) {
				k := [2]string{c.Unit, model}
				w := s.work[k]
				if w == nil {
					w = &profile.Work{Unit: c.Unit, Model: model, Series: fmt.Sprintf("%s{instance=%q,pod=%q}", c.Metric, s.instance(), s.Pod)}
					s.work[k] = w
				}
				w.T, w.V = append(w.T, t), append(w.V, v)
			}
		}
	}
}

// counterSums is a counter's value by model: its series summed (a
// histogram's _sum for NAME_sum); NaN and negative values count as no
// reading.
func counterSums(fams map[string]*dto.MetricFamily, c source.ServedCounter) map[string]float64 {
	name, sum := c.Metric, false
	f := fams[name]
	if f == nil && strings.HasSuffix(name, "_sum") {
		f, sum = fams[strings.TrimSuffix(name, "_sum")], true
	}
	if f == nil {
		return nil
	}
	out := map[string]float64{}
	for _, m := range f.GetMetric() {
		var v float64
		switch {
		case sum && m.GetHistogram() != nil:
			v = m.GetHistogram().GetSampleSum()
		case m.GetCounter() != nil:
			v = m.GetCounter().GetValue()
		case m.GetUntyped() != nil:
			v = m.GetUntyped().GetValue()
		default:
			continue
		}
		if math.IsNaN(v) || v < 0 {
			continue
		}
		model := ""
		for _, l := range m.GetLabel() {
			if c.ModelLabel != "" && l.GetName() == c.ModelLabel {
				model = l.GetValue()
			}
		}
		out[model] += v
	}
	return out
}

// attachServed gives each serving target's counters to its pod on the
// nodes; a target whose pod holds no GPU there, one that failed, and each
// of the user's counters a scrape cannot read (unread), is a note.
func attachServed(p *profile.Profile, targets []*served, unread []string) {
	if len(targets) > 0 {
		p.Notes = append(p.Notes, unread...)
	}
	fed := map[*profile.Workload]bool{}
	at := map[string]*profile.Workload{}
	for ni := range p.Nodes {
		for wi := range p.Nodes[ni].Workloads {
			w := &p.Nodes[ni].Workloads[wi]
			at[w.ID] = w
		}
	}
	for _, s := range targets {
		if s.failed > 0 {
			p.Notes = append(p.Notes, fmt.Sprintf("serving target %s (%s): %d of %d scrapes failed (last: %s)", s.Pod, redactURLText(s.URL), s.failed, s.total, s.lastErr))
		}
		if len(s.work) == 0 {
			continue
		}
		w := at[s.Pod]
		if w == nil {
			p.Notes = append(p.Notes, fmt.Sprintf("serving target %s: no GPU of the profile is its pod's: its counters left out", s.Pod))
			continue
		}
		if !fed[w] { // a second target of the same pod adds its series: the analysis marks a counter two of them count
			w.Work, fed[w] = nil, true
		}
		keys := make([][2]string, 0, len(s.work))
		for k := range s.work {
			keys = append(keys, k)
		}
		sort.Slice(keys, func(i, j int) bool {
			return keys[i][0] < keys[j][0] || keys[i][0] == keys[j][0] && keys[i][1] < keys[j][1]
		})
		for _, k := range keys {
			w.Work = append(w.Work, *s.work[k])
		}
	}
}

// instance is the target's host:port, as Prometheus' instance label: a
// counter's series names it, so that two targets of one pod are two
// series.
func (s *served) instance() string {
	if u, err := url.Parse(s.URL); err == nil && u.Host != "" {
		return u.Host
	}
	return redactURLText(s.URL)
}

// newServed starts the run's record of each serving target.
func newServed(ts []ServingTarget) []*served {
	out := make([]*served, len(ts))
	for i, t := range ts {
		out[i] = &served{ServingTarget: t, work: map[[2]string]*profile.Work{}}
	}
	return out
}

// sinceStart is t's seconds from start, to the millisecond.
func sinceStart(t, start time.Time) float64 { return math.Round(t.Sub(start).Seconds()*1000) / 1000 }
