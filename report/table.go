package report

import (
	"bytes"
	"fmt"
	"io"

	"github.com/olekukonko/tablewriter"
	"github.com/olekukonko/tablewriter/renderer"
	"github.com/olekukonko/tablewriter/tw"

	"github.com/racelab/racelab/scenarios/results"
)

// This is the only file that imports tablewriter: the terminal table and
// the markdown table are both drawn by writeGrid.

// renderTable writes the terminal report: a heading, the scale of the run,
// the table, and the breakages in plain words, all within o.Width.
func renderTable(w io.Writer, r *results.Result, o Options) error {
	s := summarize(r, o)
	s.fitTo(o.Width)
	var b bytes.Buffer
	heading := r.Scenario
	if r.Rule != "" {
		heading += " — " + r.Rule
	}
	b.WriteString(wrapLine(heading, o.Width) + "\n" + wrapLine(s.scale, o.Width) + "\n\n")
	if err := writeGrid(&b, s.cols, s.rows, false); err != nil {
		return err
	}
	if len(s.lines) > 0 {
		b.WriteByte('\n')
		for _, l := range s.lines {
			b.WriteString(wrapLine(l, o.Width) + "\n")
		}
	}
	_, err := w.Write(b.Bytes())
	return err
}

// writeGrid draws the summary table: ASCII borders for a terminal, or a
// GitHub-flavoured markdown table of cells the caller has escaped. Widths
// follow the cells alone, never the terminal or the locale: fitColumns
// chooses and folds the cells beforehand when a table must fit a width.
func writeGrid(w io.Writer, cols []column, rows [][]string, markdown bool) error {
	if len(rows) == 0 {
		_, err := io.WriteString(w, "(no target ran)\n")
		return err
	}
	header := make([]string, len(cols))
	align := make([]tw.Align, len(cols))
	for i, c := range cols {
		header[i] = c.header()
		if markdown {
			header[i] = c.label()
		}
		align[i] = tw.AlignLeft
		if c.numeric {
			align[i] = tw.AlignRight
		}
	}
	var rend tw.Renderer = renderer.NewBlueprint(tw.Rendition{Symbols: tw.NewSymbols(tw.StyleASCII)})
	if markdown {
		rend = renderer.NewMarkdown()
	}
	t := tablewriter.NewTable(w,
		tablewriter.WithRenderer(rend),
		// tablewriter sizes ambiguous-width characters (the "…" in
		// "SELECT … FOR UPDATE") by the locale unless told; pinned narrow,
		// a result renders to the same bytes everywhere. The setting is
		// process-wide, and this file is tablewriter's only user.
		tablewriter.WithEastAsian(tw.Off),
		tablewriter.WithHeaderAutoFormat(tw.Off),
		tablewriter.WithHeaderAlignmentConfig(tw.CellAlignment{PerColumn: align}),
		tablewriter.WithRowAlignmentConfig(tw.CellAlignment{PerColumn: align}),
	)
	t.Header(header)
	if err := t.Bulk(rows); err != nil {
		return fmt.Errorf("lay out table: %w", err)
	}
	if err := t.Render(); err != nil {
		return fmt.Errorf("draw table: %w", err)
	}
	return nil
}
