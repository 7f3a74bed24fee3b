package recommend

import (
	"context"
	"errors"
	"fmt"
	"math"
	"regexp"

	"github.com/seedance/seedance/analyze"
	"github.com/seedance/seedance/profile"
)

// suggestMigrate is the kind of the suggestions a migration plan adds to a
// report.
const suggestMigrate = "migrate"

// podSuffix is the ReplicaSet hash and pod suffix Kubernetes adds to names.
var podSuffix = regexp.MustCompile(`-[0-9a-f]{5,10}-[a-z0-9]{5}$`)

// appOf names a workload's application: its "app" label, else its pod name
// without the generated suffix.
func appOf(w profile.Workload) string {
	if a := w.Labels["app"]; a != "" {
		return a
	}
	return podSuffix.ReplaceAllString(w.Name, "")
}

// migrationSuggestions summarises the plan the way a person says it:
// "node-gpu-04: migrate 2 pending llama-7b-infer pods to node-gpu-12
// (higher NVLink bandwidth)", one line per source node, application and
// target. fleet (analyze.Report.Fleet) names each workload's application
// and the node a pending one waits on.
func migrationSuggestions(plan *Plan, fleet *analyze.Fleet) []analyze.Suggestion {
	type key struct{ from, app, to string }
	type group struct {
		n       int
		pending bool
		higher  bool
		saving  float64
	}
	type seen struct {
		node string
		w    *profile.Workload
	}
	byID := map[string][]seen{}
	for ni := range fleet.Nodes {
		n := &fleet.Nodes[ni]
		for _, w := range n.Workloads {
			byID[w.ID] = append(byID[w.ID], seen{n.Name, w})
		}
	}
	groups := map[key]*group{}
	var order []key
	for _, m := range plan.Moves {
		from, pending := "", m.From == nil
		if m.From != nil {
			from = *m.From
		}
		app := m.Workload
		for _, c := range byID[m.Workload] {
			if pending == (c.w.State == profile.StatePending) {
				if pending {
					from = c.node
				}
				app = appOf(*c.w)
				break
			}
		}
		k := key{from, app, m.To}
		g := groups[k]
		if g == nil {
			g = &group{pending: pending}
			groups[k] = g
			order = append(order, k)
		}
		g.n++
		g.higher = g.higher || m.HigherNVLink
		g.saving += m.SavingsUSDPerHour
	}
	var out []analyze.Suggestion
	for _, k := range order {
		g := groups[k]
		what := "pod"
		if g.n > 1 {
			what = "pods"
		}
		state := ""
		if g.pending {
			state = "pending "
		}
		text := fmt.Sprintf("%s: migrate %d %s%s %s to %s", k.from, g.n, state, k.app, what, k.to)
		if g.higher {
			text += " (higher NVLink bandwidth)"
		}
		if g.saving > 0 {
			text += fmt.Sprintf(": frees %s, saves $%.2f/h", k.from, g.saving)
		}
		out = append(out, analyze.Suggestion{Kind: suggestMigrate, Node: k.from, Text: text + "; seedance recommend writes the commands", SavingsUSDPerHour: math.Round(g.saving*1e4) / 1e4})
	}
	return out
}

// FromReport builds the planner's cluster from an analysis kept with
// analyze.Params.KeepFleet: each GPU's mean utilization over the merged
// window decides whether an unclaimed GPU is busy (at or above the
// report's idle threshold).
func FromReport(r *analyze.Report, price PriceFunc) (*Cluster, error) {
	if r.Fleet == nil {
		return nil, errors.New("the analysis kept no fleet (analyze.Params.KeepFleet)")
	}
	return fromFleet(r.Fleet, price, r.Params.IdleThresholdPct), nil
}

// draining names the nodes the report advises draining (release-node)
// that run no workload at the window's end: the plan moves no work onto
// them. A node still running one is not drained by that advice (it has no
// command), so it may take work.
func draining(r *analyze.Report) map[string]bool {
	running := map[string]bool{}
	if r.Fleet != nil {
		for _, n := range r.Fleet.Nodes {
			for _, w := range n.Workloads {
				if w.State != profile.StatePending {
					running[n.Name] = true
				}
			}
		}
	}
	out := map[string]bool{}
	for _, s := range r.Suggestions {
		if s.Kind == analyze.SuggestReleaseNode && !running[s.Node] {
			out[s.Node] = true
		}
	}
	return out
}

// stale names the nodes whose data ends too long before the window does
// (what they run now is unknown), and the idle nodes that unscheduled work
// could run: the plan neither releases them nor moves work onto them.
func stale(r *analyze.Report) map[string]bool {
	out := map[string]bool{}
	for _, n := range r.Nodes {
		if n.Stale || len(n.WaitingFor) > 0 {
			out[n.Name] = true
		}
	}
	return out
}

// PlanReport plans migrations from an analysis: the plan, and its
// suggestions for the report; an error when no plan can be made.
func PlanReport(ctx context.Context, r *analyze.Report, price PriceFunc, o Options) (*Plan, []analyze.Suggestion, error) {
	if r.PendingUnknown != "" {
		return refused(r.PendingUnknown), nil, nil
	}
	o.Avoid, o.Keep = draining(r), stale(r)
	c, err := FromReport(r, price)
	if err != nil {
		return nil, nil, err
	}
	plan, err := makePlan(ctx, c, o)
	if err != nil {
		return nil, nil, err
	}
	if end := r.Window.End; !end.IsZero() && o.MaxAge > 0 && !simulated(r) {
		end = end.UTC()
		plan.DataUntil, plan.MaxAgeS = &end, o.MaxAge.Seconds()
	}
	return plan, migrationSuggestions(plan, r.Fleet), nil
}

// simulated says whether every input of the analysis is a simulated
// cluster's: its clock is synthetic (it starts at sim.DefaultStart), so a
// plan of it has no age.
func simulated(r *analyze.Report) bool {
	for _, in := range r.Inputs {
		if in.Source != "sim" {
			return false
		}
	}
	return len(r.Inputs) > 0
}
