package classroom

import (
	"cmp"
	"fmt"
	"html"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/racelab/racelab/report"
	"github.com/racelab/racelab/scenarios/engine"
	"github.com/racelab/racelab/scenarios/results"
)

// Geometry of the lanes, in SVG units: wide and tall enough to read from
// the back of a room once the page scales it to the screen.
const (
	lanesWidth = 1200
	laneLeft   = 64  // room for "#10"
	laneRight  = 330 // room for the answer and whose update it erased
	laneTop    = 46  // room for the time axis
	laneHeight = 58
	// maxLanes caps a picture: past a few dozen lanes a burst is a
	// texture, not something a class can follow.
	maxLanes = 30
)

// lanes is a trial drawn as one lane per request on one time axis, and
// what each of its numbered steps was, in words: every element that
// appears at a step carries data-step="k" (from 1), so that the replay
// view reveals a trial one step at a time by hiding the later ones.
type lanes struct {
	svg   string
	steps []string
}

// event is one thing that happened to one request: it was sent, made a
// store operation, or was answered.
type event struct {
	at   time.Duration
	lane int
	seq  int // order within its request
	kind string
	step results.Step
}

// drawLanes draws trial t of sc on target label: for each request, when
// it was sent, what it read and wrote and when its write landed (stores
// that record their operations: kv, actor), when and what it was answered,
// and, for a write that overwrote an update it never saw, whose update it
// erased (report.Erasures, as the terminal timeline says it).
func drawLanes(sc *engine.Scenario, t *results.Trial, label string, clock results.Clock) lanes {
	reqs := t.Requests[:min(len(t.Requests), maxLanes)]
	erased := report.Erasures(t)
	var evs []event
	for i, q := range reqs {
		at := max(q.Invoke, 0)
		evs = append(evs, event{at: at, lane: i, kind: "sent"})
		for k, s := range q.Steps {
			at = max(at, s.At) // a request's own steps never run backwards on the page
			evs = append(evs, event{at: at, lane: i, seq: k + 1, kind: "step", step: s})
		}
		evs = append(evs, event{at: max(at, q.Return), lane: i, seq: len(q.Steps) + 1, kind: "answer"})
	}
	slices.SortStableFunc(evs, func(a, b event) int {
		return cmp.Or(cmp.Compare(a.at, b.at), cmp.Compare(a.lane, b.lane), cmp.Compare(a.seq, b.seq))
	})
	end := time.Duration(1)
	for _, e := range evs {
		end = max(end, e.at)
	}
	plotW := float64(lanesWidth - laneLeft - laneRight)
	x := func(d time.Duration) float64 { return float64(laneLeft) + plotW*float64(max(d, 0))/float64(end) }
	h := laneTop + len(reqs)*laneHeight + 16
	if len(t.Requests) > len(reqs) {
		h += 30
	}
	unit := "real time"
	if clock == results.ClockVirtual {
		unit = "virtual time"
	}
	var b strings.Builder
	fmt.Fprintf(&b, `<svg xmlns="http://www.w3.org/2000/svg" class="lanes" viewBox="0 0 %d %d" role="img" aria-label="%s">`+"\n",
		lanesWidth, h, esc(fmt.Sprintf("%s: one lane per %s, %s from the release", label, laneOf(t), unit)))
	// The time axis, with gridlines down through the lanes.
	bottom := laneTop + len(reqs)*laneHeight
	step := niceStep(end / 4)
	for d := time.Duration(0); d <= end; d += step {
		fmt.Fprintf(&b, `<line class="grid" x1="%s" y1="%d" x2="%s" y2="%d"/>`+"\n", f1(x(d)), laneTop-8, f1(x(d)), bottom)
		fmt.Fprintf(&b, `<text class="tick" x="%s" y="%d" text-anchor="middle">%s</text>`+"\n", f1(x(d)), laneTop-16, esc(formatDuration(d)))
		if end-d < step {
			break
		}
	}
	fmt.Fprintf(&b, `<text class="tick" x="%d" y="%d" text-anchor="start">%s →</text>`+"\n", lanesWidth-laneRight+12, laneTop-16, esc(unit))
	for i, q := range reqs {
		mid := laneTop + i*laneHeight + laneHeight/2
		fmt.Fprintf(&b, `<text class="lane-no" x="%d" y="%d" text-anchor="end">#%d</text>`+"\n", laneLeft-12, mid+6, q.Index+1)
		fmt.Fprintf(&b, `<line class="lane" x1="%d" y1="%d" x2="%d" y2="%d"/>`+"\n", laneLeft, mid, lanesWidth-laneRight, mid)
	}
	// Bars go first, under every mark: a request's bar spans from its
	// sending to its answer, and its reads and writes sit on it.
	var marks strings.Builder
	var steps []string
	// say adds a caption to step n: a step is what happened at one
	// instant to one request (its read and write, its landing and its
	// answer), or every request sent at one instant, so that ten requests
	// are about twenty steps, not fifty.
	say := func(n int, caption string) {
		if n > len(steps) {
			steps = append(steps, caption)
		} else {
			steps[n-1] += "; " + caption
		}
	}
	n := 0
	for k, e := range evs {
		if k == 0 || e.at != evs[k-1].at || e.lane != evs[k-1].lane && (e.kind != "sent" || evs[k-1].kind != "sent") {
			n++
		}
		q := &reqs[e.lane]
		mid := laneTop + e.lane*laneHeight + laneHeight/2
		ex := f1(x(e.at))
		who := fmt.Sprintf("#%d", q.Index+1)
		at := formatDuration(e.at)
		switch e.kind {
		case "sent":
			fmt.Fprintf(&marks, `<g data-step="%d" class="sent"><line x1="%s" y1="%d" x2="%s" y2="%d"/></g>`+"\n", n, ex, mid-12, ex, mid+12)
			say(n, fmt.Sprintf("%s: %s is sent", at, who))
		case "answer":
			answer := answerWords(t, q)
			text := answer
			caption := fmt.Sprintf("%s: %s is answered: %s", at, who, answer)
			if p, ok := erased[q.Index]; ok {
				text += fmt.Sprintf(" ✗ erased #%d", p+1)
				caption += fmt.Sprintf("; its write erased #%d's update", p+1)
			}
			x0 := x(max(q.Invoke, 0))
			fmt.Fprintf(&b, `<g data-step="%d" class="answer %s"><rect x="%s" y="%d" width="%s" height="12" rx="3"/></g>`+"\n",
				n, outcomeClass(q.Outcome), f1(x0), mid-6, f1(max(x(e.at)-x0, 3)))
			fmt.Fprintf(&marks, `<g data-step="%d" class="answer %s"><text x="%s" y="%d">%s</text></g>`+"\n",
				n, outcomeClass(q.Outcome), f1(x(e.at)+10), mid+6, esc(text))
			say(n, caption)
		default:
			drawStep(&marks, n, ex, mid, e.step)
			say(n, fmt.Sprintf("%s: %s %s", at, who, stepWords(e.step)))
		}
	}
	b.WriteString(marks.String())
	if len(t.Requests) > len(reqs) {
		fmt.Fprintf(&b, `<text class="tick" x="%d" y="%d">the first %d of %d requests are drawn</text>`+"\n", laneLeft, bottom+30, len(reqs), len(t.Requests))
	}
	b.WriteString("</svg>\n")
	return lanes{svg: b.String(), steps: steps}
}

// drawStep draws one store operation on its lane: a read as a circle with
// its value above, a write as a square with its value below, a landing
// write as a mark pointing down onto the lane. Shape and words both say
// which is which, so nothing rests on colour.
func drawStep(b *strings.Builder, n int, x string, mid int, s results.Step) {
	v := esc(report.CompactValue(s.Value))
	switch s.Op {
	case "read":
		fmt.Fprintf(b, `<g data-step="%d" class="read"><circle cx="%s" cy="%d" r="7"/><text x="%s" y="%d" text-anchor="middle">read %s</text><title>%s</title></g>`+"\n",
			n, x, mid, x, mid-12, v, esc(stepWords(s)))
	case "write":
		fmt.Fprintf(b, `<g data-step="%d" class="write"><rect x="%s" y="%d" width="12" height="12" transform="translate(-6 0)"/><text x="%s" y="%d" text-anchor="middle">write %s</text><title>%s</title></g>`+"\n",
			n, x, mid-6, x, mid+23, v, esc(stepWords(s)))
	case "write-lands":
		fmt.Fprintf(b, `<g data-step="%d" class="lands"><path d="M0 0 L12 0 L6 10 Z" transform="translate(%s %d) translate(-6 0)"/><title>%s</title></g>`+"\n",
			n, x, mid-17, esc(stepWords(s)))
	default:
		label := s.Op
		if (s.Op == "aborted" || s.Op == "error") && s.Note != "" {
			label += " " + s.Note // a SQL transaction's end: the database's code is the lesson (40001)
		}
		fmt.Fprintf(b, `<g data-step="%d" class="other"><path d="M0 -6 L6 0 L0 6 L-6 0 Z" transform="translate(%s %d)"/><text x="%s" y="%d" text-anchor="middle">%s</text><title>%s</title></g>`+"\n",
			n, x, mid, x, mid-13, esc(label), esc(stepWords(s)))
	}
}

// stepWords says a store operation in a sentence's words, for the replay's
// caption: "reads 41 (cache hit, 12s old)".
func stepWords(s results.Step) string {
	v := report.CompactValue(s.Value)
	var out string
	switch s.Op {
	case "read":
		out = "reads " + v
	case "write":
		out = "writes " + v
	case "write-lands":
		out = "has its write land"
		if s.Value != "" {
			out += ": " + v
		}
	case "refuse":
		out = "is refused"
	default:
		out = s.Op
		if s.Value != "" {
			out += " " + v
		}
	}
	if s.Key != "" && s.Op != "write-lands" {
		out += " at " + s.Key
	}
	if s.Note != "" {
		out += " (" + s.Note + ")"
	}
	return out
}

func outcomeClass(o results.Outcome) string {
	switch o {
	case results.Allowed:
		return "allowed"
	case results.Refused:
		return "refused"
	default:
		return "failed"
	}
}

// formatDuration writes an instant after the release in the unit a room
// reads best at its size.
func formatDuration(d time.Duration) string {
	switch {
	case d <= 0:
		return "0"
	case d < time.Millisecond:
		return fmt.Sprintf("%dµs", d.Microseconds())
	case d < time.Second:
		return strconv.FormatFloat(float64(d)/float64(time.Millisecond), 'f', 1, 64) + " ms"
	case d < time.Minute:
		return strconv.FormatFloat(d.Seconds(), 'f', 2, 64) + " s"
	case d < time.Hour:
		return fmt.Sprintf("%dm%02ds", int(d.Minutes()), int(d.Seconds())%60)
	default:
		return fmt.Sprintf("%dh%02dm", int(d.Hours()), int(d.Minutes())%60)
	}
}

// niceStep rounds a tick step up to 1, 2 or 5 times a power of ten
// nanoseconds, so that ticks read 0, 5 ms, 10 ms.
func niceStep(raw time.Duration) time.Duration {
	for step := time.Duration(1); ; step *= 10 {
		for _, m := range []time.Duration{1, 2, 5} {
			if step*m >= raw {
				return step * m
			}
		}
		if step > time.Duration(1)<<58 {
			return raw // no round step is wider; the axis has two ticks
		}
	}
}

func esc(s string) string { return html.EscapeString(s) }

func f1(v float64) string { return strconv.FormatFloat(v, 'f', 1, 64) }
