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
	l, err := Open(context.Background(), parts[0], Options{})
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
	// The kills land at random moments within one whole update's time,
	// measured on a scratch ledger: however fast the machine, most tries
	// die mid-update.
	scratch := newLedger()
	scratchDSN := scratch.dsn
	scratch.Close()
	start := time.Now()
	if _, err := runUpdate(scratchDSN, files[0], 0); err != nil {
		t.Fatalf("%s: the update failed: %v", backend, err)
	}
	whole := time.Since(start)
	killed := 0
	for _, f := range files {
		for attempt := 0; ; attempt++ {
			var after time.Duration
			if attempt < 3 { // kill the first tries at a random moment
				after = whole/10 + time.Duration(r.Int64N(int64(whole)*8/10+1))
			}
			died, err := runUpdate(dsn, f, after)
			if died {
				killed++
				continue
			}
			if err != nil {
				t.Fatalf("%s: the update failed: %v", backend, err)
			}
			break
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

// runUpdate runs one update of file into the ledger at dsn in a child
// process, killed with SIGKILL after after (0: never); died says it was.
func runUpdate(dsn, file string, after time.Duration) (died bool, err error) {
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), childEnv+"="+dsn+"\n"+file)
	var stderr strings.Builder
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		return false, err
	}
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	if after > 0 {
		select {
		case err = <-done:
		case <-time.After(after):
			_ = cmd.Process.Signal(syscall.SIGKILL)
			err = <-done
			if ee, ok := err.(*exec.ExitError); ok && ee.ExitCode() == -1 {
				return true, nil
			}
		}
	} else {
		err = <-done
	}
	if err != nil {
		return false, fmt.Errorf("%v\n%s", err, stderr.String())
	}
	return false, nil
}
