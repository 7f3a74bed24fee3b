package dcgm

import (
	"encoding/binary"
	"errors"
	"fmt"
	"math"
	"os"
	"sort"
	"strconv"

	"github.com/klauspost/compress/zstd"
	"github.com/seedance/seedance/internal/fsutil"
	"github.com/seedance/seedance/profile"
)

// A builder that keeps rows in a file (KeepRowsIn) holds in memory only the
// rows after its last Flush: a source that reads a range chunk by chunk
// flushes each finished chunk, so that its memory is one chunk of its GPUs,
// whatever the range. Build reads each GPU's rows back when its node is
// built. The figures are those of a builder that kept every row in memory:
// the chunks' rows are the same rows, and the columns a better-ranked
// metric replaced later (Add) are nulls in the flushed rows too.

// rowsPrefix names the row files: ".seedance-rows-PID-…", so that a later
// run removes those of processes that were killed.
const rowsPrefix = ".seedance-rows-"

// rowStore is the file of a builder's flushed rows: one zstd frame per
// GPU and flush.
type rowStore struct {
	dir  string
	f    *os.File
	size int64
	enc  *zstd.Encoder
	dec  *zstd.Decoder
	raw  []byte // the segment being encoded or decoded
	zbuf []byte
}

// segment is one GPU's rows of one flush: where its frame lies in the
// file, how many rows, and the rank of the metric each column held (-1:
// none).
type segment struct {
	off        int64
	size, rows int
	rank       [profile.NumMetrics]int8
}

// KeepRowsIn makes Flush move the builder's finished rows to a temporary
// file in dir ("" for the system's temporary directory), first removing
// the row files there of runs that were killed. Close removes it.
func (b *Builder) KeepRowsIn(dir string) {
	if dir == "" {
		dir = os.TempDir()
	}
	b.rows = &rowStore{dir: dir}
}

// Close removes the builder's row file, if it has one.
func (b *Builder) Close() error {
	if b.rows == nil || b.rows.f == nil {
		return nil
	}
	s := b.rows
	b.rows = nil
	s.enc.Close()
	s.dec.Close()
	err := s.f.Close()
	return errors.Join(err, os.Remove(s.f.Name()))
}

// Held is how many samples the builder was given since its last Flush:
// what it holds in memory.
func (b *Builder) Held() int { return b.samples - b.flushed }

// Flush moves every GPU's rows before the time (ms since the epoch) to the
// row file: rows no later Add may change, such as those of a chunk whose
// every answer was added. A builder without KeepRowsIn keeps them.
func (b *Builder) Flush(before int64) error {
	if b.rows == nil {
		return nil
	}
	for _, key := range b.keys() {
		g := b.gpus[key]
		k := sort.Search(len(g.t), func(i int) bool { return g.t[i] >= before })
		if k == 0 {
			continue
		}
		seg, err := b.rows.put(g, k)
		if err != nil {
			return fmt.Errorf("keep rows: %w", err)
		}
		g.done = append(g.done, seg)
		g.doneRows += k
		g.t = g.t[:copy(g.t, g.t[k:])]
		for m, c := range g.cols {
			if c != nil {
				g.cols[m] = c[:copy(c, c[k:])]
			}
		}
	}
	b.flushed = b.samples
	return nil
}

// dropEmptyRows lets go of the memory of a GPU whose every row is in the
// row file: a chunk of its rows, kept for the next chunk, that no chunk
// will fill once the read builds its nodes. Its rows and columns are the
// same (allRows makes its columns from their ranks).
func (g *gpuBuild) dropEmptyRows() {
	if len(g.done) == 0 || len(g.t) > 0 {
		return
	}
	g.t = nil
	for m := range g.cols {
		g.cols[m] = nil
	}
}

// keys are the builder's GPUs in a fixed order.
func (b *Builder) keys() []GPUKey {
	out := make([]GPUKey, 0, len(b.gpus))
	for k := range b.gpus {
		out = append(out, k)
	}
	sort.Slice(out, func(i, j int) bool {
		a, c := out[i], out[j]
		if a.Node != c.Node {
			return a.Node < c.Node
		}
		if a.UUID != c.UUID {
			return a.UUID < c.UUID
		}
		return a.GI < c.GI
	})
	return out
}

// open creates the file on the first flush.
func (s *rowStore) open() error {
	if s.f != nil {
		return nil
	}
	fsutil.RemoveStale(s.dir, rowsPrefix)
	f, err := os.CreateTemp(s.dir, rowsPrefix+strconv.Itoa(os.Getpid())+"-*")
	if err != nil {
		return err
	}
	enc, err := zstd.NewWriter(nil, zstd.WithEncoderConcurrency(1), zstd.WithEncoderLevel(zstd.SpeedFastest))
	if err != nil {
		f.Close()
		os.Remove(f.Name())
		return err
	}
	dec, err := zstd.NewReader(nil, zstd.WithDecoderConcurrency(1), zstd.WithDecoderLowmem(true))
	if err != nil {
		enc.Close()
		f.Close()
		os.Remove(f.Name())
		return err
	}
	s.f, s.enc, s.dec = f, enc, dec
	return nil
}

// put writes a GPU's first k rows: their times as varint deltas, then
// each column it has, as float64 bits.
func (s *rowStore) put(g *gpuBuild, k int) (segment, error) {
	if err := s.open(); err != nil {
		return segment{}, err
	}
	seg := segment{off: s.size, rows: k}
	raw := s.raw[:0]
	prev := int64(0)
	for _, t := range g.t[:k] {
		raw = binary.AppendVarint(raw, t-prev)
		prev = t
	}
	for m, c := range g.cols {
		seg.rank[m] = -1
		if c == nil {
			continue
		}
		seg.rank[m] = int8(g.rank[m])
		for _, v := range c[:k] {
			raw = binary.LittleEndian.AppendUint64(raw, math.Float64bits(v))
		}
	}
	s.raw = raw
	s.zbuf = s.enc.EncodeAll(raw, s.zbuf[:0])
	if _, err := s.f.WriteAt(s.zbuf, s.size); err != nil {
		return segment{}, err
	}
	seg.size = len(s.zbuf)
	s.size += int64(seg.size)
	return seg, nil
}

// get appends a segment's rows to t and to the columns cols keeps (a
// column the segment lacks, or holds from a metric other than the one
// that fills it in the end, gets nulls).
func (s *rowStore) get(seg segment, t []int64, cols *[profile.NumMetrics]profile.Values, rank *[profile.NumMetrics]int) ([]int64, error) {
	if cap(s.zbuf) < seg.size {
		s.zbuf = make([]byte, seg.size)
	}
	z := s.zbuf[:seg.size]
	if _, err := s.f.ReadAt(z, seg.off); err != nil {
		return nil, fmt.Errorf("read kept rows: %w", err)
	}
	raw, err := s.dec.DecodeAll(z, s.raw[:0])
	if err != nil {
		return nil, fmt.Errorf("read kept rows: %w", err)
	}
	s.raw = raw
	prev := int64(0)
	for i := 0; i < seg.rows; i++ {
		d, n := binary.Varint(raw)
		if n <= 0 {
			return nil, errors.New("read kept rows: a truncated segment")
		}
		prev += d
		t = append(t, prev)
		raw = raw[n:]
	}
	for m := range cols {
		if rank[m] < 0 {
			continue
		}
		if seg.rank[m] < 0 {
			cols[m] = appendNulls(cols[m], seg.rows)
			continue
		}
		if len(raw) < 8*seg.rows {
			return nil, errors.New("read kept rows: a truncated segment")
		}
		keep := int(seg.rank[m]) == rank[m]
		for i := 0; i < seg.rows; i++ {
			v := profile.Null
			if keep {
				v = math.Float64frombits(binary.LittleEndian.Uint64(raw[8*i:]))
			}
			cols[m] = append(cols[m], v)
		}
		raw = raw[8*seg.rows:]
	}
	return t, nil
}

func appendNulls(c profile.Values, n int) profile.Values {
	for i := 0; i < n; i++ {
		c = append(c, profile.Null)
	}
	return c
}

// allRows is a GPU's whole time axis and columns: the flushed rows read
// back, then those in memory. A GPU with nothing flushed hands out its own.
func (b *Builder) allRows(g *gpuBuild) ([]int64, [profile.NumMetrics]profile.Values, error) {
	if len(g.done) == 0 {
		return g.t, g.cols, nil
	}
	n := g.doneRows + len(g.t)
	t := make([]int64, 0, n)
	var cols [profile.NumMetrics]profile.Values
	for m := range cols {
		if g.rank[m] >= 0 {
			cols[m] = make(profile.Values, 0, n)
		}
	}
	var err error
	for _, seg := range g.done {
		if t, err = b.rows.get(seg, t, &cols, &g.rank); err != nil {
			return nil, cols, err
		}
	}
	t = append(t, g.t...)
	for m := range cols {
		if cols[m] == nil {
			continue
		}
		if g.cols[m] == nil {
			cols[m] = appendNulls(cols[m], len(g.t))
		} else {
			cols[m] = append(cols[m], g.cols[m]...)
		}
	}
	return t, cols, nil
}
