package pipeline

import (
	"context"
	"path/filepath"
	"testing"

	"github.com/seedance/seedance/profile"
	"github.com/seedance/seedance/source"
)

// fixedProfile is what the "fixed" source returns: a test's profile,
// handed to the pipeline as a source's read.
var fixedProfile *profile.Profile

type fixed struct{}

func (fixed) Profile(context.Context, source.RecordOptions) (*profile.Profile, error) {
	p := *fixedProfile
	return &p, nil
}
func (fixed) Close() error { return nil }

func init() {
	source.Register(source.Registration{Name: "fixed", Open: func(source.Env) (source.Profiler, error) { return fixed{}, nil }, Settings: struct{}{}})
}

// TestIncompleteIsNotInterrupted: a source's profile that is incomplete
// (a read cut short by its own limits) is analyzed as it is; only a
// cancelled run is an interrupted one.
func TestIncompleteIsNotInterrupted(t *testing.T) {
	ctx := context.Background()
	sim := configWith(t, "profile.source", "sim", "sim.nodes", 2)
	rec, err := Record(ctx, RecordSpec{Config: sim, InMemory: true})
	if err != nil {
		t.Fatal(err)
	}
	fixedProfile = rec.Profile
	fixedProfile.Complete = false
	cfg := configWith(t, "profile.source", "fixed")
	res, out, err := Analyze(ctx, AnalyzeSpec{Config: cfg, Source: &RecordSpec{Config: cfg}})
	if err != nil || out.Interrupted || len(res.Report.Nodes) != 2 {
		t.Fatalf("%v, %+v", err, out)
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
