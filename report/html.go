package report

import (
	"bytes"
	"fmt"
	"html"
	"io"
	"math"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/racelab/racelab/scenarios/results"
)

// The HTML report: one self-contained page for a workshop screen or a CI
// artifact. Per scenario it shows the summary table and its lines, the
// distribution of what the store counted over the trials (an SVG
// histogram per target), and the timeline of one trial per target (an SVG
// lane per request from its invoke to its return, labelled with what it
// was told). Styles are inline, the figures are inline SVG, and there is
// no script: the page needs nothing from the network, and its Content
// Security Policy forbids fetching anything, so an asset added by mistake
// shows up as an error in the browser instead of a silent request.
//
// Every piece of text from the result goes through esc.

// maxLanes caps a timeline: past a few dozen lanes a burst is a texture,
// not a picture, and a page of 10,000 lanes helps nobody.
const maxLanes = 40

// maxBars caps a histogram; wider distributions are grouped into ranges.
const maxBars = 24

func esc(s string) string { return html.EscapeString(s) }

// pageStyle is the style of every racelab page, run and load reports
// alike: plain, printable, readable without colour.
const pageStyle = `<style>
body{font:15px/1.45 system-ui,-apple-system,"Segoe UI",sans-serif;color:#1f2328;margin:0;background:#fff}
main{max-width:1500px;margin:0 auto;padding:20px 28px 48px}
h1{font-size:20px;margin:0 0 4px}
h2{font-size:22px;margin:28px 0 2px;font-family:ui-monospace,SFMono-Regular,Menlo,monospace}
h3{font-size:16px;margin:22px 0 8px}
.rule{font-style:italic;margin:2px 0}
.scale,.note{color:#59636e;margin:2px 0 12px}
table{border-collapse:collapse;font-size:13px;margin:8px 0}
th,td{border:1px solid #d1d9e0;padding:4px 8px;text-align:left;vertical-align:top}
th,td.num{white-space:nowrap}
td.wrap{min-width:160px}
.scroll{overflow-x:auto}
th{background:#f6f8fa;font-weight:600}
td.num{text-align:right;font-variant-numeric:tabular-nums}
td.v-ok{background:#dafbe1}
td.v-expected{background:#fff8c5}
td.v-fail{background:#ffebe9;font-weight:700;color:#a40e26}
td.v-error{background:#eaeef2}
ul.lines{margin:8px 0;padding-left:20px}
.figs{display:flex;flex-wrap:wrap;gap:12px 28px}
figure{margin:0}
figcaption{font-size:13px;color:#59636e;max-width:960px}
svg text{font:11px ui-monospace,SFMono-Regular,Menlo,monospace;fill:#1f2328}
svg .muted{fill:#59636e}
</style>
`

// pageHead opens a racelab page up to its <main>: the doctype, a Content
// Security Policy that forbids fetching anything, the title and the style.
func pageHead(title string) string {
	return `<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta http-equiv="Content-Security-Policy" content="default-src 'none'; style-src 'unsafe-inline'">
<title>` + esc(title) + `</title>
` + pageStyle + `</head>
<body>
<main>
`
}

// renderHTML writes every result as sections of one page.
func renderHTML(w io.Writer, rs []*results.Result, o Options) error {
	var names []string
	for _, r := range rs {
		names = append(names, r.Scenario)
	}
	var b bytes.Buffer
	b.WriteString(pageHead("racelab: "+strings.Join(names, ", ")) + `<h1>racelab report</h1>
<p class="note">What N simultaneous requests were allowed, against what the store counted afterwards (result schema ` + esc(results.SchemaVersion) + `).</p>
`)
	for _, r := range rs {
		htmlSection(&b, r, o)
	}
	b.WriteString("</main>\n</body>\n</html>\n")
	_, err := w.Write(b.Bytes())
	return err
}

// htmlSection writes one scenario: heading, table, lines, figures.
func htmlSection(b *bytes.Buffer, r *results.Result, o Options) {
	s := summarize(r, o)
	fmt.Fprintf(b, "<section>\n<h2>%s</h2>\n", esc(r.Scenario))
	if r.Rule != "" {
		fmt.Fprintf(b, "<p class=\"rule\">%s</p>\n", esc(r.Rule))
	}
	fmt.Fprintf(b, "<p class=\"scale\">%s</p>\n", esc(s.scale))

	b.WriteString("<div class=\"scroll\"><table>\n<thead><tr>")
	for _, c := range s.cols {
		fmt.Fprintf(b, "<th>%s</th>", esc(c.label()))
	}
	b.WriteString("</tr></thead>\n<tbody>\n")
	v := s.verdictIndex()
	for i, row := range s.rows {
		b.WriteString("<tr>")
		for j, cell := range row {
			class := ""
			switch {
			case j == v:
				class = " class=\"v-" + verdictClass(&r.Targets[i]) + "\""
			case s.cols[j].numeric:
				class = " class=\"num\""
			case s.cols[j].title == guaranteeColumn.title:
				class = " class=\"wrap\"" // the one long text: let it wrap
			}
			fmt.Fprintf(b, "<td%s>%s</td>", class, esc(cell))
		}
		b.WriteString("</tr>\n")
	}
	b.WriteString("</tbody>\n</table></div>\n")
	if len(s.lines) > 0 {
		b.WriteString("<ul class=\"lines\">\n")
		for _, l := range s.lines {
			fmt.Fprintf(b, "<li>%s</li>\n", esc(l))
		}
		b.WriteString("</ul>\n")
	}

	labels := results.Labels(r.Targets)
	var ran []int
	for i := range r.Targets {
		if len(r.Targets[i].Trials) > 0 {
			ran = append(ran, i)
		}
	}
	if len(ran) == 0 {
		b.WriteString("</section>\n")
		return
	}
	// The timeline first: it is the picture of the race itself.
	b.WriteString("<h3>One trial, request by request</h3>\n")
	b.WriteString("<p class=\"note\">Each lane is one request, from the instant it was sent to the instant it was answered, " +
		"on one time axis from the release of the burst, lanes in finishing order. " + svgLegend)
	traced := slices.ContainsFunc(ran, func(i int) bool {
		return slices.ContainsFunc(timelineTrial(&r.Targets[i]).Requests, func(q results.Request) bool { return len(q.Steps) > 0 })
	})
	if !traced {
		// Without steps the lanes hold only their answers: say how to get
		// the rest.
		b.WriteString(o.say(" These lanes carry no steps: racelab run {Timeline} records each request's reads, writes and erasures on the stores that trace them (kv, actor)."))
	}
	b.WriteString("</p>\n<div class=\"figs\">\n")
	for _, i := range ran {
		timeline(b, r, &r.Targets[i], labels[i])
	}
	if uncounted(r) { // a race file that counts nothing
		b.WriteString("</div>\n</section>\n")
		return
	}
	b.WriteString("</div>\n<h3>What the store counted, trial by trial</h3>\n")
	if !slices.ContainsFunc(ran, func(i int) bool { s := r.Targets[i].Summary(); return s.Trials > 1 }) {
		// One bar per target says nothing the table does not.
		b.WriteString(o.say("<p class=\"note\">One trial per target: run with {Trials} to see how the count varies from burst to burst.</p>\n</section>\n"))
		return
	}
	b.WriteString("<div class=\"figs\">\n")
	for _, i := range ran {
		histogram(b, &r.Targets[i], labels[i])
	}
	b.WriteString("</div>\n</section>\n")
}

// verdictClass colours a verdict: ok (held as expected), expected (broke as
// expected), fail (fails the run), error (could not run), none.
func verdictClass(tr *results.TargetResult) string {
	switch {
	case tr.Error != "":
		return "error"
	case len(tr.Trials) == 0:
		return "none"
	case tr.Failed():
		return "fail"
	case tr.Inconclusive():
		return "error" // no verdict: like a target that could not be run
	case tr.Broken() > 0:
		return "expected"
	default:
		return "ok"
	}
}

// bar is one bar of a histogram: the counted values lo..hi, in n trials.
type bar struct {
	lo, hi int64
	n      int
}

// bars groups the trials' counted values into at most maxBars bars of
// equal width.
func bars(counts map[int64]int) []bar {
	values := make([]int64, 0, len(counts))
	for v := range counts {
		values = append(values, v)
	}
	slices.Sort(values)
	lo, hi := values[0], values[len(values)-1]
	// The span is worked out in uint64, where hi-lo cannot overflow even
	// for counts a broken service made up at both ends of int64.
	span := uint64(hi) - uint64(lo) // hi ≥ lo: exact in two's complement
	width := span/maxBars + 1       // at most maxBars bars cover the span
	if span < maxBars {
		width = 1
	}
	nbars := span/width + 1
	out := make([]bar, nbars)
	for i := range out {
		from := uint64(lo) + uint64(i)*width
		out[i] = bar{lo: int64(from), hi: int64(from + min(width-1, span-uint64(i)*width))}
	}
	for v, n := range counts {
		out[(uint64(v)-uint64(lo))/width].n += n
	}
	return out
}

// histogram draws how often each counted value came up over the trials.
func histogram(b *bytes.Buffer, tr *results.TargetResult, label string) {
	const w, h, left, bottom, top = 380, 170, 34, 34, 16
	s := tr.Summary()
	bs := bars(s.Counted)
	most := 0
	for _, x := range bs {
		most = max(most, x.n)
	}
	plotW, plotH := float64(w-left-8), float64(h-top-bottom)
	slot := min(plotW/float64(len(bs)), 64) // one lone bar is a bar, not a wall
	offset := (plotW - slot*float64(len(bs))) / 2
	fmt.Fprintf(b, "<figure>\n<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"%d\" height=\"%d\" viewBox=\"0 0 %d %d\" role=\"img\" aria-label=\"%s\">\n",
		w, h, w, h, esc("distribution of counted for "+label))
	fmt.Fprintf(b, "<line x1=\"%d\" y1=\"%d\" x2=\"%d\" y2=\"%d\" stroke=\"#8c959f\"/>\n", left, h-bottom, w-8, h-bottom)
	fmt.Fprintf(b, "<text x=\"%d\" y=\"%d\" text-anchor=\"end\" class=\"muted\">%d</text>\n", left-4, top+4, most)
	fmt.Fprintf(b, "<text x=\"%d\" y=\"%d\" text-anchor=\"end\" class=\"muted\">0</text>\n", left-4, h-bottom)
	for i, x := range bs {
		bh := plotH * float64(x.n) / float64(max(most, 1))
		bx := float64(left) + offset + float64(i)*slot + slot*0.12
		fmt.Fprintf(b, "<rect x=\"%s\" y=\"%s\" width=\"%s\" height=\"%s\" fill=\"%s\"><title>%s</title></rect>\n",
			f1(bx), f1(float64(h-bottom)-bh), f1(slot*0.76), f1(bh), "#0969da", esc(barTitle(x)))
		if x.n > 0 && len(bs) <= 12 {
			fmt.Fprintf(b, "<text x=\"%s\" y=\"%s\" text-anchor=\"middle\">%d</text>\n", f1(bx+slot*0.38), f1(float64(h-bottom)-bh-3), x.n)
		}
		if len(bs) <= 12 || i == 0 || i == len(bs)-1 {
			fmt.Fprintf(b, "<text x=\"%s\" y=\"%d\" text-anchor=\"middle\">%s</text>\n", f1(bx+slot*0.38), h-bottom+14, esc(barLabel(x)))
		}
	}
	fmt.Fprintf(b, "<text x=\"%d\" y=\"%d\" text-anchor=\"middle\" class=\"muted\">counted</text>\n", left+int(plotW)/2, h-4)
	b.WriteString("</svg>\n")
	fmt.Fprintf(b, "<figcaption><b>%s</b>: counted after each of %s (allowed: %s); bar height is the number of trials</figcaption>\n</figure>\n",
		esc(label), esc(results.Plural(int64(s.Trials), "trial")), esc(spanOf(s.Allowed)))
}

func barLabel(x bar) string {
	if x.lo == x.hi {
		return strconv.FormatInt(x.lo, 10)
	}
	return fmt.Sprintf("%d-%d", x.lo, x.hi)
}

func barTitle(x bar) string {
	return fmt.Sprintf("counted %s: %s", barLabel(x), results.Plural(int64(x.n), "trial"))
}

// timelineTrial is the trial of a target worth drawing: its first broken
// one, else its first.
func timelineTrial(tr *results.TargetResult) *results.Trial {
	for i := range tr.Trials {
		if tr.Trials[i].Broken {
			return &tr.Trials[i]
		}
	}
	return &tr.Trials[0]
}

// timeline draws one trial of a target: a lane per request, with the
// text timeline's marks, on the trial's time axis.
func timeline(b *bytes.Buffer, r *results.Result, tr *results.TargetResult, label string) {
	t := timelineTrial(tr)
	b.WriteString("<figure>\n")
	drawn := svgTimeline(b, fmt.Sprintf("timeline of trial %d on %s", t.Index+1, label), tr.Clock, t,
		func(q *results.Request) string { return q.AnswerWords() }, maxLanes, 0)
	caption := fmt.Sprintf("trial %d (key %s): %s; the store counted %d afterwards", t.Index+1, t.Key, trialState(t), t.Counted)
	if len(t.Requests) > drawn {
		caption += fmt.Sprintf("; the first %d of %d requests to finish are drawn", drawn, len(t.Requests))
	}
	if t.History != "" {
		caption += "; history " + string(t.History)
		if t.HistoryWhy != "" && t.HistoryWhy != strings.TrimPrefix(t.Why, label+": not linearizable: ") {
			caption += ": " + t.HistoryWhy
		}
	}
	fmt.Fprintf(b, "<figcaption><b>%s</b>, %s</figcaption>\n</figure>\n", esc(label), esc(caption))
}

// trialState says how a trial went: "held", or why it broke.
func trialState(t *results.Trial) string {
	switch {
	case !t.Broken:
		return "held"
	case t.Why != "":
		return "broken: " + t.Why
	default:
		return "broken"
	}
}

// niceStep rounds a tick step up to 1, 2 or 5 times a power of ten
// nanoseconds, so that ticks read 0, 500µs, 1ms rather than 0, 663µs.
func niceStep(raw time.Duration) time.Duration {
	step := time.Duration(1)
	for step <= raw/10 { // not step*10 <= raw, which overflows near the top
		step *= 10
	}
	for _, m := range []time.Duration{1, 2, 5} {
		if step*m >= raw {
			return step * m
		}
	}
	if step > math.MaxInt64/10 {
		return step * 5 // a step of ten would overflow; five covers raw/4 ends
	}
	return step * 10
}

// f1 writes a coordinate with one decimal, enough for a screen and the
// same on every machine.
func f1(v float64) string { return strconv.FormatFloat(v, 'f', 1, 64) }
