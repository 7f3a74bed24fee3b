package fsutil

import "os"

func openNoBlock(path string) (*os.File, error) { return os.Open(path) }

func openWriteNoBlock(path string) (*os.File, error) { return os.OpenFile(path, os.O_WRONLY, 0) }

func owner(os.FileInfo) (int, bool) { return 0, false }

func newFileMode() os.FileMode { return 0o644 }

// Writable says whether this process may create files in dir; on Windows
// it is taken to be so (a read-only share fails the open instead).
func Writable(string) bool { return true }
