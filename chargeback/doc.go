// Package chargeback turns what the ledger counted into charges that add
// up to the bill: each workload's GPU time at its price (what it held, and
// what it used of it), the cost of what no workload held shared over the
// teams by a rule (none, weighted, even) within a scope (a node or a
// cluster) and a period (a UTC day), cents that sum to the total, and the
// rows of a FOCUS 1.2 export (docs/chargeback.md). It reads no database:
// the ledger hands it lines, a day at a time.
package chargeback
