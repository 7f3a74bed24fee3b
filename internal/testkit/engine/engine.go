// Package engine says whether a test may start a real engine (Prometheus,
// VictoriaMetrics, Chromium, Slurm, a Kubernetes control plane): not under
// -short, the developer's inner loop (make test-short); always in
// go test ./... and in CI.
package engine

import "testing"

// SkipShort skips a test that starts a real engine, or runs for seconds,
// when -short is given.
func SkipShort(t testing.TB, what string) {
	t.Helper()
	if testing.Short() {
		t.Skipf("-short: %s (go test ./... runs it)", what)
	}
}
