package profile_test

import (
	"bytes"
	"reflect"
	"testing"
	"time"

	"github.com/seedance/seedance/profile"
	"github.com/seedance/seedance/source/sim"
)

// TestPiecesJoinAsTheWhole (#56): two consecutive profiles cut into pieces
// of 25 minutes (bounds off the sample grid and on it); for windows inside
// a piece, on its bounds, and one sample wide, Join over the two profiles'
// pieces equals Join over the two profiles whole, GPU for GPU and
// workload for workload.
func TestPiecesJoinAsTheWhole(t *testing.T) {
	whole, err := sim.Record(sim.Options{Nodes: 3, Scenario: sim.ScenarioMixed, Seed: 5}, time.Minute, 2*time.Hour, profile.Generator{Name: "test"})
	if err != nil {
		t.Fatal(err)
	}
	mid := whole.StartedAt.Add(time.Hour)
	inputs := []*profile.Profile{
		profile.Join([]*profile.Profile{whole}, whole.StartedAt.Add(-time.Millisecond), mid, false),
		profile.Join([]*profile.Profile{whole}, mid, whole.EndedAt, false),
	}
	t0 := whole.StartedAt
	bounds := []time.Time{t0.Add(10 * time.Minute), t0.Add(35*time.Minute + 30*time.Second), t0.Add(60 * time.Minute), t0.Add(85 * time.Minute), whole.EndedAt}
	var pieces [][]*profile.Profile // by bound, one per input
	for range bounds[1:] {
		pieces = append(pieces, nil)
	}
	for _, in := range inputs {
		var buf bytes.Buffer
		if err := profile.Encode(&buf, in); err != nil {
			t.Fatal(err)
		}
		s, err := profile.OpenStream(&buf, "in")
		if err != nil {
			t.Fatal(err)
		}
		p, err := profile.Cut(s, bounds, t.TempDir())
		if err != nil {
			t.Fatal(err)
		}
		for i := range p.Len() {
			piece, err := p.Piece(i)
			if err != nil {
				t.Fatal(err)
			}
			pieces[i] = append(pieces[i], piece)
		}
		if _, err := p.Piece(0); err == nil {
			t.Fatal("a piece read twice")
		}
		if err := p.Close(); err != nil {
			t.Fatal(err)
		}
	}
	read := roundTrip(t, inputs)
	for i := range pieces {
		lo, hi := bounds[i], bounds[i+1]
		for k, w := range [][2]time.Time{{lo, hi}, {lo.Add(5 * time.Minute), hi.Add(-7 * time.Minute)}, {lo.Add(time.Minute), lo.Add(2 * time.Minute)}, {hi, hi}} {
			got, want := profile.Join(pieces[i], w[0], w[1], false), profile.Join(read, w[0], w[1], false)
			if !reflect.DeepEqual(got, want) {
				t.Fatalf("piece %d, window %s → %s: the pieces' join differs from the whole's", i, w[0], w[1])
			}
			if len(want.Nodes) != 3 || k == 0 && len(want.Nodes[0].GPUs) == 0 {
				t.Fatalf("piece %d, window %s → %s: %d nodes", i, w[0], w[1], len(want.Nodes))
			}
		}
	}
}

// roundTrip is the profiles encoded and read back, as the pieces are.
func roundTrip(t *testing.T, ps []*profile.Profile) []*profile.Profile {
	var out []*profile.Profile
	for _, p := range ps {
		var buf bytes.Buffer
		if err := profile.Encode(&buf, p); err != nil {
			t.Fatal(err)
		}
		r, err := profile.Read(&buf)
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, r)
	}
	return out
}
