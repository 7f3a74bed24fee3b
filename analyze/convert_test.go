package analyze

import (
	"bytes"
	"context"
	"encoding/json"
	"testing"
	"time"

	"github.com/seedance/seedance/profile"
	"github.com/seedance/seedance/source/sim"
)

// TestConvertOnlyKeepsTheReport: the analysis converts only the columns
// reads names (the rest are checked, not converted); its report is the one
// it makes when every column is converted (a profile streamed from memory
// has them all), for every section and every scaling weight.
func TestConvertOnlyKeepsTheReport(t *testing.T) {
	p, err := sim.Record(sim.Options{Nodes: 6, Scenario: sim.ScenarioMixed, Seed: 3}, 10*time.Second, 20*time.Minute, profile.Generator{})
	if err != nil {
		t.Fatal(err)
	}
	var doc bytes.Buffer
	if err := profile.Encode(&doc, p); err != nil {
		t.Fatal(err)
	}
	every := map[string]float64{}
	for m := profile.Metric(0); m < profile.NumMetrics; m++ {
		every[m.String()] = float64(m + 1)
	}
	cases := map[string]func(*Params){
		"default": func(*Params) {},
		"all sections": func(pp *Params) {
			pp.Attribution = &AttributionParams{GroupBy: []string{"workload"}, Rules: DefaultHolderRules()}
			pp.Fragmentation, pp.GPUFigures, pp.KeepFleet = true, true, true
		},
		"every metric weighted": func(pp *Params) { sp := DefaultScaling(); sp.Weights = every; pp.Scaling = &sp },
		"sm_active preferred": func(pp *Params) {
			sp := DefaultScaling()
			sp.PreferSMActive = true
			pp.Scaling = &sp
		},
		"nvlink alone": func(pp *Params) {
			sp := DefaultScaling()
			sp.Weights = map[string]float64{"nvlink_tx_bytes_per_s": 1, "temp_c": 2}
			pp.Scaling = &sp
		},
	}
	for name, set := range cases {
		t.Run(name, func(t *testing.T) {
			params := DefaultParams()
			set(&params)
			s, err := profile.OpenStream(bytes.NewReader(doc.Bytes()), "p.json")
			if err != nil {
				t.Fatal(err)
			}
			streamed, err := Analyze(context.Background(), []Source{{Name: "p.json", Stream: s}}, params)
			if err != nil {
				t.Fatal(err)
			}
			mem, err := profile.StreamOf(p, "p.json")
			if err != nil {
				t.Fatal(err)
			}
			whole, err := Analyze(context.Background(), []Source{{Name: "p.json", Stream: mem}}, params)
			if err != nil {
				t.Fatal(err)
			}
			a, _ := json.Marshal(streamed)
			b, _ := json.Marshal(whole)
			if !bytes.Equal(a, b) {
				t.Fatalf("the report differs when only the read columns are converted:\n%.400s\n%.400s", a, b)
			}
		})
	}
}
