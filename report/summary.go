package report

import (
	"cmp"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/racelab/racelab/scenarios/results"
)

// column is one column of the summary table.
type column struct {
	title string
	// sub says what the figures are, on a second header line in a
	// terminal ("min/med/max"), in brackets elsewhere.
	sub     string
	numeric bool // right-aligned, so that figures line up
	// drop orders the columns a narrow table leaves out: the highest
	// first; 0 is never left out. What a dropped column said is said
	// under the table instead (see fitTo), or already is.
	drop int
	// fold lets the column's cells break between words onto several
	// lines when leaving columns out is not enough.
	fold bool
}

// label is the column's title on one line: "COUNTED (min/med/max)".
func (c column) label() string {
	if c.sub == "" {
		return c.title
	}
	return c.title + " (" + c.sub + ")"
}

// The summary table's columns. A narrow table leaves them out from the
// highest drop down: the guarantee first (said under the table), then
// what other cells or lines say already (the requests, in the scale line;
// the expectation, in the verdict; the errors, in a line of their own),
// then the history, the rate and the worst trial (said under the table).
// The target, the counts and the verdict always stay.
var (
	targetColumn    = column{title: "TARGET", fold: true}
	guaranteeColumn = column{title: "GUARANTEE", drop: 9, fold: true}
	requestsColumn  = column{title: "REQUESTS", numeric: true, drop: 8}
	allowedColumn   = column{title: "ALLOWED", numeric: true}
	refusedColumn   = column{title: "REFUSED", numeric: true}
	errorsColumn    = column{title: "ERRORS", numeric: true, drop: 6}
	countedColumn   = column{title: "COUNTED", numeric: true}
	expectedColumn  = column{title: "EXPECTED", drop: 7}
	worstColumn     = column{title: "WORST TRIAL", drop: 3, fold: true}
	verdictColumn   = column{title: "VERDICT", fold: true}
	// historyColumn says whether the trials' answers fit one request at
	// a time: shown when some trial was checked.
	historyColumn = column{title: "HISTORY", drop: 5, fold: true}
	// rateColumn is the rate of breaking and its upper bound: shown when
	// some target ran more than one trial, or a rate was asked for. One
	// trial bounds nothing worth a column (0 of 1 is "below 95%").
	rateColumn = column{title: "BREAK RATE", numeric: true, drop: 4, fold: true}
	// softColumn is the verdict of a story's soft rule, judged beside its
	// hard rule: shown for stories that have one (Result.Soft).
	softColumn = column{title: "SOFT RULE", fold: true}
)

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
	cols  []column   // columns, then the optional ones that have something to say
	rows  [][]string // one per target, len(cols) cells each
	lines []string   // breakages, notes and errors, one sentence each
	// own holds, per target, the lines about it, for renderers that
	// report targets one by one (JUnit).
	own [][]string
	// guarantees and histories say, per target, what the guarantee and
	// history columns do, for a table too narrow for those columns
	// (a history line only where the order was impossible).
	guarantees, histories []string
}

// impossibleOrder is what a failed history check found, in a class's words
// with the technical term beside them.
const impossibleOrder = "impossible order (not linearizable)"

// verdictIndex is where the verdict column is: found by its title, since
// optional columns (a story's soft rule) may follow it.
func (s *summary) verdictIndex() int {
	return slices.IndexFunc(s.cols, func(c column) bool { return c.title == verdictColumn.title })
}

// verdict is target i's verdict cell.
func (s *summary) verdict(i int) string { return s.rows[i][s.verdictIndex()] }

// add puts lines about target i under the table.
func (s *summary) add(i int, lines ...string) {
	s.lines = append(s.lines, lines...)
	s.own[i] = append(s.own[i], lines...)
}

// summarize reads r into a summary, its advice in o's words.
func summarize(r *results.Result, o Options) summary {
	tallies := make([]results.Tally, len(r.Targets))
	multi := r.Trials > 1
	for i := range r.Targets {
		tallies[i] = r.Targets[i].Summary()
		multi = multi || tallies[i].Trials > 1
	}
	s := summary{scale: scale(r), own: make([][]string, len(r.Targets))}
	showHistory, showRate := false, multi || r.MaxRate > 0
	for i := range r.Targets {
		tr := &r.Targets[i]
		showRate = showRate || tr.Bound != nil && tr.Bound.MaxRate > 0
		showHistory = showHistory || tallies[i].HistoryChecked > 0
	}
	counted := countedColumn
	if multi && !uncounted(r) {
		counted.sub = "min/med/max"
	}
	rate := rateColumn
	rate.sub = results.Percent(cmp.Or(r.Confidence, results.DefaultConfidence)) + " sure"
	s.cols = []column{targetColumn, guaranteeColumn, requestsColumn, allowedColumn, refusedColumn, errorsColumn, counted, expectedColumn, worstColumn}
	if showHistory {
		s.cols = append(s.cols, historyColumn)
	}
	if showRate {
		s.cols = append(s.cols, rate)
	}
	s.cols = append(s.cols, verdictColumn)
	if r.Soft != "" {
		s.cols = append(s.cols, softColumn)
	}

	labels := results.Labels(r.Targets)
	for i := range r.Targets {
		tr := &r.Targets[i]
		cells := row(tr, &tallies[i], labels[i], multi)
		if uncounted(r) {
			cells[6] = none
		}
		if showHistory {
			cells = append(cells, historyCell(&tallies[i], multi))
		}
		if showRate {
			cells = append(cells, rateCell(tr, &tallies[i]))
		}
		cells = append(cells, verdict(tr, &tallies[i], multi, r.Interrupted))
		if r.Soft != "" {
			cells = append(cells, softCell(&tallies[i], multi))
		}
		s.rows = append(s.rows, cells)
	}
	s.guarantees = make([]string, len(r.Targets))
	s.histories = make([]string, len(r.Targets))
	for i := range r.Targets {
		s.guarantees[i] = labels[i] + "'s guarantee: " + orNone(r.Targets[i].Guarantee)
		if t := &tallies[i]; t.NotLinearizable > 0 {
			s.histories[i] = fmt.Sprintf("%s: %s in %d of %s", labels[i], impossibleOrder, t.NotLinearizable, results.Plural(int64(t.HistoryChecked), "trial"))
		}
	}

	if r.Soft != "" {
		// The SOFT RULE column says only broken or holds: what it judged
		// against, the bound the design accepts, is said here.
		s.lines = append(s.lines, "soft rule: "+r.Soft)
	}

	// What broke, then what did not show, then what could not run: the
	// order in which a reader wants to know.
	for i := range r.Targets {
		if k := tallies[i].Broken; k > 0 {
			line := firstWhy(&tallies[i], labels[i], multi)
			if multi {
				line += fmt.Sprintf(" (%d of %d trials broke)", k, tallies[i].Trials)
			}
			s.add(i, line)
		}
	}
	for i := range r.Targets {
		if b := r.Targets[i].Batch; b.Found() {
			s.add(i, b.Why(labels[i]))
		} else if b != nil && b.Error != "" {
			s.add(i, fmt.Sprintf("%s: batch read not checked: %s", labels[i], b.Error))
		} else if b != nil && (r.KeyChars == "" || r.KeyChars == results.KeyASCII) {
			s.add(i, o.say(fmt.Sprintf("%s: batch read agreed with single reads on %s, all ASCII; {KeyChars} percent also tries slugs stored percent-encoded",
				labels[i], results.Plural(int64(b.Keys), "key"))))
		}
	}
	for i := range r.Targets {
		if raceHidden(&r.Targets[i], &tallies[i]) {
			s.add(i, o.say(labels[i]+": the race did not show; raise "+raiseWhat(r)))
		}
	}
	for i := range r.Targets {
		if r.Targets[i].Inconclusive() {
			s.add(i, tallies[i].InconclusiveWhy(labels[i]))
		} else if line := causesLine(&tallies[i], labels[i]); line != "" {
			s.add(i, line)
		}
	}
	if showRate {
		for i := range r.Targets {
			s.add(i, boundLines(&r.Targets[i], &tallies[i], labels[i])...)
		}
	}
	for i := range r.Targets {
		if e := r.Targets[i].Error; e != "" {
			s.add(i, prefixed(labels[i], e))
		}
	}
	for i := range r.Targets {
		if line := failedRequests(&tallies[i], labels[i]); line != "" {
			s.add(i, line)
		}
	}
	for i := range r.Targets {
		if line := historyUnknown(&tallies[i], labels[i]); line != "" {
			s.add(i, o.say(line))
		}
	}

	for i := range r.Targets {
		s.add(i, storyLines(r, &tallies[i], labels[i])...)
	}
	if !r.Sequential && r.Script == "" && r.Stream == "" { // only bursts have a spread
		s.lines = append(s.lines, spreadLines(r, tallies, labels)...)
	}
	for i := range r.Targets {
		if retries := tallies[i].Retries; retries > 0 {
			s.add(i, labels[i]+": "+results.Plural(retries, "retry"))
		}
	}
	for i := range r.Targets {
		if t := tallies[i].Trials; o.Saved && t > len(r.Targets[i].Trials) {
			s.add(i, o.say(fmt.Sprintf("%s: %d of %s keep their requests in this result ({KeepAll} keeps all)",
				labels[i], len(r.Targets[i].Trials), results.Plural(int64(t), "trial"))))
		}
	}
	if r.Interrupted {
		s.lines = append(s.lines, "interrupted: partial results")
	}
	return s
}

// row is one target's cells up to the worst trial.
func row(tr *results.TargetResult, s *results.Tally, label string, multi bool) []string {
	cells := []string{label, orNone(tr.Guarantee), none, none, none, none, none, orNone(string(tr.Expect)), none}
	if s.Trials == 0 {
		return cells
	}
	cells[2] = spanOf(s.Requests)
	cells[3] = spanOf(s.Allowed)
	cells[4] = spanOf(s.Refused)
	cells[5] = spanOf(s.Errors)
	if multi {
		cells[6] = fmt.Sprintf("%d/%d/%d", s.CountedMin, s.CountedMedian(), s.CountedMax)
	} else {
		cells[6] = strconv.FormatInt(s.CountedMin, 10)
	}
	if d := s.Worst.Words(); d != "" {
		cells[8] = d
		if multi {
			cells[8] = fmt.Sprintf("#%d: %s", s.Worst.Index+1, d)
		}
	}
	return cells
}

// spanOf shows a per-trial figure as one number when every trial agrees, or
// as "min-max".
func spanOf(s results.Span) string {
	if s.Min == s.Max {
		return strconv.Itoa(s.Min)
	}
	return fmt.Sprintf("%d-%d", s.Min, s.Max)
}

// verdict says what the target did against what was expected of it. The
// word is in capitals exactly when the target fails the run.
func verdict(tr *results.TargetResult, s *results.Tally, multi, interrupted bool) string {
	n := s.Trials
	switch {
	case tr.Error != "":
		return "error"
	case n == 0 && interrupted:
		return "interrupted"
	case n == 0:
		return "no trials"
	}
	k := s.Broken
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
	case k > 0 && tr.Expect == results.ExpectBreak:
		return "broken" + in(k) + " (expected)"
	case k > 0:
		return word("broken") + in(k) + ", expected to hold"
	case tr.Inconclusive() && tr.Strict:
		return "INCONCLUSIVE" + in(s.Inconclusive)
	case tr.Inconclusive():
		return "inconclusive" + in(s.Inconclusive)
	case tr.Expect == results.ExpectBreak:
		return word("held") + in(n) + ", race not shown"
	case !tr.Proven():
		return word("held") + in(n) + ", not proven below " + results.Percent(tr.Evidence().MaxRate)
	default:
		return "holds" + in(n)
	}
}

// scale is the line under the heading: how big the bursts were, how many
// trials each target had, and the seed that makes the run repeatable.
func scale(r *results.Result) string {
	trials := results.Plural(int64(r.Trials), "trial") + " per target"
	if r.MaxRate > 0 {
		trials = fmt.Sprintf("trials until the rate of breaking is below %s at %s confidence (%d to %d per target)",
			results.Percent(r.MaxRate), results.Percent(cmp.Or(r.Confidence, results.DefaultConfidence)), r.Trials, r.MaxTrials)
	}
	seed := fmt.Sprintf("seed %d", r.Seed)
	if len(r.Seeds) > 1 {
		seeds := make([]string, len(r.Seeds))
		for i, s := range r.Seeds {
			seeds[i] = strconv.FormatInt(s, 10)
		}
		seed = "seeds " + strings.Join(seeds, ", ")
	}
	shape := results.Plural(int64(r.Requests), "request") + " per burst"
	if r.Stream != "" {
		shape = fmt.Sprintf("%s (%s expected) per trial", r.Stream, results.Plural(int64(r.Requests), "request"))
	}
	if r.Script != "" {
		shape = r.Script
	} else if r.Sequential {
		shape = fmt.Sprintf("%s one after another, %s apart", results.Plural(int64(r.Requests), "request"), formatDuration(r.Gap))
	}
	return fmt.Sprintf("%s · %s · %s", shape, trials, seed)
}

// historyCell says what the history checks found: whether the answers fit
// the requests taking turns one at a time ("linearizable", or, with plain
// words before the technical term, "impossible order (not linearizable) in 3/20"),
// "unknown in 1/20", or "-" when none was checked.
func historyCell(s *results.Tally, multi bool) string {
	checked, bad, unknown := s.HistoryChecked, s.NotLinearizable, s.HistoryUnknown
	in := func(k int) string {
		if !multi {
			return ""
		}
		return fmt.Sprintf(" in %d/%d", k, checked)
	}
	switch {
	case checked == 0:
		return none
	case bad > 0:
		return impossibleOrder + in(bad)
	case unknown > 0:
		return "unknown" + in(unknown)
	default:
		return "linearizable"
	}
}

// rateCell is the rate of breaking seen, with the most it can be at the
// run's confidence (the column's header names it): "0% (at most 1.0%)"
// when no synchronized trial broke, "15% (at most 38%)" when 3 of 20 did.
func rateCell(tr *results.TargetResult, s *results.Tally) string {
	if s.Trials == 0 {
		return none
	}
	b := tr.Evidence()
	switch {
	case b.Trials == 0:
		return none
	case b.Broken == 0:
		return "0% (at most " + results.PercentUp(b.Upper) + ")"
	case b.Upper >= 1:
		return results.PercentNear(float64(b.Broken) / float64(b.Trials))
	default:
		return results.PercentNear(float64(b.Broken)/float64(b.Trials)) + " (at most " + results.PercentUp(b.Upper) + ")"
	}
}

// boundLines state in words what the target's trials prove: the bound
// when none broke, and what did not count as proof.
func boundLines(tr *results.TargetResult, s *results.Tally, label string) []string {
	if tr.Error != "" || s.Trials == 0 {
		return nil
	}
	b := tr.Evidence()
	var lines []string
	switch {
	case b.Trials == 0:
		lines = append(lines, label+": no trial was conclusive, so the trials prove nothing")
	case b.Broken == 0:
		line := fmt.Sprintf("%s: no break in %s: at %s confidence, a trial breaks the rule less than %s of the time",
			label, results.Plural(int64(b.Trials), "trial"), results.Percent(b.Level), results.PercentUp(b.Upper))
		if b.MaxRate > 0 {
			if b.Met() {
				line += fmt.Sprintf(" (below %s, as asked)", results.Percent(b.MaxRate))
			} else {
				line += fmt.Sprintf(", not below the %s asked: run more trials", results.Percent(b.MaxRate))
			}
		}
		lines = append(lines, line)
	}
	if u := s.Unsynchronized; u > 0 {
		lines = append(lines, fmt.Sprintf("%s: %d of %s were not synchronized (an answer came before the release) and prove nothing",
			label, u, results.Plural(int64(s.Trials), "trial")))
	}
	if u := s.Errored; u > 0 && !tr.Inconclusive() && len(s.Causes) == 0 { // else said with the causes
		lines = append(lines, fmt.Sprintf("%s: %d of %s had a failed request and prove nothing",
			label, u, results.Plural(int64(s.Trials), "trial")))
	}
	return lines
}

// historyUnknown says in how many trials the history check ran out of
// time, or "" when it never did.
func historyUnknown(s *results.Tally, label string) string {
	n := s.HistoryUnknown
	if n == 0 {
		return ""
	}
	return fmt.Sprintf("%s: the history check ran out of time in %d of %s (raise {HistoryTimeout})",
		label, n, results.Plural(int64(s.Trials), "trial"))
}

// raiseWhat is what would make a hidden race show: more requests in a
// burst and more bursts; a script or a stream of arrivals has no burst
// size to raise, only more trials.
func raiseWhat(r *results.Result) string {
	if r.Script != "" || r.Stream != "" {
		return "{Trials}"
	}
	return "{Requests} or {Trials}"
}

// raceHidden says a target expected to show the race ran and never did.
func raceHidden(tr *results.TargetResult, s *results.Tally) bool {
	return tr.Error == "" && tr.Expect == results.ExpectBreak && s.Trials > 0 && s.Broken == 0 && !tr.Inconclusive()
}

// firstWhy is the plain-words account of the target's first broken
// trial, naming the trial when there were several: its counts are that
// trial's, not the median's.
//
// Of a race file, whose trials rank by severity, it is the worst one's.
func firstWhy(s *results.Tally, label string, multi bool) string {
	why, n := s.FirstWhy, s.FirstBroken
	if w := s.Worst.WorstWhy(); w != "" {
		why, n = w, s.Worst.Index+1
	}
	if why == "" {
		return label + ": the rule broke"
	}
	if multi && n > 0 {
		if rest, ok := strings.CutPrefix(why, label+": "); ok {
			return fmt.Sprintf("%s, trial %d: %s", label, n, rest)
		}
	}
	return why
}

// failedRequests says how many requests the target failed and how the
// first one failed, or "" when none did: the ERRORS column counts them, and
// a reader's next question is why.
func failedRequests(s *results.Tally, label string) string {
	n, first := s.Errors.Sum, s.FirstError
	if n == 0 {
		return ""
	}
	line := fmt.Sprintf("%s: %s failed", label, results.Plural(n, "request"))
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
	if s, ok := twoFigures(d.Seconds(), "s"); ok {
		return s
	}
	// Past 999 s (an extension's exposure is hours): to the second, as Go
	// writes it, "11h52m3s".
	return d.Round(time.Second).String()
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

// spreadLines say how tightly the bursts were released. On the real clock
// that is a measurement: how far apart the requests really started, and,
// when the server reports arrivals, how far apart they arrived (the figure
// that matters for staged HTTP bursts, whose bytes leave after the start). In virtual
// time every burst is released at one instant by construction, which is
// worth saying once rather than printing as a measured 0.
func spreadLines(r *results.Result, tallies []results.Tally, labels []string) []string {
	var lines []string
	var spread time.Duration
	var real, virtual []string
	for i := range r.Targets {
		tr := &r.Targets[i]
		if tallies[i].Trials == 0 {
			continue
		}
		if tr.Clock == results.ClockVirtual {
			virtual = append(virtual, labels[i])
			continue
		}
		real = append(real, labels[i])
		spread = max(spread, tallies[i].MaxReleaseSpread)
	}
	switch {
	case len(real) > 0 && len(virtual) == 0:
		lines = append(lines, "release spread: max "+formatDuration(spread)+" across all bursts")
	case len(real) > 0:
		lines = append(lines, fmt.Sprintf("release spread: max %s across the bursts on the real clock (%s)", formatDuration(spread), strings.Join(real, ", ")))
		lines = append(lines, fmt.Sprintf("virtual time (%s): every burst released at one instant", strings.Join(virtual, ", ")))
	case len(virtual) > 0:
		lines = append(lines, "virtual time: every burst released at one instant; same seed, same run")
	}
	for i := range r.Targets {
		if arrivals := slices.Clone(tallies[i].ArrivalSpreads); len(arrivals) > 0 {
			slices.Sort(arrivals)
			lines = append(lines, fmt.Sprintf("%s: arrival spread at the server: median %s, max %s over %s",
				labels[i], formatDuration(arrivals[len(arrivals)/2]), formatDuration(arrivals[len(arrivals)-1]), results.Plural(int64(len(arrivals)), "burst")))
		}
	}
	return lines
}
