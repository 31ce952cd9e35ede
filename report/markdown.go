package report

import (
	"bytes"
	"io"
	"strings"
	"unicode"

	"github.com/racelab/racelab/scenarios"
)

// renderMarkdown writes the report for a GitHub job summary or a handout:
// the scenario as a heading, its rule in italics, the scale of the run, the
// summary table, and the plain-words lines as a bullet list.
func renderMarkdown(w io.Writer, r *scenarios.Result, _ Options) error {
	s := summarize(r)
	var b bytes.Buffer
	b.WriteString("### " + escapeMarkdown(r.Scenario) + "\n\n")
	if r.Rule != "" {
		b.WriteString("*" + escapeMarkdown(r.Rule) + "*\n\n")
	}
	b.WriteString(s.scale + "\n\n")
	rows := make([][]string, len(s.rows))
	for i, r := range s.rows {
		rows[i] = make([]string, len(r))
		for j, c := range r {
			rows[i][j] = escapeMarkdown(c)
		}
	}
	if err := writeGrid(&b, columns, rows, true); err != nil {
		return err
	}
	if len(s.lines) > 0 {
		b.WriteByte('\n')
		for _, l := range s.lines {
			b.WriteString("- " + escapeMarkdown(l) + "\n")
		}
	}
	_, err := w.Write(b.Bytes())
	return err
}

// escapeMarkdown makes s show as written, in prose or in a table cell: it
// puts a backslash before every character that could start emphasis, code,
// a link or HTML, or end a cell. An underscore inside a word
// (RACELAB_REDIS_URL) starts nothing and is left alone.
func escapeMarkdown(s string) string {
	var b strings.Builder
	rs := []rune(s)
	for i, r := range rs {
		switch r {
		case '\\', '`', '*', '[', ']', '<', '>', '|':
			b.WriteByte('\\')
		case '_':
			if i == 0 || i == len(rs)-1 || !wordRune(rs[i-1]) || !wordRune(rs[i+1]) {
				b.WriteByte('\\')
			}
		}
		b.WriteRune(r)
	}
	return b.String()
}

func wordRune(r rune) bool { return unicode.IsLetter(r) || unicode.IsDigit(r) }
