package chargeback

import "testing"

// TestCents: three thirds of a dollar are 33 + 34 + 33 cents, a dollar in
// all (each rounded alone they would be 99 cents); every amount stays
// within a cent of its own.
func TestCents(t *testing.T) {
	var c Cents
	got := []int64{c.Next(1.0 / 3), c.Next(1.0 / 3), c.Next(1.0 / 3)}
	if got[0] != 33 || got[1] != 34 || got[2] != 33 || c.Total() != 100 {
		t.Errorf("thirds: %v, total %d", got, c.Total())
	}
	var d Cents
	amounts := []float64{0.005, 0.005, 0.005, 0.005, 12.344999, -3.20001}
	sum := 0.0
	for _, a := range amounts {
		n := d.Next(a)
		sum += a
		if diff := float64(n)/100 - a; diff > 0.01 || diff < -0.01 {
			t.Errorf("%v rounded to %d cents", a, n)
		}
	}
	if d.Total() != 916 { // 9.164989 USD
		t.Errorf("total %d cents of %v USD", d.Total(), sum)
	}
}
