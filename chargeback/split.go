package chargeback

import (
	"maps"
	"math"
	"slices"
	"strings"
	"time"
)

// FOCUS 1.3's split cost allocation (docs/chargeback.md, FOCUS): each
// node's GPU time of a model in a period is an origin charge, at its
// price; the dataset holds its allocated charges, which add up to it:
// each workload's held time, the shares of the node's unallocated time
// that the sharing rule gives to the groups of its scope, and what stays
// unallocated.

// Origin is one origin charge: a node's GPU time of a model in a period.
type Origin struct {
	Period               time.Time
	Cluster, Node, Model string
	PriceUSDPerHour      float64
	PriceSource          string
	Hours, USD           float64
	Parts                []Allocated
}

// What an allocated charge is of.
const (
	PartHeld        = "held"        // a workload's held time
	PartSharedIdle  = "shared idle" // a group's share of the unallocated time
	PartUnallocated = "unallocated" // what stays unallocated
)

// Allocated is one allocated charge of an origin charge.
type Allocated struct {
	Kind string
	// Workload is the holder (PartHeld); Group the recipient group's keys
	// (PartSharedIdle) or the holder's; GroupLevels their levels.
	Workload    string
	Group       []string
	GroupLevels []string
	// Ratio is the part's share of the origin charge (its cost's, or its
	// hours' for an origin that costs nothing); the parts' ratios sum to 1.
	Ratio                     float64
	HeldH, UsedH, IdleH       float64
	USD, EnergyKWh            float64
	EmissionsKg               float64
	EmissionsUnknown, Unknown bool
	// Work is the held line's work by unit (x_Work); nil on other parts.
	Work map[string]float64
	// Cents is the part's charge in cents: the origin's cents (rounded
	// cumulatively over the export) split by largest remainder.
	Cents int64
}

// Split cuts one period's lines, shared by the mode within the scope
// (Share), into origin charges and their allocated charges, in the
// lines' order (SortLines).
func Split(lines []Line, mode Mode, scope Scope) []Origin {
	shares := recipientShares(lines, mode, scope)
	var out []Origin
	for i := 0; i < len(lines); {
		j := i + 1
		for j < len(lines) && sameOrigin(&lines[i], &lines[j]) {
			j++
		}
		out = append(out, origin(lines[i:j], shares[scopeKey(&lines[i], scope)]))
		i = j
	}
	return out
}

func sameOrigin(a, b *Line) bool {
	return a.Period.Equal(b.Period) && a.Cluster == b.Cluster && a.Node == b.Node && a.Model == b.Model
}

// scopeKey is the scope a line's unallocated cost is shared within.
func scopeKey(l *Line, scope Scope) string {
	switch scope {
	case ScopeNode:
		return l.Cluster + "\x00" + l.Node
	case ScopePool:
		return l.Cluster + "\x00" + l.Model
	}
	return l.Cluster
}

// share is a recipient group's fraction of its scope's unallocated cost.
type share struct {
	group, levels []string
	fraction      float64
}

// recipientShares are, per scope, the groups that bear its unallocated
// cost and their fractions of it (Share set each line's SharedUSD), in
// the groups' order; the fractions sum to 1, or to 0 where it stays
// unallocated.
func recipientShares(lines []Line, mode Mode, scope Scope) map[string][]share {
	out := map[string][]share{}
	if mode == None || mode == "" {
		return out
	}
	idle := map[string]float64{}
	given := map[string]map[string]*share{}
	for i := range lines {
		l := &lines[i]
		k := scopeKey(l, scope)
		switch {
		case l.Unallocated():
			idle[k] += l.HeldUSD
		case l.SharedUSD > 0:
			if given[k] == nil {
				given[k] = map[string]*share{}
			}
			g := strings.Join(l.Group, "\x00")
			if given[k][g] == nil {
				given[k][g] = &share{group: l.Group, levels: l.GroupLevels}
			}
			given[k][g].fraction += l.SharedUSD
		}
	}
	for k, groups := range given {
		for _, g := range slices.Sorted(maps.Keys(groups)) {
			s := *groups[g]
			s.fraction /= idle[k]
			out[k] = append(out[k], s)
		}
	}
	return out
}

// origin is one origin charge from its lines: a part per holder, then
// the unallocated line's time cut by the scope's shares.
func origin(lines []Line, shares []share) Origin {
	first := &lines[0]
	o := Origin{Period: first.Period, Cluster: first.Cluster, Node: first.Node, Model: first.Model, PriceSource: first.PriceSource}
	for i := range lines {
		l := &lines[i]
		o.Hours, o.USD, o.PriceUSDPerHour = o.Hours+l.HeldH, o.USD+l.HeldUSD, max(o.PriceUSDPerHour, l.PriceUSDPerHour)
		if !l.Unallocated() {
			o.Parts = append(o.Parts, part(l, PartHeld, 1, l.Group, l.GroupLevels))
			o.Parts[len(o.Parts)-1].Workload, o.Parts[len(o.Parts)-1].Work = l.Workload, l.Work
			continue
		}
		rest := 1.0
		for _, s := range shares {
			o.Parts = append(o.Parts, part(l, PartSharedIdle, s.fraction, s.group, s.levels))
			rest -= s.fraction
		}
		if rest > 1e-12 {
			o.Parts = append(o.Parts, part(l, PartUnallocated, rest, nil, nil))
		}
	}
	o.ratios()
	return o
}

// part is the fraction f of a line as an allocated charge.
func part(l *Line, kind string, f float64, group, levels []string) Allocated {
	return Allocated{Kind: kind, Group: group, GroupLevels: levels, HeldH: l.HeldH * f, UsedH: l.UsedH * f, IdleH: l.IdleH * f, USD: l.HeldUSD * f,
		EnergyKWh: l.EnergyKWh * f, EmissionsKg: l.EmissionsKg * f, EmissionsUnknown: l.EmissionsUnknown}
}

// ratios sets each part's share of the origin: of its cost, or of its
// hours when it costs nothing; the last part takes what the others leave,
// so that they sum to 1.
func (o *Origin) ratios() {
	sum := 0.0
	for i := range o.Parts {
		p := &o.Parts[i]
		switch {
		case i == len(o.Parts)-1:
			p.Ratio = 1 - sum
		case o.USD > 0:
			p.Ratio = p.USD / o.USD
		case o.Hours > 0:
			p.Ratio = p.HeldH / o.Hours
		default:
			p.Ratio = 1 / float64(len(o.Parts))
		}
		sum += p.Ratio
	}
}

// splitCents gives the parts the origin's cents by largest remainder:
// each part within a cent of its cost, and the parts' cents summing to
// the origin's exactly.
func (o *Origin) splitCents(cents int64) {
	type rem struct {
		i    int
		frac float64
	}
	var sum int64
	rems := make([]rem, len(o.Parts))
	for i := range o.Parts {
		exact := o.Parts[i].USD * 100
		if o.USD <= 0 {
			exact = o.Parts[i].Ratio * float64(cents)
		}
		f := math.Floor(exact)
		o.Parts[i].Cents = int64(f)
		sum += int64(f)
		rems[i] = rem{i, exact - f}
	}
	slices.SortStableFunc(rems, func(a, b rem) int {
		switch {
		case a.frac > b.frac:
			return -1
		case a.frac < b.frac:
			return 1
		}
		return 0
	})
	for k := 0; sum < cents; k = (k + 1) % len(rems) {
		o.Parts[rems[k].i].Cents++
		sum++
	}
	for k := len(rems) - 1; sum > cents; k = (k + len(rems) - 1) % len(rems) {
		if o.Parts[rems[k].i].Cents > 0 {
			o.Parts[rems[k].i].Cents--
			sum--
		}
	}
}
