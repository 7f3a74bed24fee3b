// Package table prints aligned, borderless text tables. It wraps
// olekukonko/tablewriter so that its API is used in one place only.
package table

import (
	"io"

	"github.com/olekukonko/tablewriter"
	"github.com/olekukonko/tablewriter/renderer"
	"github.com/olekukonko/tablewriter/tw"
)

// Table collects rows and prints them aligned under a header.
type Table struct {
	t *tablewriter.Table
}

// New returns a table with the given column headers.
func New(w io.Writer, header ...string) *Table {
	t := tablewriter.NewTable(w,
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
	return &Table{t: t}
}

// Row adds one row.
func (t *Table) Row(cells ...string) {
	r := make([]any, len(cells))
	for i, s := range cells {
		r[i] = s
	}
	_ = t.t.Append(r...)
}

// Flush prints the table.
func (t *Table) Flush() error { return t.t.Render() }
