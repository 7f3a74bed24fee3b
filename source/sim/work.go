package sim

import (
	"hash/fnv"
	"math"
	"strings"
	"time"

	"github.com/seedance/seedance/profile"
	"github.com/seedance/seedance/source"
)

// simRates are what one simulated serving GPU does each second at 100 %
// utilization, in proportion below it: a vLLM server's requests, prompt
// tokens and generated tokens (docs/units.md).
var simRates = [3]struct {
	unit, metric string
	perS         float64
}{
	{profile.UnitRequests, "vllm:request_success_total", 4},
	{profile.UnitInputTokens, "vllm:prompt_tokens_total", 6000},
	{profile.UnitOutputTokens, "vllm:generation_tokens_total", 1500},
}

// simServed is one serving pod's counters and when they were last read.
type simServed struct {
	last time.Time
	v    [3]float64
}

// addWork gives each serving pod (an app ending in -infer) of one node's
// sample its counters' readings, as vLLM's /metrics would show them: each
// rises by its rate × the utilization of the pod's GPUs since the last
// sample, from a start that is the pod's own (it served before the run).
func (s *Sim) addWork(rows []source.Row, ws []profile.Workload) {
	now := s.clock.Now()
	for i := range ws {
		w := &ws[i]
		app, ok := strings.CutPrefix(w.Labels[profile.ControllerLabel], "Deployment/")
		if w.State != profile.StateRunning || !ok || !strings.HasSuffix(app, "-infer") {
			continue
		}
		c := s.served[w.ID]
		if c == nil {
			c = &simServed{last: now}
			for k := range c.v {
				c.v[k] = math.Floor(hash01(idHash(w.ID), uint64(k), 11) * 1e5 * simRates[k].perS)
			}
			s.served[w.ID] = c
		}
		busy := 0.0 // GPUs' worth of utilization
		for _, g := range w.GPUs {
			if g < len(rows) && !profile.IsNull(rows[g].V[profile.GPUUtilPct]) {
				busy += rows[g].V[profile.GPUUtilPct] / 100
			}
		}
		dt := now.Sub(c.last).Seconds()
		c.last = now
		model := strings.TrimSuffix(app, "-infer")
		for k, r := range simRates {
			c.v[k] += math.Round(r.perS * busy * dt)
			w.Work = append(w.Work, profile.Work{Unit: r.unit, Model: model,
				Series: r.metric + `{model_name="` + model + `",pod="` + w.Name + `"}`, V: profile.Values{c.v[k]}})
		}
	}
}

// idHash is a workload id's FNV-1a hash.
func idHash(id string) uint64 {
	h := fnv.New64a()
	h.Write([]byte(id))
	return h.Sum64()
}
