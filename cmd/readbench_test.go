package cmd

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"

	"github.com/klauspost/compress/gzip"
	"github.com/klauspost/compress/zstd"

	"github.com/seedance/seedance/profile"
)

// BenchmarkReadCPU (issue #30, `make bench-read`): the CPU time (user +
// sys) of `seedance analyze` per MB of profile JSON, on two simulator
// profiles (long: 1,000 nodes × 90 min at 10 s; wide: 10,000 nodes × 30 s),
// plain, gzip and zstd, against baselines measured in the same rounds: cat,
// gzip -dc and zstd -dc where installed, encoding/json decoding the
// profile, a plain one-pass number loop over its bytes, and
// SEEDANCE_BENCH_BASELINE (an older seedance binary) when set. Rounds
// (SEEDANCE_BENCH_ROUNDS, default 3) run the cases in an order rotated each
// round; each figure is min / median / max over the rounds. The profiles
// are made once into SEEDANCE_BENCH_READDIR (default the temporary
// directory). Wall time is not reported: on a shared machine it is noise.
func BenchmarkReadCPU(b *testing.B) {
	dir := os.Getenv("SEEDANCE_BENCH_READDIR")
	if dir == "" {
		dir = filepath.Join(os.TempDir(), "seedance-readbench")
	}
	rounds := 3
	if n, err := strconv.Atoi(os.Getenv("SEEDANCE_BENCH_ROUNDS")); err == nil && n > 0 {
		rounds = n
	}
	for _, p := range []struct{ name, nodes, duration, interval string }{
		{"long", "1000", "90m", "10s"}, {"wide", "10000", "30s", "1s"},
	} {
		path := benchSimProfile(b, dir, p.name, p.nodes, p.duration, p.interval)
		b.Run(p.name, func(b *testing.B) {
			for i := 0; i < b.N; i++ {
				readRounds(b, path, rounds)
			}
		})
	}
}

// benchSimProfile makes (once) the simulator's profile and its .gz and
// .zst copies.
func benchSimProfile(b *testing.B, dir, name, nodes, duration, interval string) string {
	path := filepath.Join(dir, name+".json")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		b.Fatal(err)
	}
	if _, err := os.Stat(path); err != nil {
		c := exec.Command(binary, "profile", "--source", "sim", "--sim-nodes", nodes, "--duration", duration, "--interval", interval, "-o", path, "--quiet")
		if out, err := c.CombinedOutput(); err != nil {
			b.Fatalf("%v: %s", err, out)
		}
	}
	for _, z := range []struct {
		ext string
		w   func(io.Writer) (io.WriteCloser, error)
	}{
		{".gz", func(w io.Writer) (io.WriteCloser, error) { return gzip.NewWriterLevel(w, 6) }}, // gzip's own default
		{".zst", func(w io.Writer) (io.WriteCloser, error) { return zstd.NewWriter(w) }},        // zstd's default level
	} {
		if _, err := os.Stat(path + z.ext); err == nil {
			continue
		}
		if err := compressFile(path, path+z.ext, z.w); err != nil {
			b.Fatal(err)
		}
	}
	return path
}

func compressFile(from, to string, newWriter func(io.Writer) (io.WriteCloser, error)) error {
	in, err := os.Open(from)
	if err != nil {
		return err
	}
	defer in.Close()
	out, err := os.Create(to + ".tmp")
	if err != nil {
		return err
	}
	defer out.Close()
	zw, err := newWriter(out)
	if err != nil {
		return err
	}
	if _, err := io.Copy(zw, in); err != nil {
		return err
	}
	if err := zw.Close(); err != nil {
		return err
	}
	return os.Rename(to+".tmp", to)
}

// readCase is one measured command: its CPU seconds and peak RSS.
type readCase struct {
	name string
	run  func() (cpuS, rssMiB float64, err error)
}

// readRounds measures every case rounds times and logs the table.
func readRounds(b *testing.B, path string, rounds int) {
	st, err := os.Stat(path)
	if err != nil {
		b.Fatal(err)
	}
	mb := float64(st.Size()) / 1e6
	out := filepath.Join(b.TempDir(), "report.json")
	cases := readCases(path, out, baselineBinary(b))
	cpu := map[string][]float64{}
	rss := map[string][]float64{}
	for r := 0; r < rounds; r++ {
		for k := range cases {
			c := cases[(k+r)%len(cases)] // rotated: no case always runs first
			s, m, err := c.run()
			if err != nil {
				b.Fatalf("%s: %v", c.name, err)
			}
			cpu[c.name] = append(cpu[c.name], s)
			rss[c.name] = append(rss[c.name], m)
		}
	}
	var sb strings.Builder
	fmt.Fprintf(&sb, "%s: %.0f MB of JSON, %.0f %% of its numbers decimals; %d rounds (min / median / max)\n", filepath.Base(path), mb, decimalShare(path)*100, rounds)
	fmt.Fprintf(&sb, "%-34s %-22s %-22s %s\n", "case", "CPU s", "MB of JSON per CPU-s", "peak RSS MiB")
	for _, c := range cases {
		v := cpu[c.name]
		tput := make([]float64, len(v))
		for i, s := range v {
			tput[i] = mb / s
		}
		fmt.Fprintf(&sb, "%-34s %-22s %-22s %s\n", c.name, spread(v, "%.2f"), spread(tput, "%.0f"), spread(rss[c.name], "%.0f"))
	}
	ratio := func(num, den string) {
		if cpu[num] == nil || cpu[den] == nil {
			return
		}
		r := make([]float64, rounds)
		for i := range r {
			r[i] = cpu[num][i] / cpu[den][i]
		}
		fmt.Fprintf(&sb, "CPU of %s ÷ %s: %s\n", num, den, spread(r, "%.2f"))
	}
	ratio("encoding/json decode", "analyze")
	ratio("baseline analyze", "analyze")
	ratio("analyze .zst", "analyze")
	ratio("analyze .gz", "analyze")
	ratio("analyze --report all", "analyze")
	ratio("analyze", "number loop")
	b.Log("\n" + sb.String())
	b.ReportMetric(mb/median(cpu["analyze"]), "MB/cpu-s")
}

// readCases are the commands measured on path: external ones where
// installed, the in-process baselines always.
func readCases(path, out, baseline string) []readCase {
	cases := []readCase{
		{"analyze", child(binary, "analyze", path, "--format", "json", "-o", out)},
		{"analyze .gz", child(binary, "analyze", path+".gz", "--format", "json", "-o", out)},
		{"analyze .zst", child(binary, "analyze", path+".zst", "--format", "json", "-o", out)},
		{"analyze --report all", child(binary, "analyze", path, "--report", "all", "--format", "json", "-o", out)},
		{"encoding/json decode", benchChild("json", path)},
		{"number loop", benchChild("loop", path)},
	}
	if baseline != "" {
		cases = append(cases, readCase{"baseline analyze", child(baseline, "analyze", path, "--format", "json", "-o", out)})
	}
	for _, t := range []struct{ name, tool, file string }{
		{"cat", "cat", path}, {"gzip -dc", "gzip", path + ".gz"}, {"zstd -dc", "zstd", path + ".zst"},
	} {
		if p, err := exec.LookPath(t.tool); err == nil {
			args := []string{t.file}
			if t.tool != "cat" {
				args = []string{"-dc", t.file}
			}
			cases = append(cases, readCase{t.name, child(p, args...)})
		}
	}
	return cases
}

// child runs a command with its output discarded and reports its CPU time
// and peak RSS.
func child(name string, args ...string) func() (float64, float64, error) {
	return func() (float64, float64, error) {
		devnull, err := os.OpenFile(os.DevNull, os.O_WRONLY, 0)
		if err != nil {
			return 0, 0, err
		}
		defer devnull.Close()
		c := exec.Command(name, args...)
		c.Stdout = devnull
		var stderr strings.Builder
		c.Stderr = &stderr
		c.Env = []string{"HOME=" + os.TempDir(), "PATH=" + os.Getenv("PATH"), "SEEDANCE_READBENCH_CHILD=" + os.Getenv("SEEDANCE_READBENCH_CHILD")}
		if err := c.Run(); err != nil {
			return 0, 0, fmt.Errorf("%v: %s", err, stderr.String())
		}
		ps := c.ProcessState
		return (ps.UserTime() + ps.SystemTime()).Seconds(), float64(ps.SysUsage().(*syscall.Rusage).Maxrss) / 1024, nil
	}
}

// benchChild runs a baseline in a process of its own (this test binary,
// TestReadBenchChild): measured in this one, encoding/json's gigabytes
// would count in the peak RSS of every command started after it.
func benchChild(what, path string) func() (float64, float64, error) {
	run := child(os.Args[0], "-test.run=^TestReadBenchChild$", "-test.count=1")
	return func() (float64, float64, error) {
		os.Setenv("SEEDANCE_READBENCH_CHILD", what+":"+path)
		defer os.Unsetenv("SEEDANCE_READBENCH_CHILD")
		return run()
	}
}

// TestReadBenchChild is BenchmarkReadCPU's baseline process; without
// SEEDANCE_READBENCH_CHILD it does nothing.
func TestReadBenchChild(t *testing.T) {
	what, path, ok := strings.Cut(os.Getenv("SEEDANCE_READBENCH_CHILD"), ":")
	if !ok {
		t.Skip("the baseline process of BenchmarkReadCPU: it runs only under that benchmark")
	}
	var err error
	if what == "json" {
		err = decodeEncodingJSON(path)
	} else {
		err = numberLoop(path)
	}
	if err != nil {
		t.Fatal(err)
	}
}

// decodeEncodingJSON decodes the profile into its structs with
// encoding/json (the baseline of issue #3).
func decodeEncodingJSON(path string) error {
	f, err := os.Open(path)
	if err != nil {
		return err
	}
	defer f.Close()
	var p profile.Profile
	return json.NewDecoder(bufio.NewReaderSize(f, 1<<20)).Decode(&p)
}

// numberLoop reads the file once, summing its digit runs: the bound a
// reader of numbers cannot beat by much.
func numberLoop(path string) error {
	f, err := os.Open(path)
	if err != nil {
		return err
	}
	defer f.Close()
	buf := make([]byte, 1<<20)
	var sum, cur uint64
	for {
		n, err := f.Read(buf)
		for _, c := range buf[:n] {
			if c-'0' <= 9 {
				cur = cur*10 + uint64(c-'0')
			} else {
				sum += cur
				cur = 0
			}
		}
		if err == io.EOF {
			break
		} else if err != nil {
			return err
		}
	}
	if sum == 0 {
		return fmt.Errorf("%s holds no numbers", path)
	}
	return nil
}

// decimalShare is the share of the file's numbers that have a point.
func decimalShare(path string) float64 {
	f, err := os.Open(path)
	if err != nil {
		return 0
	}
	defer f.Close()
	r := bufio.NewReaderSize(f, 1<<20)
	var nums, decimals int
	in, dot, quoted := false, false, false
	for {
		c, err := r.ReadByte()
		if err != nil {
			break
		}
		switch {
		case quoted && c == '\\':
			_, _ = r.ReadByte() // an escaped byte
		case c == '"':
			quoted = !quoted
		case quoted:
		case c-'0' <= 9 || c == '-':
			if !in {
				in, dot = true, false
				nums++
			}
		case c == '.' && in:
			if !dot {
				decimals++
			}
			dot = true
		default:
			in = false
		}
	}
	if nums == 0 {
		return 0
	}
	return float64(decimals) / float64(nums)
}

// spread formats min / median / max.
func spread(v []float64, format string) string {
	s := slices.Clone(v)
	slices.Sort(s)
	return fmt.Sprintf(format+" / "+format+" / "+format, s[0], median(s), s[len(s)-1])
}

func median(v []float64) float64 {
	s := slices.Clone(v)
	slices.Sort(s)
	if len(s) == 0 {
		return 0
	}
	if len(s)%2 == 1 {
		return s[len(s)/2]
	}
	return (s[len(s)/2-1] + s[len(s)/2]) / 2
}
