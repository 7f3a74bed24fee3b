package pipeline

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/seedance/seedance/profile"
	"github.com/seedance/seedance/source"
)

// TestRecordRefusesAndExplains: a command under a source that does not see
// this node's processes is a usage error, and only then; a source that
// cannot open while a command waits says the command was not run (a cost
// gate must not pass on an unmeasured run), and only when there is one.
func TestRecordRefusesAndExplains(t *testing.T) {
	ctx := context.Background()
	prom := simConfig(t)
	prom.Profile.Source = "prometheus"
	_, err := Record(ctx, RecordSpec{Config: prom, Command: []string{"true"}})
	if err == nil || !strings.Contains(err.Error(), "--source prometheus cannot profile a command") {
		t.Fatalf("a command under prometheus: %v", err)
	}
	if _, err := Record(ctx, RecordSpec{Config: prom}); err == nil || strings.Contains(err.Error(), "cannot profile a command") {
		t.Fatalf("prometheus without a command: %v", err)
	}
	bad := configWith(t, "profile.source", "sim", "sim.nodes", 2, "sim.start", "yesterday")
	_, err = Record(ctx, RecordSpec{Config: bad, Command: []string{"make", "train"}})
	if err == nil || !strings.Contains(err.Error(), "; make was not run (a cost gate never passes") {
		t.Fatalf("a source that cannot open, with a command: %v", err)
	}
	_, err = Record(ctx, RecordSpec{Config: bad})
	if err == nil || strings.Contains(err.Error(), "was not run") {
		t.Fatalf("a source that cannot open, without a command: %v", err)
	}
}

// TestRecordSpillsAndCloses: a source read in batches of nodes spills
// every node of every batch to a file, which Close removes; in memory
// (InMemory) there is no spill.
func TestRecordSpillsAndCloses(t *testing.T) {
	ctx := context.Background()
	cfg := simConfig(t)
	dir := t.TempDir()
	rec, err := Record(ctx, RecordSpec{Config: cfg, SpillDir: dir})
	if err != nil {
		t.Fatal(err)
	}
	if rec.Spill == nil {
		t.Fatal("the simulated cluster was not spilled")
	}
	path := filepath.Join(t.TempDir(), "p.json")
	if err := rec.Write(nil, path); err != nil {
		t.Fatal(err)
	}
	if p, err := profile.ReadFile(path, nil); err != nil || len(p.Nodes) != 16 {
		t.Fatalf("the spilled profile: %v, %d nodes, want 16", err, len(p.Nodes))
	}
	if entries, _ := os.ReadDir(dir); len(entries) == 0 {
		t.Fatal("no spill file while the recording is open")
	}
	rec.Close()
	if entries, _ := os.ReadDir(dir); len(entries) != 0 {
		t.Fatalf("Close left %d spill file(s)", len(entries))
	}
	mem, err := Record(ctx, RecordSpec{Config: cfg, SpillDir: dir, InMemory: true})
	if err != nil {
		t.Fatal(err)
	}
	defer mem.Close()
	if mem.Spill != nil || len(mem.Profile.Nodes) != 16 {
		t.Fatalf("in memory: spill %v, %d nodes", mem.Spill != nil, len(mem.Profile.Nodes))
	}
}

// progressLog records what the sampling loop told the progress display.
type progressLog struct{ started, reads, samples int }

func (p *progressLog) Read(source.ReadProgress) { p.reads++ }
func (p *progressLog) Start(nodes, gpus int)    { p.started++ }
func (p *progressLog) Sample(source.Progress)   { p.samples++ }
func (p *progressLog) Done()                    {}

// TestRecordOptions: checkpoints go to the output file when there is one
// and a period is set, never to stdout; a sampled source's progress counts
// samples, Prometheus' counts its reads instead.
func TestRecordOptions(t *testing.T) {
	cfg := simConfig(t)
	for _, c := range []struct {
		output     string
		checkpoint time.Duration
		want       bool
	}{{"p.json", time.Minute, true}, {"-", time.Minute, false}, {"p.json", 0, false}} {
		cfg.Profile.Output, cfg.Profile.Checkpoint = c.output, c.checkpoint
		ro := (&RecordSpec{Config: cfg}).recordOptions("sim", nil)
		if got := ro.OnCheckpoint != nil && ro.Checkpoint == c.checkpoint; got != c.want {
			t.Errorf("output %q, checkpoint %s: checkpoints %v, want %v", c.output, c.checkpoint, got, c.want)
		}
	}
	for _, c := range []struct {
		name              string
		sampled, readProg bool
	}{{"sim", true, false}, {"prometheus", false, true}} {
		pl := &progressLog{}
		spec := &RecordSpec{Config: cfg, Progress: pl}
		ro := spec.recordOptions(c.name, nil)
		env := spec.env(c.name)
		if (ro.OnSample != nil) != c.sampled || (pl.started == 1) != c.sampled || (env.Progress != nil) != c.readProg {
			t.Errorf("%s: OnSample %v, started %d, read progress %v", c.name, ro.OnSample != nil, pl.started, env.Progress != nil)
		}
	}
	if env := (&RecordSpec{Config: cfg}).env("prometheus"); env.Progress != nil {
		t.Error("a read progress without a display")
	}
}

// TestNothingObserved: a recording without a sample says so, with the
// source's first note when it holds one (the spill's header holds none
// that matter).
func TestNothingObserved(t *testing.T) {
	r := &Recording{Profile: &profile.Profile{Source: "scrape"}}
	if got := r.nothingObserved("; no file written").Error(); got != "nothing observed: the scrape source collected no GPU sample; no file written" {
		t.Errorf("no notes: %s", got)
	}
	r.Profile.Notes = []string{"target a: 3 of 3 scrapes failed", "more"}
	if got := r.nothingObserved("").Error(); !strings.HasSuffix(got, "collected no GPU sample (target a: 3 of 3 scrapes failed)") {
		t.Errorf("notes: %s", got)
	}
	r.Spill = &profile.Spill{}
	if got := r.nothingObserved("").Error(); strings.Contains(got, "(") {
		t.Errorf("spill: %s", got)
	}
}

// TestTallyLine: the summary line's mean utilization is that of the
// readings, nulls left out; none gives n/a.
func TestTallyLine(t *testing.T) {
	var tl tally
	g := profile.GPU{}
	g.Series.T = profile.Values{0, 1, 2}
	g.Series.GPUUtilPct = profile.Values{10, profile.Null, 31}
	tl.add([]profile.Node{{Name: "a", GPUs: []profile.GPU{g, {}}}})
	if got := tl.line("-", false); got != "wrote stdout: 1 nodes, 2 GPUs, 3 samples, mean GPU util 20% (incomplete)" {
		t.Errorf("line: %s", got)
	}
	var none tally
	if got := none.line("p.json", true); got != "wrote p.json: 0 nodes, 0 GPUs, 0 samples, mean GPU util n/a" {
		t.Errorf("line: %s", got)
	}
}

// TestRecordAsksSlurm: with slurm.pending a source read in batches is read
// in memory instead, so that Slurm's queue is asked; without squeue the
// pending work is unknown, and the profile says so.
func TestRecordAsksSlurm(t *testing.T) {
	t.Setenv("PATH", t.TempDir()) // no squeue
	cfg := configWith(t, "profile.source", "sim", "sim.nodes", 2, "slurm.pending", true)
	rec, err := Record(context.Background(), RecordSpec{Config: cfg, SpillDir: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	defer rec.Close()
	if rec.Spill != nil || !strings.HasPrefix(rec.Profile.PendingUnknown, "Slurm's pending jobs unknown: ") {
		t.Fatalf("spill %v, pending_unknown %q", rec.Spill != nil, rec.Profile.PendingUnknown)
	}
}

// TestOpenProfileDirectory: a directory given as a profile is named as
// one, not read.
func TestOpenProfileDirectory(t *testing.T) {
	dir := t.TempDir()
	if _, err := openProfile(dir); err == nil || !strings.HasSuffix(err.Error(), "it is a directory, not a profile file") {
		t.Fatalf("%v", err)
	}
	if _, err := openProfile(filepath.Join(dir, "none.json")); err == nil || !strings.Contains(err.Error(), "no such file") {
		t.Fatalf("%v", err)
	}
}
