package cmd

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/seedance/seedance/internal/testkit/engine"

	"github.com/seedance/seedance/internal/exit"

	"github.com/seedance/seedance/internal/testkit/golden"
	"github.com/seedance/seedance/internal/testkit/hostile"
)

const hostileDir = "testdata/hostile"

// TestHostileCorpusUpToDate keeps testdata/hostile in step with its
// generator (internal/testkit/hostile); -update rewrites it.
func TestHostileCorpusUpToDate(t *testing.T) {
	for _, c := range hostile.Cases() {
		golden.Check(t, filepath.Join(hostileDir, c.Name), c.Data)
	}
}

// readers are the commands that read profiles, as the fault campaign ran
// them.
var readers = [][]string{
	{"analyze"},
	{"analyze", "--report", "all", "--format", "json"},
	{"recommend", "--dialect", "json"},
}

// TestHostileCorpus runs every file of the corpus, and a gzip bomb, through
// every command that reads profiles, as separate processes: none may panic,
// run past 10 s or 1 GB, or fail with more than one line; all must agree on
// what is valid; and no hostile name may run a command.
func TestHostileCorpus(t *testing.T) {
	engine.SkipShort(t, "runs the binary ~140 times")
	// Separate processes over separate files, each measured on its own
	// (rusage): safe to run side by side with the rest of the package.
	t.Parallel()
	valid := map[string]bool{}
	for _, c := range hostile.Cases() {
		valid[c.Name] = c.Valid
	}
	entries, err := os.ReadDir(hostileDir)
	if err != nil {
		t.Fatal(err)
	}
	var files []string
	for _, e := range entries {
		files = append(files, filepath.Join(hostileDir, e.Name()))
	}
	bomb := filepath.Join(t.TempDir(), "bomb.json.gz")
	// 1 GiB of white space
	if err := os.WriteFile(bomb, hostile.Bomb(1<<30), 0o644); err != nil {
		t.Fatal(err)
	}
	files = append(files, bomb)
	sort.Strings(files)
	if len(files) < 40 {
		t.Fatalf("only %d files in %s", len(files), hostileDir)
	}
	for _, f := range files {
		name := filepath.Base(f)
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			want, known := valid[name]
			if !known && name != "bomb.json.gz" {
				t.Fatalf("%s is not in the generator (run the corpus test with -update)", name)
			}
			accepted := map[bool][]string{}
			for _, args := range readers {
				ok := runHostile(t, f, args)
				accepted[ok] = append(accepted[ok], strings.Join(args, " "))
			}
			if len(accepted) != 1 {
				t.Fatalf("commands disagree: accepted by %v, refused by %v", accepted[true], accepted[false])
			}
			if _, ok := accepted[want]; !ok {
				t.Fatalf("valid=%v expected", want)
			}
		})
	}
}

// runHostile runs one command over a file and checks how it ended; it
// reports whether the command accepted the file.
func runHostile(t *testing.T, file string, args []string) bool {
	t.Helper()
	dir := t.TempDir()
	abs, _ := filepath.Abs(file)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	c := exec.CommandContext(ctx, binary, append(append([]string(nil), args...), "--input", abs)...)
	c.Dir, c.Env = dir, []string{"HOME=" + dir, "PATH=/usr/bin:/bin"}
	var stdout, stderr strings.Builder
	c.Stdout, c.Stderr = &stdout, &stderr
	start := time.Now()
	err := c.Run()
	code := exitCode(err)
	what := strings.Join(args, " ")
	if ctx.Err() != nil {
		t.Fatalf("%s: ran past 10 s", what)
	}
	if ru, ok := c.ProcessState.SysUsage().(*syscall.Rusage); ok && ru.Maxrss > 1<<20 && !raceEnabled {
		t.Errorf("%s: peak RSS %d MiB, over 1 GiB", what, ru.Maxrss>>10)
	}
	errOut := stderr.String()
	if strings.Contains(errOut, "panic") || strings.Contains(errOut, "goroutine ") {
		t.Fatalf("%s: panicked:\n%.2000s", what, errOut)
	}
	if _, err := os.Stat(filepath.Join(dir, "PWNED")); err == nil {
		t.Fatalf("%s: a name ran a command", what)
	}
	switch code {
	case 0:
		if stdout.Len() == 0 {
			t.Errorf("%s: exit 0 and no output", what)
		}
		return true
	case int(exit.Usage):
		if strings.Count(errOut, "\n") != 1 || !strings.HasPrefix(errOut, "seedance: ") || len(errOut) > 600 {
			t.Errorf("%s: not one short line: %q", what, errOut)
		}
		t.Logf("%s (%v): %s", what, time.Since(start).Round(time.Millisecond), strings.TrimSpace(errOut))
		return false
	}
	t.Fatalf("%s: exit %d: %s", what, code, errOut)
	return false
}

// TestHostileNamesRenderInert: names full of markup, escapes and shell
// reach the human formats as inert text: no control character, no live
// HTML in Markdown, no line that looks like a suggested command.
func TestHostileNamesRenderInert(t *testing.T) {
	path := filepath.Join(hostileDir, "hostile-names.json")
	for _, format := range []string{"table", "markdown"} {
		r := run(t, nil, "analyze", path, "--report", "all", "--format", format)
		if r.code != 0 {
			t.Fatalf("%s: exit %d %s", format, r.code, r.errOut)
		}
		for i, c := range r.out {
			if (c < 0x20 && c != '\n') || c == 0x7f {
				t.Fatalf("%s: control byte %#x at %d:\n%s", format, c, i, r.out)
			}
		}
		banned := []string{"\u202e", "\u0085", "\n    $ curl", "\n$ curl"}
		if format == "markdown" {
			banned = append(banned, "<img", "[link](")
		}
		for _, b := range banned {
			if strings.Contains(r.out, b) {
				t.Errorf("%s output holds %q:\n%s", format, b, r.out)
			}
		}
		if !strings.Contains(r.out, `\x1b`) || (format == "table" && !strings.Contains(r.out, `\x0d\x0a$ curl evil`)) {
			t.Errorf("%s does not show the escapes visibly:\n%s", format, r.out)
		}
	}
}

// TestStderrLinesInert: an error that carries a name from the input (a
// file name here) reaches the terminal with control characters shown, not
// acted on.
func TestStderrLinesInert(t *testing.T) {
	bad := filepath.Join(t.TempDir(), "evil\x1b[2J\u202e.json")
	if err := os.WriteFile(bad, []byte("{"), 0o644); err != nil {
		t.Fatal(err)
	}
	r := run(t, nil, "analyze", bad)
	if strings.ContainsRune(r.errOut, 0x1b) || strings.ContainsRune(r.errOut, 0x202e) || !strings.Contains(r.errOut, `evil\x1b[2J\u202e.json`) {
		t.Fatalf("stderr %q", r.errOut)
	}
}
