package reclaim

import "time"

// Savings is what acted episodes freed: the GPU-hours their targets no
// longer held from the action to the restore (or now), and their price.
type Savings struct {
	GPUHours, USD float64
	// ByTeam is the same per team (the owner's team label, else its
	// namespace or Slurm account).
	ByTeam map[string]Savings
}

// Plus is s and o together, team by team.
func (s Savings) Plus(o Savings) Savings {
	out := Savings{GPUHours: s.GPUHours + o.GPUHours, USD: s.USD + o.USD, ByTeam: map[string]Savings{}}
	for _, m := range []map[string]Savings{s.ByTeam, o.ByTeam} {
		for team, t := range m {
			sum := out.ByTeam[team]
			sum.GPUHours += t.GPUHours
			sum.USD += t.USD
			out.ByTeam[team] = sum
		}
	}
	return out
}

// Saved sums the savings of the acted and restored episodes up to now.
func Saved(eps []Episode, now time.Time) Savings { return SavedBetween(eps, time.Time{}, now) }

// SavedBetween sums the savings of the acted and restored episodes within
// [from, to): each from its action to its restore, or to, whichever comes
// first, at the price of a GPU-hour its notice named, by team.
func SavedBetween(eps []Episode, from, to time.Time) Savings {
	s := Savings{ByTeam: map[string]Savings{}}
	for _, ep := range eps {
		if ep.ActedAt.IsZero() || (ep.State != Acted && ep.State != Restored) {
			continue
		}
		start, end := ep.ActedAt, to
		if !ep.RestoredAt.IsZero() && ep.RestoredAt.Before(to) {
			end = ep.RestoredAt
		}
		if start.Before(from) {
			start = from
		}
		h := end.Sub(start).Hours()
		if h <= 0 {
			continue
		}
		gh, usd := h*float64(ep.GPUs), h*ep.USDPerHour
		s.GPUHours += gh
		s.USD += usd
		team := first(ep.Labels["team"], ep.Labels["namespace"], ep.Labels["account"], "(none)")
		t := s.ByTeam[team]
		t.GPUHours += gh
		t.USD += usd
		s.ByTeam[team] = t
	}
	return s
}
