package analyze

import (
	"fmt"
	"regexp"
	"strings"

	"github.com/seedance/seedance/profile"
	"github.com/seedance/seedance/recommend"
)

// SuggestMigrate is a suggestion from the migration plan.
const SuggestMigrate = "migrate"

// clusterProfile is the profile as the planner needs it: the nodes, their
// GPUs with their memory and mean utilization (a one-sample series), their
// workloads and topology. It is built from what the streaming pass kept.
func (a *analysis) clusterProfile() *profile.Profile {
	p := &profile.Profile{}
	for _, n := range a.order {
		pn := profile.Node{Name: n.name, Labels: n.labels, Topology: n.topology}
		for _, g := range n.gpus {
			mean := profile.Null
			if g.utilW > 0 {
				mean = g.utilSum / g.utilW
			}
			pn.GPUs = append(pn.GPUs, profile.GPU{Index: g.index, UUID: g.uuid, Model: g.model, MemoryTotalBytes: g.memTotal,
				MIG: g.mig, Series: profile.Series{T: profile.Values{0}, GPUUtilPct: profile.Values{mean}}})
		}
		pn.Workloads = n.workloads.sorted()
		p.Nodes = append(p.Nodes, pn)
	}
	return p
}

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
// target.
func migrationSuggestions(plan *recommend.Plan, nodes map[string]*nodeAcc) []Suggestion {
	type key struct{ from, app, to string }
	type group struct {
		n       int
		pending bool
		higher  bool
		saving  float64
	}
	groups := map[key]*group{}
	var order []key
	for _, m := range plan.Moves {
		from, pending := "", m.From == nil
		if m.From != nil {
			from = *m.From
		}
		app := m.Workload
		for _, n := range nodes {
			if w, ok := n.workloads.get(m.Workload); ok && (pending == (w.State == profile.StatePending)) {
				if pending {
					from = n.name
				}
				app = appOf(w)
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
		g.higher = g.higher || strings.Contains(m.Reason, "higher NVLink bandwidth")
		g.saving += m.SavingsUSDPerHour
	}
	var out []Suggestion
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
		out = append(out, Suggestion{Kind: SuggestMigrate, Node: k.from, Text: text + "; seedance recommend writes the commands", SavingsUSDPerHour: round(g.saving, 4)})
	}
	return out
}
