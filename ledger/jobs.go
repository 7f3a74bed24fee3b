package ledger

import (
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
	"sort"
	"strings"

	"github.com/seedance/seedance/analyze"
	"github.com/seedance/seedance/profile"
)

// ClassLabel is the workload label that says whether a workload trains or
// serves ("training" or "inference"); without it, a batch job (a Slurm
// job, a Kubernetes Job's pod) trains and a Deployment's, ReplicaSet's or
// StatefulSet's pod serves.
const ClassLabel = "workload-type"

// Workload classes.
const (
	ClassTraining  = "training"
	ClassInference = "inference"
	ClassOther     = "other"
)

// workloadRow is one workload's sums over some rows.
type workloadRow struct {
	cluster                string
	w                      profile.Workload
	first, last            int64
	held, used, idle, cost float64
	energy                 float64
	// energyKnown: every row has the workload's energy (rows counted
	// before schema 2 have none).
	energyKnown bool
	// owner, when set, makes the row the sums of n workloads of that
	// owner (owner.go), of which measured finished with a measured energy
	// (measuredEnergy, J, together).
	owner          *owner
	n, measured    int
	measuredEnergy float64
}

// key is the row's value at a level of the grouping.
func (r *workloadRow) key(level string) string {
	if level == "cluster" {
		return r.cluster
	}
	if r.owner != nil && level == "controller" {
		return r.owner.controller
	}
	return analyze.GroupKey(r.w, level)
}

// keys is the row's key at each level.
func (r *workloadRow) keys(levels []string) []string {
	k := make([]string, len(levels))
	for i, l := range levels {
		k[i] = r.key(l)
	}
	return k
}

// count is how many workloads the row sums, and how many of them have a
// measured energy, and theirs.
func (r *workloadRow) count() (n, measured int, energy float64) {
	if r.owner != nil {
		return r.n, r.measured, r.measuredEnergy
	}
	if r.energyKnown && r.energy > 0 {
		return 1, 1, r.energy
	}
	return 1, 0, 0
}

func (r *workloadRow) class() string {
	if r.owner != nil {
		return r.owner.class
	}
	return Class(r.w)
}

func (r *workloadRow) unallocated() bool { return r.owner == nil && r.w.ID == "" }

// workloadRows sums each workload's rows of the window (workload "": what
// no workload held), with the workloads' names, kinds and labels.
func (l *Ledger) workloadRows(ctx context.Context, tx *sql.Tx, sp span) ([]workloadRow, error) {
	cols := `cluster, workload, held_s, used_s, idle_s, cost_usd, energy_j`
	out, err := l.sums(ctx, tx, `SELECT cluster, workload, `+sumCols+` FROM (`+sp.rows("seedance_hold", cols, cols)+`) x GROUP BY cluster, workload`, sp.args()...)
	if err != nil {
		return nil, err
	}
	return out, l.describe(ctx, tx, out, `last_bucket >= $1 AND first_bucket < $2 AND `+inList("cluster", 3, len(sp.clusters)), append([]any{sp.lo, sp.hi}, names(sp.clusters)...)...)
}

// finishedRows are the workloads whose last bucket is in [lo, hi), with
// the sums of their whole tenure: the window's rows for those that began
// in it, their daily rollups since they began for the others.
func (l *Ledger) finishedRows(ctx context.Context, tx *sql.Tx, sp span, lo, hi int64, window []workloadRow) ([]workloadRow, error) {
	var out []workloadRow
	for _, r := range window {
		if r.w.ID != "" && r.first >= lo && r.last >= lo && r.last < hi {
			out = append(out, r)
		}
	}
	in := inList("cluster", 4, len(sp.clusters))
	args := append([]any{lo, hi, sp.maxProv}, names(sp.clusters)...)
	older, err := l.sums(ctx, tx, `SELECT h.cluster, h.workload, `+sumCols+` FROM seedance_hold_day h WHERE h.provisional <= $3 AND h.`+in+`
AND EXISTS (SELECT 1 FROM seedance_workload w WHERE w.cluster = h.cluster AND w.id = h.workload AND w.last_bucket >= $1 AND w.last_bucket < $2 AND w.first_bucket < $1)
GROUP BY h.cluster, h.workload`, args...)
	if err != nil {
		return nil, err
	}
	if err := l.describe(ctx, tx, older, `last_bucket >= $1 AND last_bucket < $2 AND first_bucket < $1 AND `+inList("cluster", 3, len(sp.clusters)),
		append([]any{lo, hi}, names(sp.clusters)...)...); err != nil {
		return nil, err
	}
	return append(out, older...), nil
}

// sumCols are a workload's sums over its rows, and how many of them have
// no energy.
const sumCols = `SUM(held_s), SUM(used_s), SUM(idle_s), SUM(cost_usd), COALESCE(SUM(energy_j), 0), SUM(CASE WHEN energy_j IS NULL THEN 1 ELSE 0 END)`

// sums runs a query of a workload and its sumCols, a row each.
func (l *Ledger) sums(ctx context.Context, tx *sql.Tx, q string, args ...any) ([]workloadRow, error) {
	rows, err := tx.QueryContext(ctx, q, args...)
	if err != nil {
		return nil, fmt.Errorf("%w: %v", ErrLedger, err)
	}
	defer rows.Close()
	var out []workloadRow
	for rows.Next() {
		var r workloadRow
		var unknown int64
		if err := rows.Scan(&r.cluster, &r.w.ID, &r.held, &r.used, &r.idle, &r.cost, &r.energy, &unknown); err != nil {
			return nil, fmt.Errorf("%w: %v", ErrLedger, err)
		}
		r.energyKnown = unknown == 0
		out = append(out, r)
	}
	return out, rows.Err()
}

// describe fills in the rows' workloads' names, kinds, labels and buckets,
// read from the workloads that where selects (which must hold them all).
func (l *Ledger) describe(ctx context.Context, tx *sql.Tx, out []workloadRow, where string, args ...any) error {
	rows, err := tx.QueryContext(ctx, `SELECT cluster, id, name, kind, labels, first_bucket, last_bucket FROM seedance_workload WHERE `+where, args...)
	if err != nil {
		return fmt.Errorf("%w: %v", ErrLedger, err)
	}
	defer rows.Close()
	at := make(map[[2]string]int, len(out))
	for i, r := range out {
		at[[2]string{r.cluster, r.w.ID}] = i
	}
	parsed := map[string]map[string]string{} // workloads share their labels: parse each set once
	for rows.Next() {
		var cluster, id, name, kind, labels string
		var first, last int64
		if err := rows.Scan(&cluster, &id, &name, &kind, &labels, &first, &last); err != nil {
			return fmt.Errorf("%w: %v", ErrLedger, err)
		}
		i, ok := at[[2]string{cluster, id}]
		if !ok {
			continue
		}
		m, ok := parsed[labels]
		if !ok {
			if err := json.Unmarshal([]byte(labels), &m); err != nil {
				return fmt.Errorf("%w: workload %s's labels: %v", ErrLedger, id, err)
			}
			parsed[labels] = m
		}
		r := &out[i]
		r.w.Name, r.w.Kind, r.w.Labels, r.first, r.last = name, kind, m, first, last
	}
	return rows.Err()
}

// jobs makes the window's Jobs: finished are the workloads that finished
// in it, with their rows of all time; window are the workloads' rows of
// the window.
func jobs(finished, window []workloadRow, levels []string) *Jobs {
	out := &Jobs{Finished: []JobGroup{}, Classes: []ClassFigures{}}
	type acc struct {
		n, measured   int
		energy, hours float64
	}
	groups := map[string]*acc{}
	keys := map[string]JobGroup{}
	var all acc
	for _, r := range finished {
		if r.unallocated() {
			continue
		}
		key := r.keys(levels)
		id := strings.Join(append(key, r.w.Kind), "\x00")
		a := groups[id]
		if a == nil {
			a = &acc{}
			groups[id] = a
			keys[id] = JobGroup{Key: key, Kind: r.w.Kind}
		}
		n, measured, energy := r.count()
		for _, x := range []*acc{a, &all} {
			x.n += n
			x.hours += r.held / 3600
			x.measured += measured
			x.energy += energy / 3.6e6
		}
	}
	for id, a := range groups {
		g := keys[id]
		g.Finished, g.MeanGPUHours = a.n, analyze.Sig(a.hours/float64(a.n))
		if a.measured > 0 {
			g.MeanEnergyKWh = ptr(analyze.Sig(a.energy / float64(a.measured)))
		}
		out.Finished = append(out.Finished, g)
	}
	sort.Slice(out.Finished, func(i, j int) bool {
		a, b := out.Finished[i], out.Finished[j]
		if k := strings.Compare(strings.Join(a.Key, "\x00"), strings.Join(b.Key, "\x00")); k != 0 {
			return k < 0
		}
		return a.Kind < b.Kind
	})
	if all.measured > 0 {
		out.EnergyPerJobKWh = ptr(analyze.Sig(all.energy / float64(all.measured)))
	}
	out.Classes = classes(window)
	return out
}

// classes sums the window's rows by class.
func classes(window []workloadRow) []ClassFigures {
	byClass := map[string]*ClassFigures{}
	for _, r := range window {
		if r.unallocated() {
			continue
		}
		c := r.class()
		f := byClass[c]
		if f == nil {
			f = &ClassFigures{Class: c, EnergyKWh: ptr(0)}
			byClass[c] = f
		}
		n, _, _ := r.count()
		f.Workloads += n
		f.HeldGPUHours += r.held / 3600
		f.UsedGPUHours += r.used / 3600
		if f.EnergyKWh != nil && r.energyKnown {
			*f.EnergyKWh += r.energy / 3.6e6
		} else {
			f.EnergyKWh = nil
		}
	}
	var out []ClassFigures
	for _, c := range []string{ClassTraining, ClassInference, ClassOther} {
		if f := byClass[c]; f != nil {
			if f.HeldGPUHours > 0 {
				f.UtilizationPct = ptr(analyze.Sig(100 * f.UsedGPUHours / f.HeldGPUHours))
			}
			f.HeldGPUHours, f.UsedGPUHours = analyze.Sig(f.HeldGPUHours), analyze.Sig(f.UsedGPUHours)
			if f.EnergyKWh != nil {
				f.EnergyKWh = ptr(analyze.Sig(*f.EnergyKWh))
			}
			out = append(out, *f)
		}
	}
	if out == nil {
		out = []ClassFigures{}
	}
	return out
}

// Class is a workload's class: its ClassLabel, else a batch job trains and
// a pod of a Deployment, ReplicaSet or StatefulSet serves.
func Class(w profile.Workload) string {
	switch v := strings.ToLower(w.Labels[ClassLabel]); v {
	case ClassTraining, ClassInference:
		return v
	}
	ctrl, _, _ := strings.Cut(w.Labels[profile.ControllerLabel], "/")
	switch {
	case w.Kind == profile.KindJob, ctrl == "Job", ctrl == "CronJob":
		return ClassTraining
	case ctrl == "Deployment", ctrl == "ReplicaSet", ctrl == "StatefulSet":
		return ClassInference
	}
	return ClassOther
}

func change(before, after *float64) Change {
	c := Change{Before: before, After: after}
	if before != nil && after != nil && *before != 0 {
		c.ChangePct = ptr(analyze.Sig(100 * (*after - *before) / *before))
	}
	return c
}

// compare compares the window's report r with the baseline's.
func compare(base, r *Report) *Comparison {
	training := func(j *Jobs) *float64 {
		if j == nil { // a baseline without jobs: analyze's report
			return nil
		}
		for _, c := range j.Classes {
			if c.Class == ClassTraining {
				return c.UtilizationPct
			}
		}
		return nil
	}
	var perJob *float64
	if base.Jobs != nil {
		perJob = base.Jobs.EnergyPerJobKWh
	}
	return &Comparison{Baseline: base.Window,
		EnergyPerJobKWh:        change(perJob, r.Jobs.EnergyPerJobKWh),
		TrainingUtilizationPct: change(training(base.Jobs), training(r.Jobs)),
		IdleCostUSD:            change(base.Summary.IdleCostUSD, r.Summary.IdleCostUSD),
		IdleRatio:              change(base.Summary.IdleRatio, r.Summary.IdleRatio)}
}
