package pricing

import (
	"fmt"
	"maps"
	"math"
	"path"
	"slices"
	"strconv"
	"strings"

	"gopkg.in/yaml.v3"
)

// NodeCostLabel is the node label that carries a node's price per GPU-hour
// as billing knows it: the Prometheus source sets it from OpenCost's
// node_gpu_hourly_cost, so that spot, on-demand and reserved nodes each
// get their own price (docs/pricing.md).
const NodeCostLabel = "seedance.io/gpu-hourly-cost"

// SourceOpenCost and SourceFile are where a node's price came from.
const (
	SourceOpenCost = "opencost"
	SourceFile     = "price file"
)

// Rule is one entry of a price file: the price per GPU-hour of the GPUs of
// the nodes it matches. Every condition given must hold: Node is a node
// name or a glob (gpu-spot-*), Labels are node labels that must be equal
// (node.kubernetes.io/instance-type: p5.48xlarge), Model a case-insensitive
// substring of the GPU model.
type Rule struct {
	Node          string            `yaml:"node"`
	Labels        map[string]string `yaml:"labels"`
	Model         string            `yaml:"model"`
	USDPerGPUHour *float64          `yaml:"usd_per_gpu_hour"`
}

// ParseFile reads a price file: a prices: list of rules, the first match
// wins.
func ParseFile(b []byte, name string) ([]Rule, error) {
	var f struct {
		Prices []Rule `yaml:"prices"`
	}
	dec := yaml.NewDecoder(strings.NewReader(string(b)))
	dec.KnownFields(true)
	if err := dec.Decode(&f); err != nil {
		return nil, fmt.Errorf("price file %s: %v", name, strings.Join(strings.Fields(err.Error()), " "))
	}
	for i, r := range f.Prices {
		switch {
		case r.USDPerGPUHour == nil || !Amount(*r.USDPerGPUHour):
			return nil, fmt.Errorf("price file %s: price %d: usd_per_gpu_hour must be 0 or a number from a cent (0.01) to 1e6", name, i+1)
		case r.Node == "" && len(r.Labels) == 0 && r.Model == "":
			return nil, fmt.Errorf("price file %s: price %d matches every GPU: give node, labels or model", name, i+1)
		}
		if _, err := path.Match(r.Node, ""); err != nil {
			return nil, fmt.Errorf("price file %s: price %d: node %q: %v", name, i+1, r.Node, err)
		}
	}
	return f.Prices, nil
}

// WithRules returns a Pricer that prices by the price file's rules first.
func (p *Pricer) WithRules(rules []Rule) *Pricer {
	q := New(p.user, p.fallback)
	q.rules, q.preferDiscovered = rules, p.preferDiscovered
	return q
}

// LabelKeys are the node labels pricing reads: the node cost label and
// those the rules name.
func (p *Pricer) LabelKeys() []string {
	keys := []string{NodeCostLabel}
	for _, r := range p.rules {
		for k := range r.Labels {
			keys = append(keys, k)
		}
	}
	return keys
}

// PriceOn is the price per GPU-hour of a GPU of the model on the node, and
// where it came from. A price given on purpose (the first price-file rule
// that matches, else the user's price of the model) wins over the node's
// billed cost as OpenCost discovered it (NodeCostLabel), unless the
// Pricer prefers what it discovers (PreferDiscovered); then the built-in
// table and the fallback. Where both are known and differ by more than a
// cent, the disagreement is kept for Disagreements.
func (p *Pricer) PriceOn(node string, labels map[string]string, model string) (float64, string) {
	cost, billed := nodeCost(labels)
	usd, source, explicit := p.explicit(node, labels, model)
	switch {
	case explicit && billed:
		p.disagree(node, model, cost, usd, source)
		if p.preferDiscovered {
			return cost, SourceOpenCost
		}
		return usd, source
	case billed:
		return cost, SourceOpenCost
	}
	return usd, source
}

// nodeCost is the node's billed cost per GPU-hour (NodeCostLabel), when
// it carries a price.
func nodeCost(labels map[string]string) (float64, bool) {
	l, ok := labels[NodeCostLabel]
	if !ok {
		return 0, false
	}
	v, err := strconv.ParseFloat(l, 64)
	return v, err == nil && Amount(v)
}

// explicit is the price given on purpose for the GPU: the first
// price-file rule that matches, else the user's price of its model; else
// (explicit false) the built-in table's or the fallback.
func (p *Pricer) explicit(node string, labels map[string]string, model string) (float64, string, bool) {
	for _, r := range p.rules {
		if r.matches(node, labels, model) {
			return *r.USDPerGPUHour, SourceFile, true
		}
	}
	m := p.match(model)
	return m.usd, m.source, m.source == SourceUser
}

// disagree keeps a node's two prices when they differ by more than a cent.
func (p *Pricer) disagree(node, model string, discovered, given float64, source string) {
	if math.Abs(discovered-given) <= 0.01 {
		return
	}
	k := disagreement{source: source, discovered: discovered, given: given}
	if p.disagreements == nil {
		p.disagreements = map[disagreement]map[string]bool{}
	}
	if p.disagreements[k] == nil {
		p.disagreements[k] = map[string]bool{}
	}
	p.disagreements[k][node+" ("+model+")"] = true
}

// disagreement is a pair of prices that differ, and the given one's source.
type disagreement struct {
	source            string
	discovered, given float64
}

// Disagreements says, a line per pair of prices, where OpenCost's price of
// a node and the one given on purpose differ by more than a cent, and
// which was used.
func (p *Pricer) Disagreements() []string {
	var out []string
	for k, nodes := range p.disagreements {
		used := "the " + k.source + "'s is used (pricing.prefer_discovered: true uses OpenCost's)"
		if p.preferDiscovered {
			used = "OpenCost's is used (pricing.prefer_discovered)"
		}
		names := slices.Sorted(maps.Keys(nodes))
		more := ""
		if len(names) > 3 {
			names, more = names[:3], fmt.Sprintf(" and %d more", len(names)-3)
		}
		out = append(out, fmt.Sprintf("OpenCost prices %s at $%g per GPU-hour, the %s at $%g: %s",
			strings.Join(names, ", ")+more, k.discovered, k.source, k.given, used))
	}
	slices.Sort(out)
	return out
}

// PreferDiscovered returns a Pricer that prices a node by its billed cost
// (OpenCost) even where a price is given on purpose.
func (p *Pricer) PreferDiscovered(on bool) *Pricer {
	p.preferDiscovered = on
	return p
}

func (r Rule) matches(node string, labels map[string]string, model string) bool {
	if r.Node != "" {
		if ok, _ := path.Match(r.Node, node); !ok {
			return false
		}
	}
	for k, v := range r.Labels {
		if labels[k] != v {
			return false
		}
	}
	return r.Model == "" || strings.Contains(strings.ToLower(model), strings.ToLower(r.Model))
}

// NodePrice is PriceOn's price alone, for the planner.
func (p *Pricer) NodePrice(node string, labels map[string]string, model string) float64 {
	v, _ := p.PriceOn(node, labels, model)
	return v
}

// Amount says whether v can be a price per GPU-hour: 0 (free), or from a
// cent to 1e6 USD. Less than a cent is a mistake (1e-320 made +Inf and NaN
// of the figures divided by it).
func Amount(v float64) bool { return v == 0 || v >= 0.01 && v <= 1e6 }
