package profile

import (
	"encoding/json"
	"fmt"
	"math"
	"strconv"
	"strings"

	"github.com/seedance/seedance/internal/jsonscan"
)

// UnmarshalJSON decodes a GPU and checks that its required "index" is present
// (encoding/json alone cannot tell a missing index from index 0).
func (g *GPU) UnmarshalJSON(data []byte) error {
	type plain GPU
	aux := struct {
		*plain
		Index *int `json:"index"`
	}{plain: (*plain)(g)}
	if err := json.Unmarshal(data, &aux); err != nil {
		return err
	}
	if aux.Index == nil {
		g.Index = -1
	} else {
		g.Index = *aux.Index
	}
	return nil
}

// MajorVersion returns the major version of a "seedance.profile/vN[.M]" string.
func MajorVersion(schema string) (int, bool) {
	rest, ok := strings.CutPrefix(schema, "seedance.profile/v")
	if !ok {
		return 0, false
	}
	if i := strings.IndexByte(rest, '.'); i >= 0 {
		rest = rest[:i]
	}
	n, err := strconv.Atoi(rest)
	return n, err == nil
}

// Validate checks the rules of format v1 that a reader relies on. Every error
// wraps ErrInvalid and names the place (node, GPU, metric, sample) at fault.
func Validate(p *Profile) error {
	if p.SchemaVersion == "" {
		return fmt.Errorf("%w: schema_version is missing (is this a seedance profile?)", ErrInvalid)
	}
	major, ok := MajorVersion(p.SchemaVersion)
	if !ok {
		return fmt.Errorf("%w: schema_version %q is not a seedance profile version", ErrInvalid, p.SchemaVersion)
	}
	if major != 1 {
		return fmt.Errorf("%w: schema_version %q has major version %d; this seedance reads v1 profiles only", ErrInvalid, p.SchemaVersion, major)
	}
	if p.StartedAt.IsZero() || p.EndedAt.IsZero() {
		return fmt.Errorf("%w: started_at and ended_at are required, as times from 1970 to 2199", ErrInvalid)
	}
	if p.EndedAt.Before(p.StartedAt) {
		return fmt.Errorf("%w: ended_at %s is before started_at %s", ErrInvalid, p.EndedAt.Format(timeFormat), p.StartedAt.Format(timeFormat))
	}
	if !(p.ContextS >= 0 && p.ContextS <= 86400) {
		return fmt.Errorf("%w: context_s %v is outside 0–86400 seconds", ErrInvalid, p.ContextS)
	}
	if !(p.IntervalS > 0) {
		return fmt.Errorf("%w: interval_s must be a positive number of seconds, got %v", ErrInvalid, p.IntervalS)
	}
	if err := validateHeader(p); err != nil {
		return err
	}
	names := map[string]bool{}
	for ni := range p.Nodes {
		n := &p.Nodes[ni]
		if err := checkNodeName(n.Name, ni, names); err != nil {
			return fmt.Errorf("%w: %v", ErrInvalid, err)
		}
		if err := validateNode(n, p.EndedAt.Sub(p.StartedAt).Seconds()); err != nil {
			return fmt.Errorf("%w: node %q: %v", ErrInvalid, short(n.Name), err)
		}
		uuids, indexes := map[string]bool{}, map[int]bool{}
		w := window{p.EndedAt.Sub(p.StartedAt).Seconds(), p.ContextS}
		for gi := range n.GPUs {
			if err := checkGPUEntry(&n.GPUs[gi], gi, uuids, nil); err != nil {
				return fmt.Errorf("%w: node %q gpus[%d]: %v", ErrInvalid, short(n.Name), gi, err)
			}
			if err := w.check(&n.GPUs[gi], indexes); err != nil {
				return fmt.Errorf("%w: node %q gpus[%d]: %v", ErrInvalid, short(n.Name), gi, err)
			}
		}
	}
	return nil
}

// checkNodeName checks that a node has a name, and one no other node of
// the profile has.
func checkNodeName(name string, ni int, seen map[string]bool) error {
	if name == "" {
		return fmt.Errorf("nodes[%d] has no name", ni)
	}
	if seen[name] {
		return fmt.Errorf("nodes[%d]: a second node named %q (a node appears once per profile)", ni, short(name))
	}
	seen[name] = true
	return nil
}

// checkGPUEntry validates a node's gi-th GPU, including what only the node
// can tell: how many GPUs it has, and whether a UUID repeats.
// tl is what the GPU's unconverted columns held (Stream.ConvertOnly), or
// nil.
func checkGPUEntry(g *GPU, gi int, uuids map[string]bool, tl *tallies) error {
	if gi >= MaxGPUsPerNode {
		return fmt.Errorf("more than %d GPU entries on one node", MaxGPUsPerNode)
	}
	if err := validateGPU(g, tl); err != nil {
		return err
	}
	if uuids[g.UUID] {
		return fmt.Errorf("uuid %q appears twice on the node", short(g.UUID))
	}
	uuids[g.UUID] = true
	return nil
}

const timeFormat = "2006-01-02T15:04:05Z07:00"

// tallies is what a GPU's unconverted columns held, by metric.
type tallies [NumMetrics]columnTally

type columnTally struct {
	jsonscan.Tally
	present bool
}

// check is the checks of validateGPU's on a column, on its tally.
func (c *columnTally) check(m Metric, samples int) error {
	if c.N != samples {
		return fmt.Errorf("series.%s has %d values but series.t has %d", m, c.N, samples)
	}
	if c.Bad >= 0 {
		return checkValue(m, c.Bad, c.BadValue)
	}
	return nil
}

func validateGPU(g *GPU, tl *tallies) error {
	if g.Index < 0 {
		return fmt.Errorf("index is missing or negative")
	}
	if g.Index >= MaxGPUsPerNode {
		return fmt.Errorf("index %d is not below %d", g.Index, MaxGPUsPerNode)
	}
	if g.UUID == "" {
		return fmt.Errorf("uuid is missing")
	}
	if len(g.UUID) > MaxNameBytes || len(g.Model) > MaxNameBytes {
		return fmt.Errorf("uuid or model longer than %d bytes", MaxNameBytes)
	}
	if g.IntervalS != 0 && !(g.IntervalS >= 0.001 && g.IntervalS <= 86400) {
		return fmt.Errorf("interval_s %v is outside 0.001–86400 seconds", g.IntervalS)
	}
	s := &g.Series
	if s.T == nil {
		return fmt.Errorf("series.t is missing")
	}
	if len(s.T) > MaxSamplesPerGPU {
		return fmt.Errorf("%d samples, more than %d", len(s.T), MaxSamplesPerGPU)
	}
	for i, t := range s.T {
		if IsNull(t) {
			return fmt.Errorf("series.t[%d] is null", i)
		}
		if i > 0 && !(t > s.T[i-1]) {
			return fmt.Errorf("series.t is not ascending at sample %d (%v after %v)", i, t, s.T[i-1])
		}
	}
	for m := Metric(0); m < NumMetrics; m++ {
		col := *s.Col(m)
		if col == nil {
			if tl != nil && tl[m].present {
				if err := tl[m].check(m, len(s.T)); err != nil {
					return err
				}
			}
			continue
		}
		if len(col) != len(s.T) {
			return fmt.Errorf("series.%s has %d values but series.t has %d", m, len(col), len(s.T))
		}
		limit := metricLimit[m]
		for i, v := range col {
			if v < 0 || v > limit { // one comparison each on the hot path
				return checkValue(m, i, v)
			}
		}
	}
	return checkUsage(g)
}

// window is a profile's window, spanS long, and the context read around
// it (docs/profile-format.md, Context samples).
type window struct{ spanS, contextS float64 }

// windowSlackS absorbs the rounding of sample times to the millisecond.
const windowSlackS = 0.001

// check refuses a sample that lies outside the window by more than its
// context, and a GPU (not a MIG device, which carries its parent's
// index) whose index another GPU of the node has (indexes holds theirs).
func (w window) check(g *GPU, indexes map[int]bool) error {
	if g.MIG == nil {
		if indexes[g.Index] {
			return fmt.Errorf("index %d: a second GPU with the index (uuid %q)", g.Index, short(g.UUID))
		}
		indexes[g.Index] = true
	}
	t := g.Series.T
	if len(t) == 0 || math.IsInf(w.spanS, 1) {
		return nil
	}
	if first := t[0]; first < -w.contextS-windowSlackS {
		return fmt.Errorf("series.t[0] = %v s lies %v s before the window, more than its context (context_s %v)", first, -first, w.contextS)
	}
	if last := t[len(t)-1]; last >= w.spanS+w.contextS+windowSlackS {
		return fmt.Errorf("series.t[%d] = %v s lies %v s after the window's end (%v s), more than its context (context_s %v)", len(t)-1, last, last-w.spanS, w.spanS, w.contextS)
	}
	return nil
}
