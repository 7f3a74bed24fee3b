// Package table prints aligned, borderless text tables. It wraps
// olekukonko/tablewriter so that its API is used in one place only.
package table

import (
	"bytes"
	"fmt"
	"io"
	"strings"
	"unicode/utf8"

	"github.com/olekukonko/tablewriter"
	"github.com/olekukonko/tablewriter/renderer"
	"github.com/olekukonko/tablewriter/tw"
)

// Table collects rows and prints them aligned under a header.
type Table struct {
	t   *tablewriter.Table
	buf bytes.Buffer
	w   io.Writer
}

// New returns a table with the given column headers.
func New(w io.Writer, header ...string) *Table {
	tb := &Table{w: w}
	t := tablewriter.NewTable(&tb.buf,
		tablewriter.WithRenderer(renderer.NewBlueprint(tw.Rendition{
			Borders: tw.BorderNone,
			Symbols: tw.NewSymbols(tw.StyleNone),
			Settings: tw.Settings{
				Separators: tw.Separators{BetweenRows: tw.Off, BetweenColumns: tw.Off},
				Lines:      tw.Lines{ShowHeaderLine: tw.Off},
			},
		})),
		tablewriter.WithHeaderAlignment(tw.AlignLeft),
		tablewriter.WithRowAlignment(tw.AlignLeft),
		tablewriter.WithHeaderAutoFormat(tw.Off),
		tablewriter.WithPadding(tw.Padding{Left: "", Right: "  ", Overwrite: true}),
	)
	h := make([]any, len(header))
	for i, s := range header {
		h[i] = s
	}
	t.Header(h...)
	tb.t = t
	return tb
}

// CSVCell is a value for a CSV cell a spreadsheet may open: Visible, and
// guarded against formula injection (a value starting with =, +, -, @,
// tab or CR is prefixed with a single quote).
func CSVCell(s string) string {
	s = Visible(s)
	if s != "" && strings.ContainsRune("=+-@\t\r", rune(s[0])) {
		return "'" + s
	}
	return s
}

// Visible writes the characters that would act on a terminal instead of
// showing (C0 and C1 controls, DEL, line and paragraph separators, bidi
// overrides and isolates, the BOM) as visible escapes: "\x1b", "\u202e".
// Everything else is kept, so names read as they are.
func Visible(s string) string {
	if !strings.ContainsFunc(s, invisible) {
		return s
	}
	var b strings.Builder
	for _, r := range s {
		switch {
		case !invisible(r):
			b.WriteRune(r)
		case r < 0x100:
			fmt.Fprintf(&b, "\\x%02x", r)
		default:
			fmt.Fprintf(&b, "\\u%04x", r)
		}
	}
	return b.String()
}

// VisibleLayout is Visible but keeps tabs and line ends, which a page's
// markup is made of and HTML shows as white space: the text of an HTML
// report goes through it whole, so that no name reaches a browser with a
// bidi override, an escape or a NUL in it.
func VisibleLayout(s string) string {
	if !strings.ContainsFunc(s, invisibleNotLayout) {
		return s
	}
	var b strings.Builder
	for _, r := range s {
		if invisibleNotLayout(r) {
			b.WriteString(Visible(string(r)))
		} else {
			b.WriteRune(r)
		}
	}
	return b.String()
}

func invisibleNotLayout(r rune) bool { return r != '\t' && r != '\n' && r != '\r' && invisible(r) }

func invisible(r rune) bool {
	switch {
	case r < 0x20, r == 0x7f, r >= 0x80 && r < 0xa0:
		return true
	case r == 0x2028, r == 0x2029, r == 0x200e, r == 0x200f, r == 0xfeff, r == utf8.RuneError:
		return true
	case r >= 0x202a && r <= 0x202e, r >= 0x2066 && r <= 0x2069:
		return true
	}
	return false
}

// Row adds one row; cells are shown with Visible.
func (t *Table) Row(cells ...string) {
	r := make([]any, len(cells))
	for i, s := range cells {
		r[i] = Visible(s)
	}
	_ = t.t.Append(r...)
}

// Flush prints the table, without the padding tablewriter leaves at the
// end of each line.
func (t *Table) Flush() error {
	if err := t.t.Render(); err != nil {
		return err
	}
	lines := strings.Split(strings.TrimRight(t.buf.String(), "\n"), "\n")
	for i, l := range lines {
		lines[i] = strings.TrimRight(l, " ")
	}
	_, err := io.WriteString(t.w, strings.Join(lines, "\n")+"\n")
	return err
}

// Flatten puts a message on one line: every run of white space, newlines
// included, becomes one space.
func Flatten(s string) string { return strings.Join(strings.Fields(s), " ") }
