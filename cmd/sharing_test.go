package cmd

import (
	"bytes"
	"path/filepath"
	"testing"
	"time"

	"github.com/seedance/seedance/internal/testkit/dcgmtest"
	"github.com/seedance/seedance/internal/testkit/promtest"
)

// TestSharedGPUsLedgerEqualsOneAnalysis: on a real Prometheus holding a
// GPU of each sharing mode (dcgmtest.SharedCluster), the ledger, updated
// in two steps, attributes every pod the GPU-hours one analysis does:
// measured, requested and even splits alike.
func TestSharedGPUsLedgerEqualsOneAnalysis(t *testing.T) {
	start := time.Now().Add(-3 * time.Hour).Truncate(time.Hour)
	var om bytes.Buffer
	if err := dcgmtest.SharedCluster(&om, start); err != nil {
		t.Fatal(err)
	}
	srv := promtest.Start(t, om.Bytes())
	at := func(s int) string { return start.Add(time.Duration(s) * time.Second).UTC().Format(time.RFC3339) }
	src := []string{"--source", "prometheus", "--prometheus-url", srv.URL, "--step", "60s"}
	one := run(t, nil, append([]string{"analyze", "--start", at(0), "--end", at(600), "-f", "json", "--report", "attribution",
		"--group-by", "namespace", "--group-by", "workload"}, src...)...)
	if one.code != 0 {
		t.Fatalf("analyze: %s", one.errOut)
	}
	led := filepath.Join(t.TempDir(), "ledger.db")
	for i, end := range []int{240, 600} {
		args := append([]string{"ledger", "update", "--ledger", led, "--end", at(end)}, src...)
		if i == 0 {
			args = append(args, "--start", at(0))
		}
		if r := run(t, nil, args...); r.code != 0 {
			t.Fatalf("update to %d s: %s", end, r.errOut)
		}
	}
	sameAsOneAnalysis(t, led, one.out, "--group-by", "workload")
}
