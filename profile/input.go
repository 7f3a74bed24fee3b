package profile

import (
	"bufio"
	"io"
	"sync"
)

// openInput returns the JSON of a profile input: r itself, or, when it
// starts with gzip's or zstd's magic bytes, its decompressed content,
// bounded by limitedInflate and inflated on a goroutine of its own so that
// inflating overlaps parsing. stop stops that goroutine.
func openInput(r io.Reader) (in io.Reader, stop func(), err error) {
	br := bufio.NewReaderSize(r, 1<<16)
	magic, _ := br.Peek(4)
	counted := &countingReader{r: br}
	zr, codec, done, err := decompressor(magic, counted)
	if err != nil || zr == nil {
		if zr == nil && err == nil {
			return br, done, nil
		}
		return nil, done, err
	}
	// The decompressor is closed by the goroutine that reads it, once it
	// is done: closing it under a read in flight frees what that read uses.
	ra := newReadahead(&limitedInflate{z: zr, in: counted, codec: codec}, done)
	return ra, ra.close, nil
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

// newReadahead reads src ahead; closeSrc, run when the reading stops (the
// end of src, an error, or close), releases it.
func newReadahead(src io.Reader, closeSrc func()) *readahead {
	ra := &readahead{chunks: make(chan chunk, readaheadBuffers), free: make(chan []byte, readaheadBuffers), done: make(chan struct{})}
	for i := 0; i < readaheadBuffers; i++ {
		ra.free <- make([]byte, readaheadChunk)
	}
	go ra.fill(src, closeSrc)
	return ra
}

func (ra *readahead) fill(src io.Reader, closeSrc func()) {
	defer close(ra.chunks)
	defer closeSrc()
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
