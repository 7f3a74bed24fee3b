package profile

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"strings"

	"github.com/klauspost/compress/gzip"
	"github.com/klauspost/compress/zstd"
)

// Compression is how a profile file's bytes are compressed.
type Compression int

// The compressions a profile is written with; readers detect each by its
// magic bytes, whatever the file's name.
const (
	Uncompressed Compression = iota
	Gzip
	Zstd
	// ZstdFast is zstd at its fastest level: for what is written often
	// and read once (the ledger's carried samples, at every update).
	ZstdFast
)

// CompressionOf is the compression a file name asks for: ".gz" gzip,
// ".zst" zstd, anything else none.
func CompressionOf(path string) Compression {
	switch {
	case strings.HasSuffix(path, ".gz"):
		return Gzip
	case strings.HasSuffix(path, ".zst"):
		return Zstd
	}
	return Uncompressed
}

// zstdMagic begins every zstd frame.
var zstdMagic = []byte{0x28, 0xb5, 0x2f, 0xfd}

// maxZstdWindow bounds the window a zstd input may ask the decoder to
// hold: seedance writes 8 MiB windows; a hostile frame asking for
// gigabytes is refused.
const maxZstdWindow = 64 << 20

// zstdDecoderOptions decode on the calling goroutine with whole-block
// buffers: the low-memory mode sizes each buffer to its block and costs
// about 40 % more CPU (measured on a 345 MB profile) to save about 6 MiB.
var zstdDecoderOptions = []zstd.DOption{
	zstd.WithDecoderConcurrency(1),
	zstd.WithDecoderMaxWindow(maxZstdWindow),
	zstd.WithDecoderLowmem(false),
}

// compressed runs write on w through c's compressor.
func compressed(w io.Writer, c Compression, write func(io.Writer) error) error {
	var zw io.WriteCloser
	switch c {
	case Gzip:
		zw = gzip.NewWriter(w)
	case Zstd, ZstdFast:
		// A window of spillWindow: a profile's columns compress no better
		// with the default 8 MiB, whose history alone is 16 MiB of memory
		// (the ledger writes its tail this way at every update).
		level := zstd.SpeedDefault
		if c == ZstdFast {
			level = zstd.SpeedFastest
		}
		enc, err := zstd.NewWriter(w, zstd.WithEncoderConcurrency(1), zstd.WithEncoderLevel(level), zstd.WithWindowSize(spillWindow), zstd.WithLowerEncoderMem(true))
		if err != nil {
			return err
		}
		zw = enc
	default:
		return write(w)
	}
	if err := write(zw); err != nil {
		zw.Close()
		return err
	}
	return zw.Close()
}

// decompressor is the reader of a compressed input that begins with
// magic (nil: not compressed), and what stops it.
func decompressor(magic []byte, in io.Reader) (r io.Reader, codec string, stop func(), err error) {
	switch {
	case len(magic) >= 2 && magic[0] == 0x1f && magic[1] == 0x8b:
		zr, err := gzip.NewReader(in)
		if err != nil {
			return nil, "", func() {}, fmt.Errorf("gzip: %v", strings.TrimPrefix(err.Error(), "gzip: "))
		}
		return zr, "gzip", func() { zr.Close() }, nil
	case bytes.HasPrefix(magic, zstdMagic):
		zr, err := zstd.NewReader(in, zstdDecoderOptions...)
		if err != nil {
			return nil, "", func() {}, fmt.Errorf("zstd: %v", strings.TrimPrefix(err.Error(), "zstd: "))
		}
		return zr, "zstd", zr.Close, nil
	}
	return nil, "", func() {}, nil
}

// inflateError describes a decompressor's error in one line: an input cut
// short, or one that is not what its magic bytes say.
func inflateError(codec string, err error) error {
	if errors.Is(err, io.ErrUnexpectedEOF) {
		// The compressed stream, or its trailer (its checksum), ends early:
		// what it holds cannot be checked, so it is not a profile.
		return fmt.Errorf("%w: %s input ends early (truncated: its checksum cannot be checked); a profile cut off while it was written or copied", ErrInvalid, codec)
	}
	msg := strings.TrimPrefix(strings.TrimPrefix(err.Error(), "gzip: "), "zstd: ")
	return fmt.Errorf("%w: %s input: %s", ErrInvalid, codec, strings.ReplaceAll(msg, "\n", " "))
}
