package profile

import (
	"errors"
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/seedance/seedance/hwtopo"
	"github.com/seedance/seedance/internal/jsonscan"
)

// Limits of what a profile may hold. Every reader of profiles goes through
// them (the stream, and Read), so that the work and memory of a command are
// bounded by the size of its input, never by the values in it, and a
// document past a limit is refused with one line naming it
// (docs/profile-format.md, "Limits").
const (
	// MaxDepth is the deepest nesting of arrays and objects: a profile
	// needs 6, its topology and labels a few more.
	MaxDepth = jsonscan.MaxDepth
	// MaxStringBytes is the longest JSON string (a note, a label value).
	MaxStringBytes = jsonscan.MaxStringBytes
	// MaxNameBytes is the longest node name (a DNS subdomain, as
	// Kubernetes and Slurm node names are), GPU UUID and model.
	MaxNameBytes = 253
	// MaxWorkloadIDBytes is the longest workload id ("namespace/pod").
	MaxWorkloadIDBytes = 512
	// MaxGPUsPerNode counts GPU entries, MIG devices included (16 GPUs of
	// 7 MIG devices each need 128).
	MaxGPUsPerNode = 1024
	// MaxWorkloadsPerNode bounds a node's workloads (pods, processes).
	MaxWorkloadsPerNode = 100_000
	// MaxIntervalsPerWorkload bounds a workload's tenure: a change of
	// holder every two minutes for a month. Attribution's work on a GPU grows
	// with its holders' intervals.
	MaxIntervalsPerWorkload = 20_000
	// MaxSamplesPerGPU only keeps a series' length an int32: the work
	// and memory of a series are bounded by the input's size (a sample
	// is at least two bytes of JSON, a digit and a comma, and takes 8 of
	// memory per column while its GPU is read), not by a count a long
	// valid run can exceed (400 days at 10 samples a second is 346 M).
	MaxSamplesPerGPU = 1<<31 - 1
	// MaxSpan is the longest run one profile (or a merge of several) covers.
	MaxSpan = 400 * 24 * time.Hour
	// MaxValue bounds every metric that is not a percentage (bytes/s,
	// watts, joules, MHz): larger is no measurement.
	MaxValue = 1e18
	// gzipAllowance and gzipRatio bound decompressed input: at most
	// gzipAllowance plus gzipRatio bytes per compressed byte. Profiles
	// compress 3–20×; a gzip bomb (white space, one long string) compresses
	// a thousand times and is refused after gzipAllowance.
	gzipAllowance = 256 << 20
	gzipRatio     = 200
)

// Earliest and latest times a profile may name.
var (
	minTime = time.Date(1970, 1, 1, 0, 0, 0, 0, time.UTC)
	maxTime = time.Date(2200, 1, 1, 0, 0, 0, 0, time.UTC)
)

// ErrTooLarge marks input past one of the limits.
var ErrTooLarge = errors.New("past a limit")

// validateHeader checks the header fields' ranges.
func validateHeader(p *Profile) error {
	for _, t := range []struct {
		name string
		v    time.Time
	}{{"started_at", p.StartedAt}, {"ended_at", p.EndedAt}} {
		if t.v.Before(minTime) || !t.v.Before(maxTime) {
			return fmt.Errorf("%w: %s %s is outside 1970–2199", ErrInvalid, t.name, t.v.Format(timeFormat))
		}
	}
	if span := p.EndedAt.Sub(p.StartedAt); span > MaxSpan {
		return fmt.Errorf("%w: the profile spans %s, more than the %d days one profile may cover", ErrInvalid, span.Round(time.Hour), int(MaxSpan.Hours()/24))
	}
	if !(p.IntervalS >= 0.001 && p.IntervalS <= 86400) {
		return fmt.Errorf("%w: interval_s %v is outside 0.001–86400 seconds", ErrInvalid, p.IntervalS)
	}
	if len(p.Unscheduled) > MaxWorkloadsPerNode {
		return fmt.Errorf("%w: %d unscheduled workloads, more than %d", ErrInvalid, len(p.Unscheduled), MaxWorkloadsPerNode)
	}
	for i, w := range p.Unscheduled {
		if w.ID == "" || len(w.ID) > MaxWorkloadIDBytes || w.GPUCount < 0 || w.GPUCount > MaxGPUsPerNode {
			return fmt.Errorf("%w: unscheduled[%d]: an id of 1–%d bytes and a gpu_count of 0–%d are required", ErrInvalid, i, MaxWorkloadIDBytes, MaxGPUsPerNode)
		}
	}
	return checkQueues(p.Queues)
}

// validateNode checks a node's own fields (not its GPUs' series); spanS
// is the profile's length in seconds.
func validateNode(n *Node, spanS float64) error {
	if len(n.Name) > MaxNameBytes {
		return fmt.Errorf("node name of %d bytes is longer than %d", len(n.Name), MaxNameBytes)
	}
	if len(n.Workloads) > MaxWorkloadsPerNode {
		return fmt.Errorf("%d workloads, more than %d", len(n.Workloads), MaxWorkloadsPerNode)
	}
	ids := make(map[string]bool, len(n.Workloads))
	for i, w := range n.Workloads {
		if len(w.ID) > MaxWorkloadIDBytes || len(w.Name) > MaxWorkloadIDBytes || len(w.Queue) > MaxNameBytes {
			return fmt.Errorf("workloads[%d]: an id or name longer than %d bytes or a queue longer than %d", i, MaxWorkloadIDBytes, MaxNameBytes)
		}
		if ids[w.ID] {
			return fmt.Errorf("workloads[%d]: id %q appears twice on the node", i, short(w.ID))
		}
		ids[w.ID] = true
		if w.GPUCount < 0 || w.GPUCount > MaxGPUsPerNode || len(w.GPUs) > MaxGPUsPerNode {
			return fmt.Errorf("workload %q: gpu_count %d is outside 0–%d", short(w.ID), w.GPUCount, MaxGPUsPerNode)
		}
		for _, g := range w.GPUs {
			if g < 0 || g >= MaxGPUsPerNode {
				return fmt.Errorf("workload %q: GPU index %d is outside 0–%d", short(w.ID), g, MaxGPUsPerNode-1)
			}
		}
		if w.CPUsAllowed != "" {
			if err := hwtopo.CheckCPUList(w.CPUsAllowed); err != nil {
				return fmt.Errorf("workload %q: cpus_allowed: %v", short(w.ID), err)
			}
		}
		if err := checkTenure(w.Intervals, spanS); err != nil {
			return fmt.Errorf("workload %q: intervals: %v", short(w.ID), err)
		}
		if err := checkSharing(w.Sharing); err != nil {
			return fmt.Errorf("workload %q: %v", short(w.ID), err)
		}
		if err := checkWork(w.Work); err != nil {
			return fmt.Errorf("workload %q: %v", short(w.ID), err)
		}
	}
	if n.Topology != nil {
		if err := n.Topology.Validate(); err != nil {
			return fmt.Errorf("topology: %v", err)
		}
	}
	return nil
}

// metricLimit is each metric's largest valid value: 100 for percentages,
// MaxValue for the rest.
var metricLimit = func() (l [NumMetrics]float64) {
	for m := Metric(0); m < NumMetrics; m++ {
		l[m] = MaxValue
		if strings.HasSuffix(m.String(), "_pct") {
			l[m] = 100
		}
	}
	return l
}()

// Limit is m's largest valid value: 100 for a percentage, MaxValue else.
func (m Metric) Limit() float64 { return metricLimit[m] }

// checkValue checks one value of a metric column: not negative, not above
// the metric's limit (NaN is a null and passes).
func checkValue(m Metric, i int, v float64) error {
	if v < 0 {
		return fmt.Errorf("series.%s[%d] is negative (%v)", m, i, v)
	}
	if v > metricLimit[m] {
		unit := ""
		if metricLimit[m] == 100 {
			unit = " %"
		}
		return fmt.Errorf("series.%s[%d] is %v, above %v%s", m, i, v, metricLimit[m], unit)
	}
	return nil
}

// limitedInflate counts what a decompressor reads and writes, and stops
// with ErrTooLarge when the output outgrows the input by more than a
// profile can.
type limitedInflate struct {
	z     io.Reader
	in    *countingReader
	out   int64
	codec string // gzip, zstd
}

func (l *limitedInflate) Read(p []byte) (int, error) {
	n, err := l.z.Read(p)
	if err != nil && err != io.EOF {
		return n, inflateError(l.codec, err)
	}
	l.out += int64(n)
	if l.out > gzipAllowance+gzipRatio*l.in.n {
		return n, fmt.Errorf("%w: %s input expands to more than %d MiB from %d KiB (%.0f×): not a profile (a decompression bomb?)",
			ErrTooLarge, l.codec, l.out>>20, l.in.n>>10, float64(l.out)/float64(max(l.in.n, 1)))
	}
	return n, err
}

type countingReader struct {
	r io.Reader
	n int64
}

func (c *countingReader) Read(p []byte) (int, error) {
	n, err := c.r.Read(p)
	c.n += int64(n)
	return n, err
}

// short cuts a name from the input for an error message: the message stays
// one readable line whatever the input holds.
func short(s string) string {
	if len(s) <= 64 {
		return s
	}
	return s[:64] + "…"
}

// tenureSlack is how far past ended_at a tenure may end: times are written
// to the millisecond.
const tenureSlack = 0.001

// checkTenure checks a workload's intervals: finite, each non-empty, inside
// the profile, ascending and apart. An empty list is refused: the whole
// profile is written as no list.
func checkTenure(ivs []Tenure, spanS float64) error {
	if ivs != nil && len(ivs) == 0 {
		return fmt.Errorf("an empty list; leave it out when the workload held its GPUs for the whole profile")
	}
	if len(ivs) > MaxIntervalsPerWorkload {
		return fmt.Errorf("%d intervals, more than %d", len(ivs), MaxIntervalsPerWorkload)
	}
	prev := 0.0
	for i, iv := range ivs {
		if !(iv.StartS >= prev && iv.EndS > iv.StartS && iv.EndS <= spanS+tenureSlack) {
			if i > 0 && iv.StartS < prev {
				return fmt.Errorf("[%d] starts at %v s, before the end of the one before it (%v s): intervals are ascending and apart", i, iv.StartS, prev)
			}
			return fmt.Errorf("[%d] [%v, %v) is not an interval inside the profile's 0–%v s", i, iv.StartS, iv.EndS, spanS)
		}
		prev = iv.EndS
	}
	return nil
}
