package profile

import "sort"

// tenureEps absorbs rounding in sample times (written to the millisecond).
const tenureEps = 1e-6

// AddTenure adds a sample at t, which counts for [t, t + interval), to
// ivs (ascending and apart) and returns the list: samples at most
// 2 × interval apart join into one interval, as a GPU's samples do. Times
// and interval are in one unit of the caller's (seconds or milliseconds).
// Samples in time order append in constant time; others are merged in.
func AddTenure(ivs []Tenure, t, interval float64) []Tenure {
	iv := Tenure{t, t + interval}
	n := len(ivs)
	if n == 0 || t > ivs[n-1].EndS+interval+tenureEps {
		return append(ivs, iv)
	}
	if t >= ivs[n-1].StartS {
		ivs[n-1].EndS = max(ivs[n-1].EndS, iv.EndS)
		return ivs
	}
	return JoinTenure(append(ivs, iv), interval) // out of order
}

// JoinTenure sorts ivs and joins the intervals that overlap or lie at most
// gap apart, in place.
func JoinTenure(ivs []Tenure, gap float64) []Tenure {
	if len(ivs) < 2 {
		return ivs
	}
	sort.Slice(ivs, func(i, j int) bool { return ivs[i].StartS < ivs[j].StartS })
	out := ivs[:1]
	for _, next := range ivs[1:] {
		last := &out[len(out)-1]
		if next.StartS <= last.EndS+gap+tenureEps {
			last.EndS = max(last.EndS, next.EndS)
			continue
		}
		out = append(out, next)
	}
	return out
}

// FinishTenure shifts ivs by −origin, scales them by scale (1e-3 turns
// milliseconds into seconds), clips them to [0, spanS] and returns nil
// when they cover the whole of it: what a profile's intervals hold, at
// most MaxIntervalsPerWorkload of them. ok is false when nothing of them
// is inside the span.
func FinishTenure(ivs []Tenure, origin, scale, spanS float64) (out []Tenure, ok bool) {
	for _, iv := range ivs {
		s := max(0, (iv.StartS-origin)*scale)
		e := min(spanS, (iv.EndS-origin)*scale)
		if e > s {
			out = append(out, Tenure{s, e})
		}
	}
	if len(out) == 0 {
		return nil, false
	}
	// Past the readers' limit, the intervals closest together are joined
	// (a workload that came and went every few samples for a month).
	for gap := spanS / MaxIntervalsPerWorkload; len(out) > MaxIntervalsPerWorkload; gap *= 2 {
		out = JoinTenure(out, gap)
	}
	if len(out) == 1 && out[0].StartS <= tenureSlack && out[0].EndS >= spanS-tenureSlack {
		return nil, true
	}
	return out, true
}
