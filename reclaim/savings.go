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

// Saved sums the savings of the acted and restored episodes up to now.
func Saved(eps []Episode, now time.Time) Savings {
	s := Savings{ByTeam: map[string]Savings{}}
	for _, ep := range eps {
		if ep.ActedAt.IsZero() || (ep.State != Acted && ep.State != Restored) {
			continue
		}
		end := now
		if !ep.RestoredAt.IsZero() && ep.RestoredAt.Before(now) {
			end = ep.RestoredAt
		}
		h := end.Sub(ep.ActedAt).Hours()
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
