package pipeline

import (
	"context"
	"errors"
	"path/filepath"
	"strings"
	"testing"

	"github.com/seedance/seedance/profile"
	"github.com/seedance/seedance/source"
)

// fixedSource is what the "fixed" source does: a test's profile (or
// error) handed to the pipeline as a source's read, counting the reads;
// cancel, when set, is called during the read (a signal that ends it).
var fixedSource struct {
	p      *profile.Profile
	err    error
	cancel context.CancelFunc
	reads  int
}

type fixed struct{}

func (fixed) Profile(context.Context, source.RecordOptions) (*profile.Profile, error) {
	fixedSource.reads++
	if fixedSource.cancel != nil {
		fixedSource.cancel()
	}
	if fixedSource.p == nil {
		return nil, fixedSource.err
	}
	p := *fixedSource.p
	return &p, fixedSource.err
}
func (fixed) Close() error { return nil }

// batched is the "batched" source: fixedSource's profile handed on in one
// batch of all its nodes (source.NodeStreamer), as Prometheus hands on
// many nodes at once.
type batched struct{ fixed }

func (batched) ProfileNodes(ctx context.Context, ro source.RecordOptions, emit func([]profile.Node) error) (*profile.Profile, error) {
	p, err := batched{}.Profile(ctx, ro)
	if err != nil {
		return nil, err
	}
	if err := emit(p.Nodes); err != nil {
		return nil, err
	}
	p.Nodes = nil
	return p, nil
}

func init() {
	source.Register(source.Registration{Name: "fixed", Open: func(source.Env) (source.Profiler, error) { return fixed{}, nil }, Settings: struct{}{}})
	source.Register(source.Registration{Name: "batched", Open: func(source.Env) (source.Profiler, error) { return batched{}, nil }, Settings: struct{}{}})
}

// useFixed makes the fixed sources return p (a recording of the simulated
// cluster of nodes nodes, when p is nil) and err, for this test.
func useFixed(t *testing.T, nodes int, err error) *profile.Profile {
	t.Helper()
	sim := configWith(t, "profile.source", "sim", "sim.nodes", nodes)
	rec, rerr := Record(context.Background(), RecordSpec{Config: sim, InMemory: true})
	if rerr != nil {
		t.Fatal(rerr)
	}
	fixedSource.p, fixedSource.err, fixedSource.cancel, fixedSource.reads = rec.Profile, err, nil, 0
	t.Cleanup(func() { fixedSource.p, fixedSource.err, fixedSource.cancel = nil, nil, nil })
	return rec.Profile
}

// TestIncompleteIsNotInterrupted: a source's profile that is incomplete
// (a read cut short by its own limits) is analyzed as it is; only a
// cancelled run is an interrupted one.
func TestIncompleteIsNotInterrupted(t *testing.T) {
	useFixed(t, 2, nil).Complete = false
	cfg := configWith(t, "profile.source", "fixed")
	res, out, err := Analyze(context.Background(), AnalyzeSpec{Config: cfg, Source: &RecordSpec{Config: cfg}})
	if err != nil || out.Interrupted || len(res.Nodes) != 2 {
		t.Fatalf("%v, %+v", err, out)
	}
}

// TestRecordSourceError: a source that fails without a profile fails the
// recording with its error.
func TestRecordSourceError(t *testing.T) {
	useFixed(t, 1, errors.New("the exporter went away"))
	fixedSource.p = nil
	cfg := configWith(t, "profile.source", "fixed")
	if _, err := Record(context.Background(), RecordSpec{Config: cfg}); err == nil || err.Error() != "the exporter went away" {
		t.Fatalf("%v", err)
	}
}

// TestRecordBatches: every node of a batch a source hands on is spilled.
func TestRecordBatches(t *testing.T) {
	useFixed(t, 3, nil)
	cfg := configWith(t, "profile.source", "batched")
	rec, err := Record(context.Background(), RecordSpec{Config: cfg, SpillDir: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	defer rec.Close()
	path := filepath.Join(t.TempDir(), "p.json")
	if err := rec.Write(nil, path); err != nil {
		t.Fatal(err)
	}
	if p, err := profile.ReadFile(path, nil); err != nil || len(p.Nodes) != 3 || rec.Spill == nil {
		t.Fatalf("%v, %d nodes, spilled %v", err, len(p.Nodes), rec.Spill != nil)
	}
}

// TestSlurmAskedAfterASignal: a run that a signal ended (the source's read
// returns what it had) still asks Slurm for the pending work, under a
// context of its own; without squeue the work is unknown, and said so.
func TestSlurmAskedAfterASignal(t *testing.T) {
	t.Setenv("PATH", t.TempDir()) // no squeue
	useFixed(t, 1, nil)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	fixedSource.cancel = cancel
	cfg := configWith(t, "profile.source", "fixed", "slurm.pending", true)
	rec, err := Record(ctx, RecordSpec{Config: cfg})
	if err != nil {
		t.Fatal(err)
	}
	defer rec.Close()
	if !strings.HasPrefix(rec.Profile.PendingUnknown, "Slurm's pending jobs unknown: ") {
		t.Fatalf("pending_unknown %q", rec.Profile.PendingUnknown)
	}
}

// TestLedgerCountsTheRecording: analyze --source --ledger reads the
// source once and counts what the analysis read; a source with nothing new
// is an update with nothing to count, not an error.
func TestLedgerCountsTheRecording(t *testing.T) {
	useFixed(t, 2, nil)
	dsn := filepath.Join(t.TempDir(), "l.db")
	cfg := configWith(t, "profile.source", "fixed", "ledger.dsn", dsn)
	_, out, err := Analyze(context.Background(), AnalyzeSpec{Config: cfg, Source: &RecordSpec{Config: cfg}})
	if err != nil || out.Ledger == nil || out.Ledger.Rows == 0 {
		t.Fatalf("%v, %+v", err, out.Ledger)
	}
	if fixedSource.reads != 1 {
		t.Fatalf("the source was read %d times", fixedSource.reads)
	}
	if b, err := ledgerBucket(context.Background(), cfg); err != nil || b != cfg.Ledger.Bucket || b <= 0 {
		t.Fatalf("bucket %s, %v; want %s", b, err, cfg.Ledger.Bucket)
	}
	empty := *fixedSource.p
	empty.Nodes = nil
	fixedSource.p = &empty
	up, err := LedgerUpdate(context.Background(), LedgerUpdateSpec{Config: cfg, Source: &RecordSpec{Config: cfg}})
	if err != nil || !up.Nothing {
		t.Fatalf("nothing new: %v, %+v", err, up)
	}
}

// TestHistoryForHTMLOnly: a run that counts into a ledger gets the
// ledger's month to date for an HTML report, and only for one; without a
// ledger an HTML report has none.
func TestHistoryForHTMLOnly(t *testing.T) {
	ctx := context.Background()
	dsn := filepath.Join(t.TempDir(), "l.db")
	for _, c := range []struct {
		format, dsn string
		history     bool
	}{{"html", dsn, true}, {"json", dsn, false}, {"html", "", false}} {
		cfg := configWith(t, "profile.source", "sim", "sim.nodes", 2, "analyze.format", c.format, "ledger.dsn", c.dsn)
		res, _, err := Analyze(ctx, AnalyzeSpec{Config: cfg, Source: &RecordSpec{Config: cfg}})
		if err != nil {
			t.Fatalf("%s %q: %v", c.format, c.dsn, err)
		}
		if (res.History != nil) != c.history {
			t.Errorf("%s, ledger %q: history %v, want %v", c.format, c.dsn, res.History != nil, c.history)
		}
	}
}

// TestLedgerUpdateFromSourceAndFiles: ledger update counts what a source
// reads (an incomplete read that nobody interrupted too) and what profile
// files hold.
func TestLedgerUpdateFromSourceAndFiles(t *testing.T) {
	ctx := context.Background()
	p := useFixed(t, 2, nil)
	p.Complete = false
	cfg := configWith(t, "profile.source", "fixed", "ledger.dsn", filepath.Join(t.TempDir(), "l.db"))
	up, err := LedgerUpdate(ctx, LedgerUpdateSpec{Config: cfg, Source: &RecordSpec{Config: cfg}})
	if err != nil || up.Nothing || up.Rows == 0 {
		t.Fatalf("from the source: %v, %+v", err, up)
	}
	path := filepath.Join(t.TempDir(), "p.json")
	if err := profile.WriteFile(path, p); err != nil {
		t.Fatal(err)
	}
	cfg = configWith(t, "ledger.dsn", filepath.Join(t.TempDir(), "l.db"))
	up, err = LedgerUpdate(ctx, LedgerUpdateSpec{Config: cfg, Inputs: []string{path}})
	if err != nil || up.Nothing || up.Rows == 0 {
		t.Fatalf("from a file: %v, %+v", err, up)
	}
}
