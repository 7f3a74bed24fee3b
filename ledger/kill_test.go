package ledger

import (
	"context"
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/seedance/seedance/internal/testkit/engine"
	"github.com/seedance/seedance/profile"
)

// childEnv makes the test binary a child that runs one update and exits:
// DSN, then the input files, separated by newlines.
const childEnv = "SEEDANCE_LEDGER_TEST_CHILD"

func TestMain(m *testing.M) {
	if spec := os.Getenv(childEnv); spec != "" {
		os.Exit(child(spec))
	}
	os.Exit(m.Run())
}

func child(spec string) int {
	parts := strings.Split(spec, "\n")
	var inputs []*profile.Profile
	for _, f := range parts[1:] {
		p, err := profile.ReadFile(f, nil)
		if err != nil {
			fmt.Fprintln(os.Stderr, err)
			return 2
		}
		inputs = append(inputs, p)
	}
	l, err := Open(context.Background(), parts[0])
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 2
	}
	defer l.Close()
	if _, err := l.Update(context.Background(), UpdateSpec{Inputs: inputs, Params: params()}); err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	return 0
}

// TestKilledUpdatesLoseAndDoubleNothing: updates killed with SIGKILL at
// random moments, each run again until it completes, leave the ledger
// equal to one analysis of all the data: a killed update counted nothing,
// and its rerun counted it once.
func TestKilledUpdatesLoseAndDoubleNothing(t *testing.T) {
	engine.SkipShort(t, "kills processes mid-update")
	for _, backend := range []string{"sqlite", "postgres"} {
		t.Run(backend, func(t *testing.T) { killedUpdates(t, ledgers(t, backend), backend) })
	}
}

func killedUpdates(t *testing.T, newLedger func() *Ledger, backend string) {
	p := cluster(t)
	want := oneAnalysis(t, p, []string{"namespace"})
	r := rand.New(rand.NewPCG(3, 3))
	dir := t.TempDir()
	var files []string
	for i, part := range pieces(p, r, 4) {
		f := filepath.Join(dir, fmt.Sprintf("part%d.json", i))
		if err := profile.WriteFile(f, part); err != nil {
			t.Fatal(err)
		}
		files = append(files, f)
	}
	l := newLedger()
	dsn := l.dsn
	l.Close()
	killed := 0
	for _, f := range files {
		for attempt := 0; ; attempt++ {
			cmd := exec.Command(os.Args[0], "-test.run=^$")
			cmd.Env = append(os.Environ(), childEnv+"="+dsn+"\n"+f)
			var stderr strings.Builder
			cmd.Stderr = &stderr
			if err := cmd.Start(); err != nil {
				t.Fatal(err)
			}
			done := make(chan error, 1)
			go func() { done <- cmd.Wait() }()
			var err error
			if attempt < 3 { // kill the first tries at a random moment
				select {
				case err = <-done:
				case <-time.After(time.Duration(20+r.IntN(180)) * time.Millisecond):
					_ = cmd.Process.Signal(syscall.SIGKILL)
					err = <-done
					killed++
				}
			} else {
				err = <-done
			}
			if err == nil {
				break
			}
			if ee, ok := err.(*exec.ExitError); !ok || ee.ExitCode() != -1 {
				t.Fatalf("%s: the update failed: %v\n%s", backend, err, stderr.String())
			}
		}
	}
	if killed == 0 {
		t.Fatal("no update was killed")
	}
	l = openDSN(t, dsn)
	got, err := l.Report(context.Background(), Query{GroupBy: []string{"namespace"}, EnergyUSDPerKWh: 0.12})
	if err != nil {
		t.Fatal(err)
	}
	sameFigures(t, got, want)
	t.Logf("%s: %d updates killed", backend, killed)
}
