package profile

import (
	"bufio"
	"compress/gzip"
	"fmt"
	"io"
	"strings"
	"sync"
)

// openInput returns the JSON of a profile input: r itself, or, when it
// starts with gzip's magic bytes, its decompressed content, bounded by
// limitedGzip and inflated on a goroutine of its own so that inflating
// overlaps parsing. stop stops that goroutine.
func openInput(r io.Reader) (in io.Reader, stop func(), err error) {
	br := bufio.NewReaderSize(r, 1<<16)
	if magic, _ := br.Peek(2); len(magic) < 2 || magic[0] != 0x1f || magic[1] != 0x8b {
		return br, func() {}, nil
	}
	counted := &countingReader{r: br}
	zr, err := gzip.NewReader(counted)
	if err != nil {
		return nil, func() {}, fmt.Errorf("gzip: %v", strings.TrimPrefix(err.Error(), "gzip: "))
	}
	ra := newReadahead(&limitedGzip{z: zr, in: counted})
	return ra, func() { ra.close(); zr.Close() }, nil
}

// readahead reads its source on a goroutine, a chunk ahead of the reader.
type readahead struct {
	chunks chan chunk
	free   chan []byte
	done   chan struct{}
	once   sync.Once
	cur    []byte // unread part of held
	held   []byte // the chunk being read, returned to free when spent
	err    error
}

type chunk struct {
	b   []byte
	err error
}

const (
	readaheadChunk   = 1 << 20
	readaheadBuffers = 4
)

func newReadahead(src io.Reader) *readahead {
	ra := &readahead{chunks: make(chan chunk, readaheadBuffers), free: make(chan []byte, readaheadBuffers), done: make(chan struct{})}
	for i := 0; i < readaheadBuffers; i++ {
		ra.free <- make([]byte, readaheadChunk)
	}
	go ra.fill(src)
	return ra
}

func (ra *readahead) fill(src io.Reader) {
	defer close(ra.chunks)
	for {
		var buf []byte
		select {
		case buf = <-ra.free:
		case <-ra.done:
			return
		}
		n, err := fillBuf(src, buf)
		select {
		case ra.chunks <- chunk{buf[:n], err}:
		case <-ra.done:
			return
		}
		if err != nil {
			return
		}
	}
}

// fillBuf reads into buf until it is full or src fails; unlike
// io.ReadFull it passes src's own error through, so that a truncated gzip
// stream (io.ErrUnexpectedEOF) is not taken for the end of the input.
func fillBuf(src io.Reader, buf []byte) (n int, err error) {
	for n < len(buf) && err == nil {
		var k int
		k, err = src.Read(buf[n:])
		n += k
	}
	if n == len(buf) && err == nil {
		return n, nil
	}
	return n, err
}

func (ra *readahead) Read(p []byte) (int, error) {
	for len(ra.cur) == 0 {
		if ra.err != nil {
			return 0, ra.err
		}
		if ra.held != nil {
			ra.free <- ra.held[:cap(ra.held)]
			ra.held = nil
		}
		c, ok := <-ra.chunks
		if !ok {
			ra.err = io.EOF
			continue
		}
		ra.held, ra.cur, ra.err = c.b, c.b, c.err
	}
	n := copy(p, ra.cur)
	ra.cur = ra.cur[n:]
	return n, nil
}

// close stops the goroutine; the reader must not be used afterwards.
func (ra *readahead) close() { ra.once.Do(func() { close(ra.done) }) }
