package report

import (
	"bytes"
	"fmt"
	"io"
	"strings"
	"unicode"

	"github.com/racelab/racelab/scenarios/results"
)

// renderMarkdown writes the report for a GitHub job summary or a handout:
// the scenario as a heading, its rule in italics, the scale of the run, a
// one-line outcome a CI reader can stop at, the summary table, the
// plain-words lines as a bullet list, and, for runs of several trials, the
// distribution of what was counted, folded away.
func renderMarkdown(w io.Writer, r *results.Result, o Options) error {
	s := summarize(r, o)
	var b bytes.Buffer
	b.WriteString("### " + escapeMarkdown(r.Scenario) + "\n\n")
	if r.Rule != "" {
		b.WriteString("*" + escapeMarkdown(r.Rule) + "*\n\n")
	}
	b.WriteString(s.scale + "\n\n")
	b.WriteString(outcome(r) + "\n\n")
	rows := make([][]string, len(s.rows))
	for i, r := range s.rows {
		rows[i] = make([]string, len(r))
		for j, c := range r {
			rows[i][j] = escapeMarkdown(c)
		}
	}
	if err := writeGrid(&b, s.cols, rows, true); err != nil {
		return err
	}
	if len(s.lines) > 0 {
		b.WriteByte('\n')
		for _, l := range s.lines {
			b.WriteString("- " + escapeMarkdown(l) + "\n")
		}
	}
	if err := writeDistributions(&b, r); err != nil {
		return err
	}
	_, err := w.Write(b.Bytes())
	return err
}

// outcome is the report's bottom line in bold: whether every target did
// what was expected of it, as the exit code says.
func outcome(r *results.Result) string {
	var failed, errored, inconclusive []string
	for _, f := range r.Shortfalls() {
		switch f.Kind {
		case results.RuleShortfall:
			failed = append(failed, f.Target)
		case results.ErrorShortfall:
			errored = append(errored, f.Target)
		default:
			inconclusive = append(inconclusive, f.Target)
		}
	}
	var parts []string
	if len(failed) > 0 {
		parts = append(parts, "**not as expected:** "+escapeMarkdown(strings.Join(failed, ", ")))
	}
	if len(errored) > 0 {
		parts = append(parts, "**could not run:** "+escapeMarkdown(strings.Join(errored, ", ")))
	}
	if len(inconclusive) > 0 {
		parts = append(parts, "**inconclusive:** "+escapeMarkdown(strings.Join(inconclusive, ", ")))
	}
	if r.Interrupted {
		parts = append(parts, "**interrupted:** partial results")
	}
	if len(parts) == 0 {
		return "**as expected:** every target did what was expected of it"
	}
	return strings.Join(parts, " · ")
}

// writeDistributions writes a folded markdown table of how often each
// count came up, per target, unless no target ran more than one trial.
func writeDistributions(b *bytes.Buffer, r *results.Result) error {
	if uncounted(r) {
		return nil
	}
	labels := results.Labels(r.Targets)
	var rows [][]string
	for i := range r.Targets {
		tr := &r.Targets[i]
		s := tr.Summary()
		if s.Trials < 2 {
			continue
		}
		var parts []string
		for _, x := range bars(s.Counted) {
			if x.n > 0 {
				parts = append(parts, fmt.Sprintf("%s: %d", barLabel(x), x.n))
			}
		}
		rows = append(rows, []string{escapeMarkdown(labels[i]), strings.Join(parts, " · ")})
	}
	if len(rows) == 0 {
		return nil
	}
	b.WriteString("\n<details><summary>Counted, trial by trial</summary>\n\n")
	if err := writeGrid(b, []column{{title: "TARGET"}, {title: "COUNTED: TRIALS"}}, rows, true); err != nil {
		return err
	}
	b.WriteString("\n</details>\n")
	return nil
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
