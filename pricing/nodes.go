package pricing

import (
	"fmt"
	"path"
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
		case r.USDPerGPUHour == nil || !(*r.USDPerGPUHour >= 0 && *r.USDPerGPUHour <= 1e6):
			return nil, fmt.Errorf("price file %s: price %d: usd_per_gpu_hour must be a number from 0 to 1e6", name, i+1)
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
	q.rules = rules
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
// where it came from: the node's billed cost (NodeCostLabel), else the
// first price-file rule that matches, else Price's.
func (p *Pricer) PriceOn(node string, labels map[string]string, model string) (float64, string) {
	if l, ok := labels[NodeCostLabel]; ok {
		if v, err := strconv.ParseFloat(l, 64); err == nil && v >= 0 && v <= 1e6 {
			return v, SourceOpenCost
		}
	}
	for _, r := range p.rules {
		if r.matches(node, labels, model) {
			return *r.USDPerGPUHour, SourceFile
		}
	}
	return p.Price(model), p.Source(model)
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
