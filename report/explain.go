package report

import (
	"fmt"
	"io"
	"strings"

	"github.com/racelab/racelab/scenarios/engine"
)

// explainWidth is the width of explain's text: a handout's, whatever the
// terminal, so that every screen in a room shows the same lines.
const explainWidth = 78

// Explain writes e for a terminal or a handout: plain text, lines wrapped
// at 78 columns, the timeline lanes folding under themselves.
func Explain(w io.Writer, e engine.Explanation) error {
	steps, err := ExplainSteps(e)
	if err != nil {
		return err
	}
	_, err = io.WriteString(w, strings.Join(steps, ""))
	return err
}

// ExplainSteps is Explain's text cut into the steps a workshop shows one
// at a time: the story and its rule, each replay a request at a time
// (the heading with the first lane, then each next lane, the last with
// the outcome), how the fix works, and
// the story's ending if it has one (with the footer). Joined, they are
// Explain's text.
func ExplainSteps(e engine.Explanation) ([]string, error) {
	var steps []string
	var b strings.Builder
	sc := e.Story
	b.WriteString(wrapLine(sc.Name+": "+sc.Title, explainWidth) + "\n\n")
	b.WriteString(wrap(sc.Story, explainWidth, "  "))
	b.WriteString("\n")
	b.WriteString(wrap("Hard rule: "+sc.Rule+".", explainWidth, ""))
	steps = append(steps, b.String())
	for i, r := range e.Replays {
		b.Reset()
		b.WriteString("\n" + wrapLine(fmt.Sprintf("%d. %s", i+1, r.Heading), explainWidth) + "\n\n")
		var lanes strings.Builder
		if err := Timeline(&lanes, r.Target, r.Clock, r.Trial, explainWidth); err != nil {
			return nil, err
		}
		// A replay is shown a request at a time, in the order they
		// finished: each lane (with the lines it folds onto) is a step of
		// its own, so a class sees each erasure as it happens.
		for j, lane := range laneSteps(lanes.String()) {
			if j > 0 {
				steps = append(steps, b.String())
				b.Reset()
			}
			b.WriteString(lane)
		}
		b.WriteString("\n")
		b.WriteString(wrap(r.Outcome, explainWidth, ""))
		steps = append(steps, b.String())
	}
	b.Reset()
	fmt.Fprintf(&b, "\n%d. How the fix works\n\n", len(e.Replays)+1)
	b.WriteString(wrap(sc.Fix, explainWidth, "  "))
	if end := e.Ending; end != nil {
		steps = append(steps, b.String())
		b.Reset()
		fmt.Fprintf(&b, "\n%d. %s\n\n", len(e.Replays)+2, end.Heading)
		for _, it := range end.Items {
			b.WriteString(hanging(fmt.Sprintf("- %s: %s. %s", it.Part, it.Mark, it.Why), explainWidth, "  ", "    "))
		}
		if end.Closing != "" {
			b.WriteString("\n" + wrap(end.Closing, explainWidth, "  "))
		}
	}
	if e.Footer != "" {
		b.WriteString("\n" + wrapLine(e.Footer, explainWidth) + "\n")
	}
	return append(steps, b.String()), nil
}

// laneSteps cuts a timeline's text before each lane after the first: a
// lane starts "  #" and goes on over the deeper-indented lines under it.
// Joined, the pieces are the text.
func laneSteps(text string) []string {
	var out []string
	start, first := 0, true
	for i := 0; i < len(text); {
		end := strings.IndexByte(text[i:], '\n')
		if end < 0 {
			break
		}
		if strings.HasPrefix(text[i:], "  #") {
			if !first {
				out = append(out, text[start:i])
				start = i
			}
			first = false
		}
		i += end + 1
	}
	return append(out, text[start:])
}

// hanging wraps text as wrap does, its first line indented by first and
// the rest by rest: a list item.
func hanging(text string, width int, first, rest string) string {
	lines := strings.Split(strings.TrimSuffix(wrap(text, width-len(rest)+len(first), first), "\n"), "\n")
	for i := 1; i < len(lines); i++ {
		lines[i] = rest + strings.TrimSpace(lines[i])
	}
	return strings.Join(lines, "\n") + "\n"
}

// wrap breaks text into lines of at most width columns, each starting
// with indent, and ends it with a newline.
func wrap(text string, width int, indent string) string {
	var b strings.Builder
	line := indent
	for _, word := range strings.Fields(text) {
		if len([]rune(line))+1+len([]rune(word)) > width && strings.TrimSpace(line) != "" {
			b.WriteString(strings.TrimRight(line, " ") + "\n")
			line = indent
		}
		if strings.TrimSpace(line) != "" {
			line += " "
		}
		line += word
	}
	if strings.TrimSpace(line) != "" {
		b.WriteString(line + "\n")
	}
	return b.String()
}
