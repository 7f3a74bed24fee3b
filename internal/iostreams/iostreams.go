// Package iostreams carries seedance's standard streams and what is known about
// them (terminal or not, colour allowed or not), so that no code writes to
// os.Stdout directly and tests can capture every byte.
package iostreams

import (
	"bytes"
	"io"
	"os"

	"golang.org/x/term"
)

// IOStreams holds the input and output streams of one command run.
type IOStreams struct {
	In     io.Reader
	Out    io.Writer
	ErrOut io.Writer

	stdoutTTY  bool
	stderrTTY  bool
	noColor    bool
	forceColor bool
}

// System returns the process's own streams. NO_COLOR (any value, per
// no-color.org) turns colour and underlining off; CLICOLOR_FORCE (not 0)
// turns them on where standard output is not a terminal.
func System() *IOStreams {
	_, noColor := os.LookupEnv("NO_COLOR")
	force := os.Getenv("CLICOLOR_FORCE")
	return &IOStreams{
		In: os.Stdin, Out: os.Stdout, ErrOut: os.Stderr,
		stdoutTTY:  term.IsTerminal(int(os.Stdout.Fd())),
		stderrTTY:  term.IsTerminal(int(os.Stderr.Fd())),
		noColor:    noColor,
		forceColor: force != "" && force != "0",
	}
}

// Test returns streams backed by buffers: stdin, stdout, stderr.
func Test() (*IOStreams, *bytes.Buffer, *bytes.Buffer, *bytes.Buffer) {
	in, out, errOut := &bytes.Buffer{}, &bytes.Buffer{}, &bytes.Buffer{}
	return &IOStreams{In: in, Out: out, ErrOut: errOut}, in, out, errOut
}

// IsStdoutTTY reports whether standard output is a terminal.
func (s *IOStreams) IsStdoutTTY() bool { return s.stdoutTTY }

// IsStderrTTY reports whether standard error is a terminal.
func (s *IOStreams) IsStderrTTY() bool { return s.stderrTTY }

// SetTTY marks the streams as terminals (for tests).
func (s *IOStreams) SetTTY(stdout, stderr bool) { s.stdoutTTY, s.stderrTTY = stdout, stderr }

// ColorEnabled reports whether colour (and underlining) may be written to
// standard output.
func (s *IOStreams) ColorEnabled() bool { return !s.noColor && (s.stdoutTTY || s.forceColor) }

// SetColor sets what NO_COLOR and CLICOLOR_FORCE would (for tests).
func (s *IOStreams) SetColor(noColor, force bool) { s.noColor, s.forceColor = noColor, force }
