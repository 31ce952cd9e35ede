package report

import (
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/racelab/racelab/scenarios"
)

// column is one column of the summary table.
type column struct {
	title   string
	numeric bool // right-aligned, so that figures line up
}

// columns are the summary table's columns, in order.
var columns = []column{
	{"TARGET", false},
	{"GUARANTEE", false},
	{"REQUESTS", true},
	{"ALLOWED", true},
	{"REFUSED", true},
	{"ERRORS", true},
	{"COUNTED", true},
	{"EXPECTED", false},
	{"LOST/OVER", false},
	{"VERDICT", false},
}

// none fills a cell that has nothing to say.
const none = "-"

// summary is the reading of a Result that the table and markdown renderers
// share: the scale of the run, one row per target, and the plain-words lines
// that go under the table.
//
// The cells this package writes are ASCII only (ranges are "9-12", verdicts
// "BROKEN, expected to hold", never with a typographic dash): terminals in
// East Asian locales draw such dashes two columns wide, and a table must
// line up on every terminal. Text from elsewhere (a guarantee, a target
// name) is taken as it comes; table.go pins its width for the goldens.
type summary struct {
	scale string     // "10 requests per burst · 1 trial per target · seed 1"
	rows  [][]string // one per target, len(columns) cells each
	lines []string   // breakages, notes and errors, one sentence each
}

// summarize reads r into a summary.
func summarize(r *scenarios.Result) summary {
	multi := r.Trials > 1
	for i := range r.Targets {
		multi = multi || len(r.Targets[i].Trials) > 1
	}
	s := summary{scale: fmt.Sprintf("%s per burst · %s per target · seed %d",
		plural(int64(r.Requests), "request"), plural(int64(r.Trials), "trial"), r.Seed)}

	labels := labels(r.Targets)
	for i := range r.Targets {
		s.rows = append(s.rows, row(&r.Targets[i], labels[i], multi, r.Interrupted))
	}

	// What broke, then what did not show, then what could not run: the
	// order in which a reader wants to know.
	for i := range r.Targets {
		tr := &r.Targets[i]
		if k := tr.Broken(); k > 0 {
			line := firstWhy(tr, labels[i])
			if multi {
				line += fmt.Sprintf(" (in %d of %d trials)", k, len(tr.Trials))
			}
			s.lines = append(s.lines, line)
		}
	}
	for i := range r.Targets {
		if raceHidden(&r.Targets[i]) {
			s.lines = append(s.lines, labels[i]+": the race did not show; raise -n or --trials")
		}
	}
	for i := range r.Targets {
		if e := r.Targets[i].Error; e != "" {
			s.lines = append(s.lines, prefixed(labels[i], e))
		}
	}
	for i := range r.Targets {
		if line := failedRequests(&r.Targets[i], labels[i]); line != "" {
			s.lines = append(s.lines, line)
		}
	}

	var spread time.Duration
	ran := false
	for i := range r.Targets {
		ran = ran || len(r.Targets[i].Trials) > 0
		spread = max(spread, r.Targets[i].MaxReleaseSpread())
	}
	if ran {
		s.lines = append(s.lines, "release spread: max "+formatDuration(spread)+" across all bursts")
	}
	for i := range r.Targets {
		var retries int64
		for _, t := range r.Targets[i].Trials {
			retries += t.Retries
		}
		if retries > 0 {
			s.lines = append(s.lines, labels[i]+": "+plural(retries, "retry"))
		}
	}
	if r.Interrupted {
		s.lines = append(s.lines, "interrupted: partial results")
	}
	return s
}

// labels names each target in the table: its name, or its full spec when
// two targets share a name (kv and kv?cache-ttl=30s).
func labels(ts []scenarios.TargetResult) []string {
	seen := make(map[string]int, len(ts))
	for _, t := range ts {
		seen[t.Target]++
	}
	l := make([]string, len(ts))
	for i, t := range ts {
		l[i] = t.Target
		if seen[t.Target] > 1 && t.Spec != "" {
			l[i] = t.Spec
		}
	}
	return l
}

// row is one target's cells.
func row(tr *scenarios.TargetResult, label string, multi, interrupted bool) []string {
	ts := tr.Trials
	cells := []string{label, orNone(tr.Guarantee), none, none, none, none, none, orNone(string(tr.Expect)), none,
		verdict(tr, multi, interrupted)}
	if len(ts) == 0 {
		return cells
	}
	cells[2] = spanOf(ts, func(t scenarios.Trial) int { return len(t.Requests) })
	cells[3] = spanOf(ts, func(t scenarios.Trial) int { return t.Allowed })
	cells[4] = spanOf(ts, func(t scenarios.Trial) int { return t.Refused })
	cells[5] = spanOf(ts, func(t scenarios.Trial) int { return t.Errors })
	if lo, median, hi, _ := tr.CountedDistribution(); multi {
		cells[6] = fmt.Sprintf("%d/%d/%d", lo, median, hi)
	} else {
		cells[6] = strconv.FormatInt(ts[0].Counted, 10)
	}
	cells[8] = lostOver(worst(ts))
	return cells
}

// spanOf shows a per-trial figure as one number when every trial agrees, or
// as "min-max".
func spanOf(ts []scenarios.Trial, figure func(scenarios.Trial) int) string {
	lo, hi := figure(ts[0]), figure(ts[0])
	for _, t := range ts[1:] {
		lo, hi = min(lo, figure(t)), max(hi, figure(t))
	}
	if lo == hi {
		return strconv.Itoa(lo)
	}
	return fmt.Sprintf("%d-%d", lo, hi)
}

// worst is the trial that strayed furthest from the rule, the first of
// equals; ts is not empty.
func worst(ts []scenarios.Trial) scenarios.Trial {
	w := ts[0]
	for _, t := range ts[1:] {
		if t.Over+t.Lost > w.Over+w.Lost {
			w = t
		}
	}
	return w
}

// lostOver says how far one trial strayed: "7 over, 11 lost", "9 lost", "-".
func lostOver(t scenarios.Trial) string {
	var parts []string
	if t.Over > 0 {
		parts = append(parts, fmt.Sprintf("%d over", t.Over))
	}
	if t.Lost > 0 {
		parts = append(parts, fmt.Sprintf("%d lost", t.Lost))
	}
	if len(parts) == 0 {
		return none
	}
	return strings.Join(parts, ", ")
}

// verdict says what the target did against what was expected of it. The
// word is in capitals exactly when the target fails the run.
func verdict(tr *scenarios.TargetResult, multi, interrupted bool) string {
	n := len(tr.Trials)
	switch {
	case tr.Error != "":
		return "error"
	case n == 0 && interrupted:
		return "interrupted"
	case n == 0:
		return "no trials"
	}
	k := tr.Broken()
	in := func(k int) string {
		if !multi {
			return ""
		}
		return fmt.Sprintf(" in %d/%d", k, n)
	}
	word := func(w string) string {
		if tr.Failed() {
			return strings.ToUpper(w)
		}
		return w
	}
	switch {
	case k > 0 && tr.Expect == scenarios.ExpectBreak:
		return "broken" + in(k) + " (expected)"
	case k > 0:
		return word("broken") + in(k) + ", expected to hold"
	case tr.Expect == scenarios.ExpectBreak:
		return word("held") + in(n) + ", race not shown"
	default:
		return "holds" + in(n)
	}
}

// raceHidden says a target expected to show the race ran and never did.
func raceHidden(tr *scenarios.TargetResult) bool {
	return tr.Error == "" && tr.Expect == scenarios.ExpectBreak && len(tr.Trials) > 0 && tr.Broken() == 0
}

// firstWhy is the plain-words account of the target's first broken trial.
func firstWhy(tr *scenarios.TargetResult, label string) string {
	for _, t := range tr.Trials {
		if t.Broken {
			if t.Why == "" {
				return label + ": the rule broke"
			}
			return t.Why
		}
	}
	return ""
}

// failedRequests says how many requests the target failed and how the
// first one failed, or "" when none did: the ERRORS column counts them, and
// a reader's next question is why.
func failedRequests(tr *scenarios.TargetResult, label string) string {
	var n int64
	first := ""
	for _, t := range tr.Trials {
		for _, req := range t.Requests {
			if req.Outcome == scenarios.Failed {
				n++
				if first == "" {
					first = req.Error
				}
			}
		}
	}
	if n == 0 {
		return ""
	}
	line := fmt.Sprintf("%s: %s failed", label, plural(n, "request"))
	if first != "" {
		line += "; first: " + first
	}
	return line
}

// prefixed puts "label: " before text unless the text already names it, as
// the engine's own messages do ("kv: read back slug-…: …").
func prefixed(label, text string) string {
	if strings.HasPrefix(text, label+": ") {
		return text
	}
	return label + ": " + text
}

func orNone(s string) string {
	if s == "" {
		return none
	}
	return s
}

// plural writes "1 trial", "2 trials", "3 retries".
func plural(n int64, word string) string {
	if n == 1 {
		return fmt.Sprintf("%d %s", n, word)
	}
	if strings.HasSuffix(word, "y") {
		return fmt.Sprintf("%d %sies", n, strings.TrimSuffix(word, "y"))
	}
	return fmt.Sprintf("%d %ss", n, word)
}

// formatDuration writes d with about two significant figures in the unit
// that suits it: 850ns, 85µs, 1.2ms, 3s. Go's own String would write
// 1.234567ms, more digits than a release spread deserves.
func formatDuration(d time.Duration) string {
	units := []struct {
		size time.Duration
		name string
	}{{time.Nanosecond, "ns"}, {time.Microsecond, "µs"}, {time.Millisecond, "ms"}}
	for _, u := range units {
		if s, ok := twoFigures(float64(d)/float64(u.size), u.name); ok {
			return s
		}
	}
	s, _ := twoFigures(d.Seconds(), "s")
	return s
}

// twoFigures writes v with one decimal below 10 and none above; ok is false
// when v reaches 1000 once rounded (999.7µs), so that the next unit says it.
func twoFigures(v float64, unit string) (string, bool) {
	digits := 0
	if v < 9.95 {
		digits = 1
	}
	s := strconv.FormatFloat(v, 'f', digits, 64)
	if f, _ := strconv.ParseFloat(s, 64); f >= 1000 {
		return "", false
	}
	return strings.TrimSuffix(s, ".0") + unit, true
}
