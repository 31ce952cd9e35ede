package report

import (
	"bytes"
	"fmt"
	"math"
	"strings"
	"time"

	"github.com/racelab/racelab/scenarios/results"
)

// The SVG timeline: the text timeline's lanes (Timeline) drawn on one time
// axis shared by every lane of a trial, so that who read before whose write
// landed is a matter of looking down a column. Both the run report's page
// and explain's page draw their trials with svgTimeline; the marks are the
// text's: read, write, lands, the answer (or refusal), and a red line from
// a write that erased another request's update to the update it erased.
// Each mark carries a <title> with its instant and words, so a browser
// shows them on hover without a script, and a class (m-read, m-write,
// m-lands, m-answer, m-refused, m-failed, m-step, m-erased) naming it.

// svgLaneText is the width of one character of an SVG label (11px
// monospace), used to size the figure to its longest lane label.
const svgLaneText = 6.7

// svgTimeline draws trial: one lane per request, in finishing order (as the
// text timeline), numbered from 1, at most limit lanes (0: all). answer
// words a request's answer. The axis runs to axis, or to the trial's own
// end when that is later: figures meant to be compared (a race and its
// fix) are drawn on one scale. It returns how many lanes it drew.
func svgTimeline(b *bytes.Buffer, aria string, clock results.Clock, trial *results.Trial, answer func(*results.Request) string, limit int, axis time.Duration) int {
	lanes := byTime(trial)
	if limit > 0 && len(lanes) > limit {
		lanes = lanes[:limit]
	}
	erased := Erasures(trial)
	// The axis runs to the trial's last instant, whichever lanes are drawn:
	// it is the trial's axis, not the picture's.
	end := max(trialEnd(trial), axis, time.Nanosecond)
	labels := make([]string, len(lanes))
	longest := 0
	for i, q := range lanes {
		labels[i] = laneWords(q, answer(q), erased)
		longest = max(longest, narrow.String(labels[i]))
	}
	const left, plotW, top, lane, gap = 48, 560, 30, 16, 6
	labelW := max(150, int(math.Ceil(float64(longest)*svgLaneText))+16)
	w := left + plotW + 10 + labelW
	h := top + len(lanes)*(lane+gap) + 24
	x := func(d time.Duration) float64 { return float64(left) + plotW*float64(max(d, 0))/float64(end) }
	rowOf := map[int]int{}
	for i, q := range lanes {
		rowOf[q.Index] = i
	}
	mid := func(row int) int { return top + row*(lane+gap) + lane/2 }

	fmt.Fprintf(b, "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"%d\" height=\"%d\" viewBox=\"0 0 %d %d\" role=\"img\" aria-label=\"%s\">\n",
		w, h, w, h, esc(aria))
	// The shared axis: the release at 0, ticks at round steps, gridlines
	// down through every lane.
	axisY := h - 18
	step := niceStep(end / 4)
	for d := time.Duration(0); d <= end; d += step {
		fmt.Fprintf(b, "<line x1=\"%s\" y1=\"%d\" x2=\"%s\" y2=\"%d\" stroke=\"#eaeef2\"/>\n", f1(x(d)), top-6, f1(x(d)), axisY)
		fmt.Fprintf(b, "<text x=\"%s\" y=\"%d\" text-anchor=\"middle\" class=\"muted\">%s</text>\n", f1(x(d)), axisY+13, esc(formatDuration(d)))
		if end-d < step {
			break // the next tick is past the end, or past what a Duration holds
		}
	}
	unit := "real time"
	if clock == results.ClockVirtual {
		unit = "virtual time"
	}
	fmt.Fprintf(b, "<line x1=\"%s\" y1=\"%d\" x2=\"%s\" y2=\"%d\" stroke=\"#1f2328\" stroke-dasharray=\"3 3\"/>\n", f1(x(0)), top-14, f1(x(0)), axisY)
	fmt.Fprintf(b, "<text x=\"%s\" y=\"%d\" class=\"muted\">release</text>\n", f1(x(0)+4), top-16)
	fmt.Fprintf(b, "<text x=\"%d\" y=\"%d\" text-anchor=\"end\" class=\"muted\">%s from the release</text>\n", left+plotW, top-16, unit)

	for i, q := range lanes {
		y := top + i*(lane+gap)
		// The lane's colour and its answer's mark, by what it was told.
		colour, class := "#0969da", "m-answer"
		switch q.Outcome {
		case results.Refused:
			colour, class = "#8c959f", "m-refused"
		case results.Errored:
			colour, class = "#cf222e", "m-failed"
		}
		x0, x1 := x(q.Invoke), x(q.Return)
		fmt.Fprintf(b, "<text x=\"%d\" y=\"%d\" text-anchor=\"end\" class=\"muted\">#%d</text>\n", left-6, y+lane-4, q.Index+1)
		fmt.Fprintf(b, "<rect x=\"%s\" y=\"%d\" width=\"%s\" height=\"%d\" rx=\"2\" fill=\"%s\" fill-opacity=\"0.16\" stroke=\"%s\"><title>%s</title></rect>\n",
			f1(x0), y+2, f1(max(x1-x0, 2)), lane-4, colour, colour,
			esc(fmt.Sprintf("request %d: sent at %s, answered at %s: %s", q.Index+1, formatInstant(q.Invoke), formatInstant(q.Return), answer(q))))
		cy := y + lane/2
		for _, s := range q.Steps {
			svgMark(b, s, x(s.At), cy)
		}
		// The answer: an arrowhead where the request was answered.
		ax := x(q.Return)
		fmt.Fprintf(b, "<path class=\"%s\" d=\"M%s %dl6 5l-6 5z\" fill=\"%s\"><title>%s</title></path>\n",
			class, f1(ax), cy-5, colour, esc(fmt.Sprintf("%s at %s", answerText(q), formatInstant(q.Return))))
		label := labels[i]
		if p, ok := erased[q.Index]; ok {
			// The erasure is drawn from this lane's landing up (or down) to
			// the landing of the update it erased, when that lane is drawn.
			if row, drawn := rowOf[p]; drawn {
				fmt.Fprintf(b, "<line class=\"m-erased\" x1=\"%s\" y1=\"%d\" x2=\"%s\" y2=\"%d\" stroke=\"#cf222e\" stroke-width=\"1.5\" stroke-dasharray=\"4 2\"><title>%s</title></line>\n",
					f1(x(landing(q))), cy, f1(x(landing(&trial.Requests[p]))), mid(row), esc(fmt.Sprintf("#%d %s", q.Index+1, strings.TrimPrefix(erasedText(p), "✗ "))))
			}
			text, mark, _ := strings.Cut(label, " ✗ ")
			fmt.Fprintf(b, "<text x=\"%d\" y=\"%d\">%s <tspan class=\"m-erased\" fill=\"#cf222e\" font-weight=\"bold\">✗ %s</tspan></text>\n",
				left+plotW+10, y+lane-4, esc(text), esc(mark))
			continue
		}
		fmt.Fprintf(b, "<text x=\"%d\" y=\"%d\">%s</text>\n", left+plotW+10, y+lane-4, esc(label))
	}
	b.WriteString("</svg>\n")
	return len(lanes)
}

// svgMark draws one step of a lane at (x, y): a read is a ring (around the write, when both come at one instant), a
// write a filled diamond, a landing a bar across the lane, a refusal a
// cross, anything else (a checkout, an expiry) a small grey dot.
func svgMark(b *bytes.Buffer, s results.Step, x float64, y int) {
	title := esc(stepText(s))
	switch s.Op {
	case "read":
		fmt.Fprintf(b, "<circle class=\"m-read\" cx=\"%s\" cy=\"%d\" r=\"5\" fill=\"none\" stroke=\"#0969da\" stroke-width=\"1.5\"><title>%s</title></circle>\n", f1(x), y, title)
	case "write":
		fmt.Fprintf(b, "<path class=\"m-write\" d=\"M%s %dl4 4l-4 4l-4-4z\" fill=\"#0969da\"><title>%s</title></path>\n", f1(x), y-4, title)
	case "write-lands":
		fmt.Fprintf(b, "<line class=\"m-lands\" x1=\"%s\" y1=\"%d\" x2=\"%s\" y2=\"%d\" stroke=\"#1f2328\" stroke-width=\"2.5\"><title>%s</title></line>\n", f1(x), y-8, f1(x), y+8, title)
	case "refuse":
		fmt.Fprintf(b, "<path class=\"m-refused\" d=\"M%s %dl7 7m0-7l-7 7\" stroke=\"#59636e\" stroke-width=\"2\"><title>%s</title></path>\n", f1(x-3.5), y-4, title)
	default:
		fmt.Fprintf(b, "<circle class=\"m-step\" cx=\"%s\" cy=\"%d\" r=\"2.5\" fill=\"#59636e\"><title>%s</title></circle>\n", f1(x), y, title)
	}
}

// laneWords is a lane's label: the text timeline's parts without their
// instants, which the axis gives.
func laneWords(q *results.Request, answer string, erased map[int]int) string {
	var parts []string
	for _, s := range q.Steps {
		parts = append(parts, stepWords(s))
	}
	out := strings.Join(parts, " · ")
	if out != "" {
		out += " "
	}
	out += "→ " + answer
	if p, ok := erased[q.Index]; ok {
		out += " " + erasedText(p)
	}
	return out
}

// landing is when a request's write took effect: its last write-lands step,
// else its last write, else its answer.
func landing(q *results.Request) time.Duration {
	at, landed := q.Return, false
	for _, s := range q.Steps {
		switch {
		case s.Op == "write-lands":
			at, landed = s.At, true
		case s.Op == "write" && !landed:
			at = s.At
		}
	}
	return at
}

// erasedText names the request whose update a write erased (p counts from
// 0).
func erasedText(p int) string { return fmt.Sprintf("✗ erased #%d's update", p+1) }

// svgLegend says what svgTimeline's marks mean, for the page around it.
const svgLegend = "Marks: ○ read (the value it read), ◆ write (the value it wrote), | its write lands, " +
	"▸ answered (grey: refused), and a red dashed line with “✗ erased #k” where a write overwrote request k's update " +
	"without having read it. Hover a mark for its instant."

// trialEnd is the trial's last instant: its last answer or step.
func trialEnd(trial *results.Trial) time.Duration {
	var end time.Duration
	for _, q := range trial.Requests {
		end = max(end, q.Return)
		for _, s := range q.Steps {
			end = max(end, s.At)
		}
	}
	return end
}
