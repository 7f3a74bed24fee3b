package pricing

import (
	"strings"
	"testing"
)

func TestPriceOn(t *testing.T) {
	rules, err := ParseFile([]byte(`prices:
  - node: gpu-spot-*
    usd_per_gpu_hour: 1.5
  - labels: {node.kubernetes.io/instance-type: p5.48xlarge}
    model: H100
    usd_per_gpu_hour: 3.93
  - model: a100
    usd_per_gpu_hour: 1.1
`), "prices.yaml")
	if err != nil {
		t.Fatal(err)
	}
	p := New(map[string]float64{"H100": 2.49}, 1).WithRules(rules)
	p5 := map[string]string{"node.kubernetes.io/instance-type": "p5.48xlarge"}
	for _, c := range []struct {
		node   string
		labels map[string]string
		model  string
		want   float64
		source string
	}{
		{"gpu-spot-7", p5, "NVIDIA H100 80GB HBM3", 1.5, SourceFile},                                       // the first rule that matches
		{"gpu-7", p5, "NVIDIA H100 80GB HBM3", 3.93, SourceFile},                                           // label and model
		{"gpu-7", nil, "NVIDIA H100 80GB HBM3", 2.49, SourceUser},                                          // no rule: --gpu-price
		{"gpu-7", p5, "NVIDIA A100-SXM4-80GB", 1.1, SourceFile},                                            // model, any case
		{"gpu-7", nil, "NVIDIA L4", 0.805, SourceTable},                                                    // the built-in table
		{"gpu-7", nil, "Tesla K80", 1, SourceFallback},                                                     // the fallback
		{"gpu-spot-7", map[string]string{NodeCostLabel: "0.61"}, "NVIDIA H100 80GB HBM3", 1.5, SourceFile}, // a given price wins over billing
		{"gpu-7", map[string]string{NodeCostLabel: "0.61"}, "NVIDIA H100 80GB HBM3", 2.49, SourceUser},     // --gpu-price too
		{"gpu-7", map[string]string{NodeCostLabel: "0.61"}, "NVIDIA L4", 0.61, SourceOpenCost},             // billing over the built-in table
		{"gpu-7", map[string]string{NodeCostLabel: "2.495"}, "NVIDIA H100 80GB HBM3", 2.49, SourceUser},    // within a cent: agreed
		{"gpu-7", map[string]string{NodeCostLabel: "-3"}, "NVIDIA L4", 0.805, SourceTable},                 // not a price
	} {
		got, source := p.PriceOn(c.node, c.labels, c.model)
		if got != c.want || source != c.source {
			t.Errorf("%s %v %s: %v (%s), want %v (%s)", c.node, c.labels, c.model, got, source, c.want, c.source)
		}
	}
}

// TestPricesDisagree: where OpenCost's price of a node and a price given
// on purpose differ by more than a cent, one line says so and which was
// used; pricing.prefer_discovered uses OpenCost's.
func TestPricesDisagree(t *testing.T) {
	rules, err := ParseFile([]byte("prices:\n  - model: A100\n    usd_per_gpu_hour: 1.29\n"), "prices.yaml")
	if err != nil {
		t.Fatal(err)
	}
	for _, prefer := range []bool{false, true} {
		p := New(nil, 1).WithRules(rules).PreferDiscovered(prefer)
		billed := map[string]string{NodeCostLabel: "2.49"}
		want, source, used := 1.29, SourceFile, "the price file's is used"
		if prefer {
			want, source, used = 2.49, SourceOpenCost, "OpenCost's is used"
		}
		for _, node := range []string{"gpu-1", "gpu-2", "gpu-3", "gpu-4"} {
			if got, src := p.PriceOn(node, billed, "NVIDIA A100-SXM4-80GB"); got != want || src != source {
				t.Errorf("prefer %v: %s at %v (%s), want %v (%s)", prefer, node, got, src, want, source)
			}
		}
		p.PriceOn("gpu-5", map[string]string{NodeCostLabel: "1.295"}, "NVIDIA A100-SXM4-80GB") // within a cent
		got := p.Disagreements()
		line := "OpenCost prices gpu-1 (NVIDIA A100-SXM4-80GB), gpu-2 (NVIDIA A100-SXM4-80GB), gpu-3 (NVIDIA A100-SXM4-80GB) and 1 more at $2.49 per GPU-hour, the price file at $1.29: " + used
		if len(got) != 1 || !strings.HasPrefix(got[0], line) {
			t.Errorf("prefer %v: %q, want one line %q", prefer, got, line)
		}
	}
}

func TestParseFileErrors(t *testing.T) {
	for _, c := range []struct{ in, want string }{
		{"prices:\n  - model: H100\n", "usd_per_gpu_hour must be 0 or a number from a cent"},
		{"prices:\n  - model: H100\n    usd_per_gpu_hour: 1e-320\n", "usd_per_gpu_hour must be 0 or a number from a cent"},
		{"prices:\n  - model: H100\n    usd_per_gpu_hour: 0.009\n", "usd_per_gpu_hour must be 0 or a number from a cent"},
		{"prices:\n  - usd_per_gpu_hour: 2\n", "matches every GPU"},
		{"prices:\n  - model: H100\n    usd_per_gpu_hour: -1\n", "usd_per_gpu_hour must be 0 or a number from a cent"},
		{"prices:\n  - node: '['\n    usd_per_gpu_hour: 1\n", "syntax error in pattern"},
		{"prices:\n  - modle: H100\n    usd_per_gpu_hour: 1\n", "field modle not found"},
		{"prices: [", "price file p.yaml"},
	} {
		_, err := ParseFile([]byte(c.in), "p.yaml")
		if err == nil || !strings.Contains(err.Error(), c.want) || strings.Contains(err.Error(), "\n") {
			t.Errorf("%q: %v, want one line with %q", c.in, err, c.want)
		}
	}
}
