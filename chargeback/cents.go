package chargeback

import "math"

// Cents rounds a sequence of amounts to cents so that the rounded amounts
// always sum to the rounded sum of the amounts: each amount's cents are
// the rounded running total's increase (cumulative rounding). Every
// rounded amount is within a cent of its amount; the order of the
// amounts decides which way the half-cents go.
type Cents struct {
	sum   float64 // of the amounts so far
	cents int64   // of the rounded amounts so far
}

// Next rounds the next amount, in cents.
func (c *Cents) Next(usd float64) int64 {
	c.sum += usd
	total := int64(math.Round(c.sum * 100))
	out := total - c.cents
	c.cents = total
	return out
}

// Total is the rounded sum so far, in cents.
func (c *Cents) Total() int64 { return c.cents }

// USD is an amount in cents as dollars.
func USD(cents int64) float64 { return float64(cents) / 100 }
