package cmd

import (
	"bytes"
	"encoding/json"
	"fmt"
	"path/filepath"
	"strings"
	"testing"

	"github.com/seedance/seedance/internal/testkit/dcgmtest"
	"github.com/seedance/seedance/internal/testkit/pgtest"
	"github.com/seedance/seedance/internal/testkit/promtest"
	"github.com/seedance/seedance/profile"
)

// TestPriceChangeOnTheHour: OpenCost's price of a node goes from 2.49 to
// 1.99 at 10:00:00 exactly; a ledger counted in hourly steps from a real
// Prometheus prices the hour 09:00–10:00 at 2.49 and the next at 1.99.
// Before, the price read for a step held the step's end instant (the next
// hour's first sample), so the change took effect an hour early. In
// SQLite and PostgreSQL.
func TestPriceChangeOnTheHour(t *testing.T) {
	sim, err := profile.ReadFile(simProfile(t, "--interval", "15s", "--duration", "90m", "--sim-nodes", "2", "--sim-scenario", "idle"), nil)
	if err != nil {
		t.Fatal(err)
	}
	var om bytes.Buffer
	if err := dcgmtest.WriteOpenMetrics(&om, sim); err != nil {
		t.Fatal(err)
	}
	body := strings.TrimSuffix(om.String(), "# EOF\n")
	var cost strings.Builder
	cost.WriteString("# TYPE node_gpu_hourly_cost gauge\n")
	start := float64(sim.StartedAt.Unix())
	for s := 0; s < 90*60; s += 15 {
		price := "2.49"
		if s >= 3600 {
			price = "1.99"
		}
		fmt.Fprintf(&cost, "node_gpu_hourly_cost{node=%q} %s %d\n", sim.Nodes[0].Name, price, int64(start)+int64(s))
	}
	srv := promtest.Start(t, []byte(body+cost.String()+"# EOF\n"))
	for _, backend := range []string{"sqlite", "postgres"} {
		t.Run(backend, func(t *testing.T) {
			led := filepath.Join(t.TempDir(), "l.db")
			if backend == "postgres" {
				led = pgtest.Start(t)
			}
			priceChangeOnTheHour(t, srv, led)
		})
	}
}

func priceChangeOnTheHour(t *testing.T, srv *promtest.Server, led string) {
	r := run(t, nil, "ledger", "update", "--ledger", led, "--source", "prometheus", "--prometheus-url", srv.URL, "--step", "15s",
		"--start", "2026-01-05T09:00:00Z", "--end", "2026-01-05T10:30:00Z", "--ledger-step", "1h")
	if r.code != 0 {
		t.Fatalf("update: %s", r.errOut)
	}
	prices := func(since, until string) map[string]string {
		t.Helper()
		rep := run(t, nil, "ledger", "report", "--ledger", led, "-f", "json", "--since", since, "--until", until)
		var got struct {
			Prices []struct {
				USD    float64 `json:"usd_per_hour"`
				Source string  `json:"source"`
				First  string  `json:"first_bucket"`
			} `json:"prices"`
		}
		if err := json.Unmarshal([]byte(rep.out), &got); rep.code != 0 || err != nil {
			t.Fatalf("report: %v %s", err, rep.errOut)
		}
		out := map[string]string{}
		for _, p := range got.Prices {
			if p.Source == "opencost" {
				out[fmt.Sprint(p.USD)] = p.First
			}
		}
		return out
	}
	if got := prices("2026-01-05T09:00:00Z", "2026-01-05T10:00:00Z"); len(got) != 1 || got["2.49"] != "2026-01-05T09:00:00Z" {
		t.Errorf("09:00–10:00 priced at %v, want 2.49 alone", got)
	}
	if got := prices("2026-01-05T10:00:00Z", "2026-01-05T11:00:00Z"); len(got) != 1 || got["1.99"] != "2026-01-05T10:00:00Z" {
		t.Errorf("10:00–11:00 priced at %v, want 1.99 alone", got)
	}
	// The text names each price's source.
	text := run(t, nil, "ledger", "report", "--ledger", led, "--since", "2026-01-05T09:00:00Z")
	for _, want := range []string{"$2.490/GPU-h (opencost, from 2026-01-05T09:00:00Z)", "$1.990/GPU-h (opencost, from 2026-01-05T10:00:00Z)"} {
		if !strings.Contains(text.out, want) {
			t.Errorf("the report's text does not say %q:\n%s", want, text.out)
		}
	}
}
