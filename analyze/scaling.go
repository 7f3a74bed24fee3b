package analyze

import (
	"math"
	"sort"
	"time"

	"github.com/seedance/seedance/pricing"
	"github.com/seedance/seedance/profile"
)

// ScalingParams configure the elastic-scaling what-if (docs/scaling.md).
type ScalingParams struct {
	Period         time.Duration
	Weights        map[string]float64 // metric name → weight
	PreferSMActive bool
	Alpha          float64 // WMA weight of the newest period
	TargetPct      float64
	LowerPct       float64
	UpPeriods      int
	DownPeriods    int
	MinGPUs        int
	MaxGPUs        int // 0: the pool's GPUs
	// HPA baseline.
	HPATolerance     float64
	HPAStabilization time.Duration
}

// DefaultScaling are the documented defaults.
func DefaultScaling() ScalingParams {
	return ScalingParams{Period: time.Minute, Weights: map[string]float64{"gpu_util_pct": 0.6, "mem_bw_util_pct": 0.4},
		Alpha: 0.8, TargetPct: 70, LowerPct: 30, UpPeriods: 3, DownPeriods: 5, MinGPUs: 1,
		HPATolerance: 0.1, HPAStabilization: 300 * time.Second}
}

// Scaling is the report's scaling section.
type Scaling struct {
	PeriodS float64       `json:"period_s"`
	Pools   []ScalingPool `json:"pools"`
}

// ScalingPool is one pool's replay under both policies.
type ScalingPool struct {
	Pool        string    `json:"pool"`
	GPUs        int       `json:"gpus"`
	PricePerGPU float64   `json:"price_usd_per_gpu_hour"`
	Demand      []float64 `json:"demand_gpus"` // GPU-equivalents busy, per period
	StaticGPUH  float64   `json:"static_gpu_hours"`
	WMA         Policy    `json:"wma"`
	HPA         Policy    `json:"hpa_baseline"`
}

// Policy is what one autoscaling policy would have provisioned.
type Policy struct {
	Capacity         []int   `json:"capacity_gpus"` // per period
	ProvisionedGPUH  float64 `json:"provisioned_gpu_hours"`
	SavingGPUH       float64 `json:"saving_gpu_hours"`
	SavingUSD        float64 `json:"saving_usd"`
	ScaleEvents      int     `json:"scale_events"`
	UnderProvisioned int     `json:"under_provisioned_periods"`
}

// loadWeights are the scaling weights by metric, resolved once from their
// names so that the per-sample signal does no name lookups.
type loadWeights struct {
	w        [profile.NumMetrics]float64
	preferSM bool
}

func resolveWeights(w map[string]float64, preferSM bool) *loadWeights {
	lw := &loadWeights{preferSM: preferSM}
	for name, weight := range w {
		if m, ok := profile.MetricByName(name); ok && weight > 0 {
			lw.w[m] = weight
		}
	}
	return lw
}

// composite is the weighted mean of the metrics present at sample i, in
// percent, or NaN when none is.
func composite(s *profile.Series, i int, w map[string]float64, preferSM bool) float64 {
	return resolveWeights(w, preferSM).at(s, i)
}

func (lw *loadWeights) at(s *profile.Series, i int) float64 {
	sum, wsum := 0.0, 0.0
	for m := profile.Metric(0); m < profile.NumMetrics; m++ {
		weight := lw.w[m]
		if weight == 0 {
			continue
		}
		from := m
		if m == profile.GPUUtilPct && lw.preferSM && s.SMActivePct != nil && !profile.IsNull(s.SMActivePct[i]) {
			from = profile.SMActivePct
		}
		col := *s.Col(from)
		if col == nil || profile.IsNull(col[i]) {
			continue
		}
		sum += weight * col[i]
		wsum += weight
	}
	if wsum == 0 {
		return math.NaN()
	}
	return sum / wsum
}

// demandAcc accumulates a node's busy GPU-seconds per period, sparsely: a
// node holds entries only for the periods it has samples in, so its memory
// follows the input, not the window's length.
type demandAcc struct {
	periods int // periods in the window
	busy    map[int]float64
}

func (d *demandAcc) add(t, cov, pct, period float64) {
	i := int(t / period)
	if i < 0 || i >= d.periods || math.IsNaN(pct) {
		return
	}
	if d.busy == nil {
		d.busy = map[int]float64{}
	}
	d.busy[i] += pct / 100 * cov
}

// replayWMA runs the WMA autoscaler over the pool's demand (docs/scaling.md).
func replayWMA(demand []float64, static int, sp ScalingParams) Policy {
	maxG := sp.MaxGPUs
	if maxG <= 0 {
		maxG = static
	}
	clamp := func(n int) int { return max(sp.MinGPUs, min(maxG, n)) }
	capNow := static
	var p Policy
	wma, up, down := 0.0, 0, 0
	for i, d := range demand {
		p.Capacity = append(p.Capacity, capNow)
		if d > float64(capNow)+1e-9 {
			p.UnderProvisioned++
		}
		util := 100 * d / math.Max(1, float64(capNow))
		if i == 0 {
			wma = util
		} else {
			wma = sp.Alpha*util + (1-sp.Alpha)*wma
		}
		up, down = next(wma > sp.TargetPct*1.1, up), next(wma < sp.LowerPct, down)
		want := clamp(int(math.Ceil(d/(sp.TargetPct/100) - 1e-9)))
		switch {
		case up >= sp.UpPeriods && want > capNow:
			capNow, up = want, 0
			p.ScaleEvents++
		case down >= sp.DownPeriods && want < capNow:
			capNow, down = want, 0
			p.ScaleEvents++
		}
	}
	return p
}

func next(cond bool, n int) int {
	if cond {
		return n + 1
	}
	return 0
}

// replayHPA runs Kubernetes' HPA rule: desired = ceil(current × metric /
// target), no change within the tolerance, scale-down to the highest
// recommendation of the stabilization window.
func replayHPA(demand []float64, static int, sp ScalingParams, period float64) Policy {
	maxG := sp.MaxGPUs
	if maxG <= 0 {
		maxG = static
	}
	window := max(1, int(math.Round(sp.HPAStabilization.Seconds()/period)))
	capNow := static
	var p Policy
	// The autoscaler was running before the window, at the static size.
	recs := make([]int, window)
	for i := range recs {
		recs[i] = static
	}
	for _, d := range demand {
		p.Capacity = append(p.Capacity, capNow)
		if d > float64(capNow)+1e-9 {
			p.UnderProvisioned++
		}
		metric := 100 * d / math.Max(1, float64(capNow))
		desired := capNow
		if r := metric / sp.TargetPct; math.Abs(r-1) > sp.HPATolerance {
			desired = int(math.Ceil(float64(capNow)*r - 1e-9))
		}
		desired = max(sp.MinGPUs, min(maxG, desired))
		recs = append(recs, desired)
		if len(recs) > window {
			recs = recs[1:]
		}
		target := desired
		if desired < capNow {
			for _, r := range recs {
				target = max(target, r)
			}
		}
		if target != capNow {
			capNow = target
			p.ScaleEvents++
		}
	}
	return p
}

// poolOf is a node's pool (NodeReport.Pool), its GPU model and its whole
// GPUs.
func (a *analysis) poolOf(n *nodeAcc) (pool, model string, gpus int) {
	for _, g := range n.gpus {
		if g.parent() == "" {
			gpus++
			model = g.model
		}
	}
	if by := a.poolBy(); by != "" {
		pool = n.labels[by]
		if pool == "" {
			pool = "(no " + by + ")"
		}
		return pool, model, gpus
	}
	return shortModel(model), model, gpus
}

// scalingReport groups nodes into pools and replays both policies.
func (a *analysis) scalingReport(pricer *pricing.Pricer) *Scaling {
	sp := *a.p.Scaling
	period := sp.Period.Seconds()
	type pool struct {
		gpus   int
		model  string
		demand []float64
	}
	pools := map[string]*pool{}
	for _, n := range a.order {
		name, model, gpus := a.poolOf(n)
		pl := pools[name]
		if pl == nil {
			pl = &pool{model: model, demand: make([]float64, n.demand.periods)}
			pools[name] = pl
		}
		pl.gpus += gpus
		for i, b := range n.demand.busy {
			pl.demand[i] += b / period
		}
	}
	out := &Scaling{PeriodS: period, Pools: []ScalingPool{}}
	names := make([]string, 0, len(pools))
	for k := range pools {
		names = append(names, k)
	}
	sort.Strings(names)
	for _, name := range names {
		pl := pools[name]
		sp2 := ScalingPool{Pool: name, GPUs: pl.gpus, PricePerGPU: pricer.Price(pl.model), Demand: make([]float64, len(pl.demand))}
		for i, d := range pl.demand {
			sp2.Demand[i] = round(d, 3)
		}
		sp2.StaticGPUH = sig(float64(pl.gpus) * float64(len(pl.demand)) * period / 3600)
		sp2.WMA = finishPolicy(replayWMA(pl.demand, pl.gpus, sp), sp2, period)
		sp2.HPA = finishPolicy(replayHPA(pl.demand, pl.gpus, sp, period), sp2, period)
		out.Pools = append(out.Pools, sp2)
	}
	return out
}

func finishPolicy(p Policy, pool ScalingPool, period float64) Policy {
	sum := 0
	for _, c := range p.Capacity {
		sum += c
	}
	p.ProvisionedGPUH = sig(float64(sum) * period / 3600)
	p.SavingGPUH = sig(pool.StaticGPUH - p.ProvisionedGPUH)
	p.SavingUSD = sig(p.SavingGPUH * pool.PricePerGPU)
	return p
}
