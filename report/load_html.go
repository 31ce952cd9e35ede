package report

import (
	"bytes"
	"fmt"
	"strings"
	"time"

	"github.com/racelab/racelab/scenarios/results"
)

// renderLoadHTML writes load results as one self-contained page: the two
// tables, the lines, and per target three pictures drawn as inline SVG
// (no script, no external file): answers and errors per second, p50 and
// p99 latency per second on one time axis, and the latency histogram.
func renderLoadHTML(b *bytes.Buffer, rs []*results.LoadResult) error {
	var names []string
	for _, r := range rs {
		names = append(names, r.Scenario)
	}
	b.WriteString(`<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta http-equiv="Content-Security-Policy" content="default-src 'none'; style-src 'unsafe-inline'">
<title>racelab load: ` + esc(strings.Join(names, ", ")) + `</title>
` + pageStyle + `</head>
<body>
<main>
<h1>racelab load report</h1>
<p class="note">Throughput and latency under sustained load, and the story's rule judged on every key read back afterwards (result schema ` + esc(results.LoadSchemaVersion) + `).</p>
`)
	for _, r := range rs {
		s := summarizeLoad(r)
		fmt.Fprintf(b, "<section>\n<h2>%s under load</h2>\n<p class=\"rule\">%s</p>\n<p class=\"scale\">%s</p>\n", esc(r.Scenario), esc(r.Rule), esc(s.scale))
		htmlGrid(b, speedColumns, s.speed)
		htmlGrid(b, ruleColumns, s.rule)
		if len(s.lines) > 0 {
			b.WriteString("<ul class=\"lines\">\n")
			for _, l := range s.lines {
				fmt.Fprintf(b, "<li>%s</li>\n", esc(l))
			}
			b.WriteString("</ul>\n")
		}
		for i := range r.Targets {
			t := &r.Targets[i]
			if len(t.Series) == 0 {
				continue
			}
			fmt.Fprintf(b, "<h3>%s</h3>\n<div class=\"figs\">\n", esc(s.labels[i]))
			throughputSVG(b, t)
			latencySVG(b, t)
			histogramSVG(b, t)
			b.WriteString("</div>\n")
		}
		b.WriteString("</section>\n")
	}
	b.WriteString("</main>\n</body>\n</html>\n")
	return nil
}

// htmlGrid writes a plain table of text cells.
func htmlGrid(b *bytes.Buffer, cols []column, rows [][]string) {
	b.WriteString("<div class=\"scroll\"><table>\n<tr>")
	for _, c := range cols {
		fmt.Fprintf(b, "<th>%s</th>", esc(c.title))
	}
	b.WriteString("</tr>\n")
	for _, row := range rows {
		b.WriteString("<tr>")
		for j, cell := range row {
			class := ""
			if cols[j].numeric {
				class = ` class="num"`
			}
			if cols[j].title == "VERDICT" {
				class = ` class="` + loadVerdictClass(cell) + `"`
			}
			fmt.Fprintf(b, "<td%s>%s</td>", class, esc(cell))
		}
		b.WriteString("</tr>\n")
	}
	b.WriteString("</table></div>\n")
}

func loadVerdictClass(cell string) string {
	switch {
	case cell == "ERROR" || cell == "INCONCLUSIVE":
		return "v-error"
	case strings.ToUpper(cell) == cell || strings.Contains(cell, "MISSED"):
		return "v-fail"
	case strings.Contains(cell, "expected"):
		return "v-expected"
	}
	return "v-ok"
}

// chart is the frame of one SVG picture: its size and plot area.
type chart struct {
	w, h, left, right, top, bottom float64
}

var small = chart{w: 460, h: 220, left: 58, right: 12, top: 14, bottom: 34}

func (c chart) x(f float64) float64 { return c.left + f*(c.w-c.left-c.right) }
func (c chart) y(f float64) float64 { return c.h - c.bottom - f*(c.h-c.top-c.bottom) }

// open starts the picture, with a y axis of ticks labelled by tick.
func (c chart) open(b *bytes.Buffer, title string, top float64, tick func(float64) string) {
	fmt.Fprintf(b, "<figure><svg width=\"%.0f\" height=\"%.0f\" viewBox=\"0 0 %.0f %.0f\" role=\"img\" aria-label=\"%s\">\n", c.w, c.h, c.w, c.h, esc(title))
	for i := 0; i <= 4; i++ {
		f := float64(i) / 4
		fmt.Fprintf(b, "<line x1=\"%s\" x2=\"%s\" y1=\"%s\" y2=\"%s\" stroke=\"#d1d9e0\"/>", f1(c.left), f1(c.w-c.right), f1(c.y(f)), f1(c.y(f)))
		fmt.Fprintf(b, "<text x=\"%s\" y=\"%s\" text-anchor=\"end\" class=\"muted\">%s</text>\n", f1(c.left-4), f1(c.y(f)+4), esc(tick(top*f)))
	}
}

func (c chart) close(b *bytes.Buffer, caption string) {
	fmt.Fprintf(b, "</svg><figcaption>%s</figcaption></figure>\n", esc(caption))
}

// secondsAxis labels the x axis with seconds from the start.
func (c chart) secondsAxis(b *bytes.Buffer, n int) {
	step := max(1, n/6)
	for s := 0; s <= n; s += step {
		x := c.x(float64(s) / float64(max(n, 1)))
		fmt.Fprintf(b, "<text x=\"%s\" y=\"%s\" text-anchor=\"middle\" class=\"muted\">%ds</text>", f1(x), f1(c.h-c.bottom+16), s)
	}
	b.WriteString("\n")
}

func throughputSVG(b *bytes.Buffer, t *results.LoadTarget) {
	c := small
	var top int64 = 1
	for _, s := range t.Series {
		top = max(top, s.Answered+s.Errors)
	}
	n := t.Series[len(t.Series)-1].At + 1
	c.open(b, "answers per second", float64(top), func(v float64) string { return fmt.Sprintf("%.0f", v) })
	w := (c.w - c.left - c.right) / float64(n)
	for _, s := range t.Series {
		x := c.x(float64(s.At) / float64(n))
		ok, bad := float64(s.Answered)/float64(top), float64(s.Errors)/float64(top)
		fmt.Fprintf(b, "<rect x=\"%s\" y=\"%s\" width=\"%s\" height=\"%s\" fill=\"#1a7f37\"><title>second %d: %d answered</title></rect>",
			f1(x), f1(c.y(ok)), f1(max(w-1, 0.5)), f1(c.y(0)-c.y(ok)), s.At, s.Answered)
		if s.Errors > 0 {
			fmt.Fprintf(b, "<rect x=\"%s\" y=\"%s\" width=\"%s\" height=\"%s\" fill=\"#cf222e\"><title>second %d: %d errors</title></rect>",
				f1(x), f1(c.y(ok+bad)), f1(max(w-1, 0.5)), f1(c.y(ok)-c.y(ok+bad)), s.At, s.Errors)
		}
	}
	b.WriteString("\n")
	c.secondsAxis(b, n)
	c.close(b, fmt.Sprintf("Answers per second (green; failures in red on top): %.0f/s over the load.", t.Throughput()))
}

func latencySVG(b *bytes.Buffer, t *results.LoadTarget) {
	c := small
	top := time.Millisecond
	for _, s := range t.Series {
		top = max(top, s.P99)
	}
	n := t.Series[len(t.Series)-1].At + 1
	c.open(b, "latency per second", float64(top), func(v float64) string { return formatDuration(time.Duration(v)) })
	line := func(get func(results.Second) time.Duration, color, dash string) {
		var pts []string
		for _, s := range t.Series {
			if s.Answered == 0 {
				continue
			}
			x := c.x((float64(s.At) + 0.5) / float64(n))
			pts = append(pts, f1(x)+","+f1(c.y(float64(get(s))/float64(top))))
		}
		fmt.Fprintf(b, "<polyline fill=\"none\" stroke=\"%s\" stroke-width=\"2\" stroke-dasharray=\"%s\" points=\"%s\"/>\n", color, dash, strings.Join(pts, " "))
	}
	line(func(s results.Second) time.Duration { return s.P50 }, "#0969da", "")
	line(func(s results.Second) time.Duration { return s.P99 }, "#8250df", "6 3")
	c.secondsAxis(b, n)
	c.close(b, fmt.Sprintf("Latency per second: p50 (solid) and p99 (dashed); over the whole load p50 %s, p99 %s, max %s.",
		lat(t.Latency.P50, t.Latency.Count > 0), lat(t.Latency.P99, t.Latency.Count > 0), lat(t.Latency.Max, t.Latency.Count > 0)))
}

func histogramSVG(b *bytes.Buffer, t *results.LoadTarget) {
	if len(t.Buckets) == 0 {
		return
	}
	c := small
	var top int64 = 1
	for _, k := range t.Buckets {
		top = max(top, k.Count)
	}
	c.open(b, "latency histogram", float64(top), func(v float64) string { return fmt.Sprintf("%.0f", v) })
	n := len(t.Buckets)
	w := (c.w - c.left - c.right) / float64(n)
	step := max(1, n/6)
	for i, k := range t.Buckets {
		x := c.x(float64(i) / float64(n))
		f := float64(k.Count) / float64(top)
		fmt.Fprintf(b, "<rect x=\"%s\" y=\"%s\" width=\"%s\" height=\"%s\" fill=\"#0969da\"><title>up to %s: %d</title></rect>",
			f1(x), f1(c.y(f)), f1(max(w-1, 0.5)), f1(c.y(0)-c.y(f)), formatDuration(k.UpTo), k.Count)
		if i%step == 0 {
			fmt.Fprintf(b, "<text x=\"%s\" y=\"%s\" text-anchor=\"middle\" class=\"muted\">%s</text>", f1(x+w/2), f1(c.h-c.bottom+16), formatDuration(k.UpTo))
		}
	}
	b.WriteString("\n")
	c.close(b, "Answers by latency, in bins that double: each bar counts the answers up to its label.")
}
