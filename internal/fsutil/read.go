package fsutil

import (
	"fmt"
	"io"
	"os"
)

// ReadRegular reads a settings file (a config or rules file) of at most
// limit bytes. It opens without blocking and refuses anything but a
// regular file: a FIFO put in a file's place would otherwise hang the
// reader until a writer comes, and a device would be read for ever.
func ReadRegular(path string, limit int64) ([]byte, error) {
	f, err := openNoBlock(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return nil, err
	}
	switch {
	case fi.IsDir():
		return nil, fmt.Errorf("%s is a directory, not a file", path)
	case !fi.Mode().IsRegular():
		return nil, fmt.Errorf("%s is not a regular file (%s): refusing to read it", path, kind(fi.Mode()))
	}
	b, err := io.ReadAll(io.LimitReader(f, limit+1))
	if err != nil {
		return nil, err
	}
	if int64(len(b)) > limit {
		return nil, fmt.Errorf("larger than %d KiB: not a seedance settings file", limit>>10)
	}
	return b, nil
}

// kind names a file type for a message.
func kind(m os.FileMode) string {
	switch {
	case m&os.ModeNamedPipe != 0:
		return "a FIFO"
	case m&os.ModeSocket != 0:
		return "a socket"
	case m&os.ModeCharDevice != 0:
		return "a character device"
	case m&os.ModeDevice != 0:
		return "a device"
	}
	return m.Type().String()
}
