package cmd

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/seedance/seedance/internal/exit"
	"github.com/seedance/seedance/settings"

	"github.com/seedance/seedance/internal/iostreams"
	"github.com/seedance/seedance/internal/nvapi"
	"github.com/seedance/seedance/internal/testkit/golden"
	"github.com/seedance/seedance/source/gpu"
)

var _ = golden.Update

// result is what one in-process run of seedance produced.
type result struct {
	code        exit.Code
	out, errOut string
}

// testFactory returns a Factory with buffers for streams, NVML as on a
// machine without the driver (noDriver) and a pinned clock. env is set in the
// process environment for the test (viper reads SEEDANCE_* from there), with
// HOME pointed at an empty directory so the tester's own config stays out.
func testFactory(t *testing.T, env map[string]string) (*Factory, func() result) {
	// The settings' variables, HOME and XDG_CONFIG_HOME are the run's own
	// (Factory.Getenv): a test that gives no other may run in parallel.
	vars := map[string]string{"HOME": t.TempDir()}
	for k, v := range env {
		if strings.HasPrefix(k, "SEEDANCE_") || k == "HOME" || k == "XDG_CONFIG_HOME" {
			vars[k] = v
		} else {
			t.Setenv(k, v) // read from the process (SOURCE_DATE_EPOCH by cobra's man pages)
		}
	}
	io, _, out, errOut := iostreams.Test()
	f := &Factory{
		IO:     io,
		NVML:   func() (gpu.NVML, error) { return noDriver{}, nil },
		Now:    func() time.Time { return time.Date(2026, 11, 30, 8, 0, 0, 0, time.UTC) },
		Getenv: func(k string) string { return vars[k] },
		Build:  BuildInfo{Version: "test", Commit: "abc", Date: "2026-11-30", GoVersion: "go1.x"},
	}
	return f, func() result { return result{out: out.String(), errOut: errOut.String()} }
}

func run(t *testing.T, env map[string]string, args ...string) result {
	t.Helper()
	f, get := testFactory(t, env)
	code := Run(context.Background(), f, args)
	r := get()
	r.code = code
	return r
}

func TestProfileSimWritesValidProfile(t *testing.T) {
	path := filepath.Join(t.TempDir(), "p.json")
	r := run(t, nil, "profile", "--source", "sim", "--duration", "300", "--interval", "1s", "--output", path)
	if r.code != exit.OK {
		t.Fatalf("exit %d: %s", r.code, r.errOut)
	}
	if want := "wrote " + path + ": 8 nodes, 64 GPUs, 300 samples, mean GPU util "; !strings.HasPrefix(r.errOut, want) {
		t.Fatalf("summary = %q", r.errOut)
	}
	p := readProfile(t, path)
	for _, n := range p.Nodes {
		for _, g := range n.GPUs {
			if g.Series.Len() != 300 {
				t.Fatalf("%s GPU %d has %d samples", n.Name, g.Index, g.Series.Len())
			}
		}
	}
	if !p.Complete || p.Generator.Version != "test" || p.Source != "sim" {
		t.Fatalf("header = %+v %+v", p.Generator, p.Source)
	}
}

func TestProfileSimGoldenViaCLI(t *testing.T) {
	r := run(t, nil, "profile", "--source", "sim", "--sim-seed", "1", "--duration", "60", "--output", "-", "--quiet")
	if r.code != exit.OK || r.errOut != "" {
		t.Fatalf("exit %d: %q", r.code, r.errOut)
	}
	// The simulator's own test owns (and -update rewrites) this file; the
	// CLI must write the same bytes.
	golden.Same(t, "../source/sim/testdata/sim-mixed-seed1-60s.json", []byte(r.out))
}

func TestProfileNoDriver(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "p.json")
	start := time.Now()
	r := run(t, nil, "profile", "--output", path)
	if r.code != exit.Usage {
		t.Fatalf("exit %d, want 2: %s", r.code, r.errOut)
	}
	if time.Since(start) > 5*time.Second { // the issue asks for under a second; this only catches a hang
		t.Errorf("took %v", time.Since(start))
	}
	line := strings.TrimSuffix(r.errOut, "\n")
	if strings.Contains(line, "\n") || !strings.Contains(line, "NVML library not found") || !strings.Contains(line, "--source sim") {
		t.Fatalf("stderr = %q", r.errOut)
	}
	if _, err := os.Stat(path); !os.IsNotExist(err) {
		t.Fatal("an output file was created")
	}
}

func TestFailedRunKeepsExistingFile(t *testing.T) {
	path := filepath.Join(t.TempDir(), "p.json")
	if err := os.WriteFile(path, []byte("yesterday's profile"), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, args := range [][]string{
		{"profile", "--output", path},
		{"profile", "--source", "sim", "--sim-scenario", "chaos", "--output", path},
		{"profile", "--source", "sim", "--interval", "50ms", "--output", path},
	} {
		r := run(t, nil, args...)
		if r.code != exit.Usage {
			t.Errorf("%v: exit %d", args, r.code)
		}
		if b, _ := os.ReadFile(path); string(b) != "yesterday's profile" {
			t.Fatalf("%v: existing file changed", args)
		}
	}
}

func TestUsageErrors(t *testing.T) {
	tests := []struct {
		args []string
		want string
	}{
		{[]string{"profile", "--interval", "50ms"}, "profile.interval = 50ms is outside 100ms–24h0m0s (flag --interval, environment SEEDANCE_PROFILE_INTERVAL"},
		{[]string{"profile", "--duration", "soon"}, "is not a duration"},
		{[]string{"profile", "--source", "carrier-pigeon"}, `unknown --source "carrier-pigeon"`},
		{[]string{"profile", "stray"}, `unexpected argument "stray"`},
		{[]string{"profile", "--source", "sim", "--sim-nodes", "0"}, "sim.nodes = 0 is outside 1–10000"},
		{[]string{"profile", "--source", "sim", "--sim-start", "yesterday"}, "RFC 3339"},
		{[]string{"frobnicate"}, `unknown command "frobnicate"`},
		{[]string{"profile", "--no-such-flag"}, "unknown flag"},
	}
	for _, tt := range tests {
		t.Run(strings.Join(tt.args, " "), func(t *testing.T) {
			r := run(t, nil, tt.args...)
			if r.code != exit.Usage {
				t.Fatalf("exit %d, want 2 (%s)", r.code, r.errOut)
			}
			if !strings.Contains(r.errOut, tt.want) || strings.Count(r.errOut, "\n") != 1 {
				t.Fatalf("stderr = %q, want one line with %q", r.errOut, tt.want)
			}
		})
	}
}

func TestVersion(t *testing.T) {
	r := run(t, nil, "version")
	for _, want := range []string{"seedance test", "commit:  abc", "go:      go1.x", "nvml:    not available (NVML library not found)"} {
		if !strings.Contains(r.out, want) {
			t.Errorf("version output lacks %q:\n%s", want, r.out)
		}
	}
}

func TestParseDuration(t *testing.T) {
	for in, want := range map[string]time.Duration{
		"300": 300 * time.Second, "0.5": 500 * time.Millisecond, "90s": 90 * time.Second, "5m": 5 * time.Minute, "1h30m": 90 * time.Minute, "0": 0,
	} {
		got, err := settings.ParseDuration(in)
		if err != nil || got != want {
			t.Errorf("settings.ParseDuration(%q) = %v, %v; want %v", in, got, err, want)
		}
	}
	if _, err := settings.ParseDuration("5 minutes"); err == nil {
		t.Error("accepted 5 minutes")
	}
}

// noDriver is NVML on a machine without the NVIDIA driver: Init fails as
// go-nvml's does when libnvidia-ml.so.1 cannot be loaded. Tests use it
// instead of assuming that the host has no driver.
type noDriver struct{ gpu.NVML }

func (noDriver) Init() nvapi.Return { return nvapi.ERROR_LIBRARY_NOT_FOUND }

// TestManPages: the hidden man command writes a page per command (for the
// packages), each a roff page with its synopsis.
func TestManPages(t *testing.T) {
	dir := t.TempDir()
	if r := run(t, map[string]string{"SOURCE_DATE_EPOCH": "1767571200"}, "man", "--dir", dir); r.code != 0 {
		t.Fatalf("exit %d: %s", r.code, r.errOut)
	}
	for _, page := range []string{"seedance.1", "seedance-analyze.1", "seedance-profile.1", "seedance-config-view.1"} {
		b, err := os.ReadFile(filepath.Join(dir, page))
		if err != nil || !bytes.Contains(b, []byte(".TH \"SEEDANCE\" \"1\" \"Jan 2026\"")) || !bytes.Contains(b, []byte(".SH SYNOPSIS")) {
			t.Errorf("%s: %v\n%.300s", page, err, b)
		}
	}
	if _, err := os.Stat(filepath.Join(dir, "seedance-man.1")); err == nil {
		t.Error("the hidden man command has a page")
	}
}
