// Package table prints aligned, borderless text tables. It wraps
// olekukonko/tablewriter so that its API is used in one place only.
package table

import (
	"bytes"
	"io"
	"strings"

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

// Row adds one row.
func (t *Table) Row(cells ...string) {
	r := make([]any, len(cells))
	for i, s := range cells {
		r[i] = s
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
