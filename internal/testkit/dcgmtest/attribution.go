package dcgmtest

import (
	"bytes"
	"context"

	"github.com/seedance/seedance/analyze"
	"github.com/seedance/seedance/pricing"
	"github.com/seedance/seedance/profile"
)

// ByWorkload analyzes p (GPUs at $2/h) with attribution by workload and
// returns each workload's group by id, and what nobody held as
// "(unallocated)": what the tests of shared GPUs compare to their hand
// computations.
func ByWorkload(p *profile.Profile) (map[string]analyze.AttributionGroup, error) {
	var doc bytes.Buffer
	if err := profile.Encode(&doc, p); err != nil {
		return nil, err
	}
	s, err := profile.OpenStream(&doc, "p")
	if err != nil {
		return nil, err
	}
	params := analyze.DefaultParams()
	params.Pricer = pricing.New(nil, 2)
	params.Attribution = &analyze.AttributionParams{GroupBy: []string{"workload"}}
	r, err := analyze.Analyze(context.Background(), []analyze.Source{{Name: "p", Stream: s}}, params)
	if err != nil {
		return nil, err
	}
	out := map[string]analyze.AttributionGroup{"(unallocated)": {AttributionFigures: r.Attribution.Unallocated}}
	for _, g := range r.Attribution.Groups {
		out[g.Key[0]] = g
	}
	return out, nil
}
