package report

import (
	"bytes"
	"encoding/json"
	"fmt"
	"maps"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/racelab/racelab/scenarios/results"
)

// The reports of `racelab load`: the same five formats as a run's, read
// from a LoadResult. Two tables, because a load answers two questions: how
// fast the target was (throughput and latency), and whether it kept the
// story's rule under that load (allowed against counted, key by key).

// The columns of the two tables.
var (
	// A narrow terminal loses the in-between percentiles first, then the
	// figures said elsewhere (the keys, in the scale line; the
	// expectation, in the verdict); fitLoadGrid names what it left out.
	// MIN, MEAN and MAX are hey's fastest, average and slowest.
	speedColumns = []column{{title: "TARGET", fold: true}, {title: "SENT", numeric: true}, {title: "ANSWERED/S", numeric: true},
		{title: "MIN", numeric: true, drop: 6}, {title: "MEAN", numeric: true, drop: 5}, {title: "P50", numeric: true, drop: 2}, {title: "P90", numeric: true, drop: 4}, {title: "P99", numeric: true},
		{title: "P99.9", numeric: true, drop: 3}, {title: "MAX", numeric: true, drop: 1}, {title: "ERRORS", numeric: true}}
	ruleColumns = []column{{title: "TARGET", fold: true}, {title: "KEYS", numeric: true, drop: 2}, {title: "ALLOWED", numeric: true},
		{title: "REFUSED", numeric: true}, {title: "COUNTED", numeric: true}, {title: "LOST", numeric: true}, {title: "OVER", numeric: true},
		{title: "EXPECTED", drop: 3}, {title: "VERDICT", fold: true}}
)

// loadSummary is a load result read for the table, markdown, JUnit and
// HTML alike.
type loadSummary struct {
	scale  string
	labels []string
	speed  [][]string
	rule   [][]string
	lines  []string
	own    [][]string // per target, its lines
}

func (s *loadSummary) add(i int, line string) {
	s.lines = append(s.lines, line)
	s.own[i] = append(s.own[i], line)
}

// loadScale says what load was asked: the model, its rate or workers, its
// length, the keys.
func loadScale(r *results.LoadResult) string {
	var parts []string
	switch {
	case r.Schedule != nil && len(r.Schedule.Stages) == 1 && r.Schedule.Stages[0].Rate == r.Schedule.Start:
		parts = append(parts, fmt.Sprintf("open model: %s/s for %s", num(r.Schedule.Start), r.Schedule.Stages[0].Duration))
	case r.Schedule != nil && len(r.Schedule.Stages) == 0:
		// A rate that a request count ends has no stage to name.
		parts = append(parts, fmt.Sprintf("open model: %s/s", num(r.Schedule.Start)))
	case r.Schedule != nil:
		var st []string
		for _, s := range r.Schedule.Stages {
			st = append(st, fmt.Sprintf("%s to %s/s", s.Duration, num(s.Rate)))
		}
		lead := "open model: "
		if r.Schedule.Start > 0 {
			lead += fmt.Sprintf("from %s/s, ", num(r.Schedule.Start))
		}
		parts = append(parts, lead+strings.Join(st, ", then "))
	default:
		parts = append(parts, fmt.Sprintf("closed model: %d workers", r.Concurrency))
		if r.Requests == 0 {
			parts[0] += " for " + r.Duration.String()
		}
	}
	if r.Requests > 0 {
		parts = append(parts, results.Plural(r.Requests, "request")+" exactly")
	}
	if r.Schedule != nil && r.Schedule.Spacing == "poisson" {
		parts = append(parts, "Poisson arrivals")
	}
	parts = append(parts, fmt.Sprintf("%s (%s)", results.Plural(int64(r.Keys), "key"), r.KeyDist))
	parts = append(parts, "seed "+strconv.FormatInt(r.Seed, 10))
	return strings.Join(parts, " · ")
}

func num(f float64) string { return strconv.FormatFloat(f, 'f', -1, 64) }

// lat writes a latency cell: three figures, "-" with no answers.
func lat(d time.Duration, any bool) string {
	if !any {
		return none
	}
	return formatDuration(results.Round(d))
}

func summarizeLoad(r *results.LoadResult) loadSummary {
	s := loadSummary{scale: loadScale(r), labels: r.Labels(), own: make([][]string, len(r.Targets))}
	failed := map[int]bool{}
	for _, f := range r.Shortfalls() {
		if f.Kind == results.RuleShortfall {
			failed[slices.Index(s.labels, f.Target)] = true
		}
	}
	for i := range r.Targets {
		t := &r.Targets[i]
		label := s.labels[i]
		l := t.Latency
		has := l.Count > 0
		speed := []string{label, none, none, none, none, none, none, none, none, none, none}
		rule := []string{label, none, none, none, none, none, none, string(t.Expect), loadVerdictCell(t, failed[i], r.Interrupted)}
		if t.Sent > 0 || t.Dropped > 0 {
			speed = []string{label, strconv.FormatInt(t.Sent, 10), strconv.FormatFloat(t.Throughput(), 'f', 0, 64),
				lat(l.Min, has), lat(l.Mean, has), lat(l.P50, has), lat(l.P90, has), lat(l.P99, has), lat(l.P999, has), lat(l.Max, has), errorsCell(t)}
		}
		if k := t.Keys; k.Trials > 0 {
			rule[1] = strconv.Itoa(k.Trials)
			rule[2] = strconv.FormatInt(t.Allowed, 10)
			rule[3] = strconv.FormatInt(t.Refused, 10)
			if !r.Uncounted {
				rule[4] = strconv.FormatInt(t.Counted, 10)
				rule[5] = strconv.FormatInt(k.Lost, 10)
				rule[6] = strconv.FormatInt(k.Over, 10)
			}
		}
		s.speed = append(s.speed, speed)
		s.rule = append(s.rule, rule)
	}
	for i := range r.Targets {
		t := &r.Targets[i]
		label := s.labels[i]
		if t.Error != "" {
			s.add(i, prefixed(label, t.Error))
			continue
		}
		if k := t.Keys; k.Broken > 0 {
			s.add(i, fmt.Sprintf("%s: the rule broke on %d of %s; worst key: %s", label, k.Broken, results.Plural(int64(k.Trials), "key"), t.WorstKey.Why))
		} else if k.Trials > 0 && t.Expect == results.ExpectBreak && !r.Interrupted {
			s.add(i, label+": the race did not show under this load; raise the rate, or lower {Keys}")
		}
		if k := t.Keys; k.Inconclusive > 0 && len(k.Causes) > 0 { // a race file's keys say why
			s.add(i, fmt.Sprintf("%s: %d of %s proved nothing: %s (a verdict needs at most %s of them)",
				label, k.Inconclusive, results.Plural(int64(k.Trials), "key"), strings.Join(k.Causes.Lines(), "; "), results.Percent(results.MaxInconclusive)))
		} else if k.Inconclusive > 0 {
			s.add(i, fmt.Sprintf("%s: %d of %s had a failed request and proved nothing (a verdict needs at most %s of them)",
				label, k.Inconclusive, results.Plural(int64(k.Trials), "key"), results.Percent(results.MaxInconclusive)))
		}
		if codes := statusCodes(t); codes != "" {
			s.add(i, label+": status codes: "+codes)
		}
		if w := t.WarmUp; w != nil && w.Warmed < w.Connections {
			s.add(i, fmt.Sprintf("%s: warmed %d of %d connections in %s before the load (%s); the rest opened as it needed them",
				label, w.Warmed, w.Connections, w.Took.Round(time.Millisecond), w.Stopped))
		}
		for _, e := range t.ErrorKinds {
			s.add(i, fmt.Sprintf("%s: %d %s; first: %s", label, e.Count, e.Kind, e.First))
		}
		if t.Late > 0 {
			s.add(i, fmt.Sprintf("%s: %s sent more than %s behind schedule (in-flight cap %d); their wait counts in the latency",
				label, results.Plural(t.Late, "request"), results.LateAfter, r.MaxInFlight))
		}
		if r.Schedule != nil && t.Elapsed > 0 {
			s.add(i, fmt.Sprintf("%s: sent %s/s against %s/s asked", label,
				strconv.FormatFloat(t.SentRate(), 'f', 1, 64), strconv.FormatFloat(askedRate(r, t), 'f', 1, 64)))
		}
		for _, th := range t.Thresholds {
			mark := "met"
			if !th.Passed {
				mark = "MISSED"
			}
			s.add(i, fmt.Sprintf("%s: threshold %s %s (%s)", label, th.Expr, mark, th.Actual))
		}
	}
	if r.Interrupted {
		s.lines = append(s.lines, "interrupted: partial results, keys not read back")
	}
	return s
}

// statusCodes says a service's answers by HTTP status, as hey's status
// code distribution does, lowest code first, and the requests that got no
// HTTP answer at all; "" for a store that is not a service.
func statusCodes(t *results.LoadTarget) string {
	var parts []string
	var answered int64
	for _, code := range slices.Sorted(maps.Keys(t.StatusCodes)) {
		parts = append(parts, fmt.Sprintf("%d ×%d", code, t.StatusCodes[code]))
		answered += t.StatusCodes[code]
	}
	if len(parts) > 0 && t.Sent > answered {
		parts = append(parts, fmt.Sprintf("no answer ×%d", t.Sent-answered))
	}
	return strings.Join(parts, ", ")
}

// askedRate is the mean rate the schedule asked for over the time the
// target was loaded.
func askedRate(r *results.LoadResult, t *results.LoadTarget) float64 {
	var n, d float64
	from := r.Schedule.Start
	for _, s := range r.Schedule.Stages {
		n += (from + s.Rate) / 2 * s.Duration.Seconds()
		d += s.Duration.Seconds()
		from = s.Rate
	}
	if r.Requests > 0 || d == 0 {
		return from
	}
	return n / d
}

func errorsCell(t *results.LoadTarget) string {
	if t.Errors == 0 {
		return "0"
	}
	asked := t.Sent + t.Dropped
	return fmt.Sprintf("%d (%s)", t.Errors, results.Percent(float64(t.Errors)/float64(max(asked, 1))))
}

// loadVerdictCell is the rule's verdict in capitals where the target let
// the load down, as a run's table has it.
func loadVerdictCell(t *results.LoadTarget, failed, interrupted bool) string {
	v := t.Verdict()
	switch {
	case t.Error != "":
		return "ERROR"
	case interrupted && t.Keys.Trials == 0:
		return "interrupted"
	case failed && v == "broken":
		return "BROKEN, expected to hold"
	case failed:
		return "RACE NOT SHOWN"
	case v == "inconclusive" && t.Strict:
		return "INCONCLUSIVE"
	case v == "broken":
		return "broken (expected)"
	}
	if n := t.ThresholdsMissed(); n > 0 {
		return v + ", THRESHOLD MISSED"
	}
	return v
}

func renderLoadTable(b *bytes.Buffer, r *results.LoadResult, width int) error {
	s := summarizeLoad(r)
	heading := r.Scenario + " under load"
	if r.Rule != "" {
		heading += " — " + r.Rule
	}
	b.WriteString(wrapLine(heading, width) + "\n" + wrapLine(s.scale, width) + "\n\n")
	var left []string
	if err := fitLoadGrid(b, speedColumns, s.speed, width, &left); err != nil {
		return err
	}
	b.WriteString("\nthe rule after the load, each key read back:\n")
	if err := fitLoadGrid(b, ruleColumns, s.rule, width, &left); err != nil {
		return err
	}
	lines := s.lines
	if len(left) > 0 {
		lines = append(lines, "left out to fit the terminal: "+strings.Join(left, ", ")+" ({Wide} shows every column)")
	}
	if len(lines) > 0 {
		b.WriteByte('\n')
		for _, l := range lines {
			b.WriteString(wrapLine(l, width) + "\n")
		}
	}
	return nil
}

// fitLoadGrid draws a load table fitted to width, adding the titles of
// the columns it left out to left.
func fitLoadGrid(b *bytes.Buffer, cols []column, rows [][]string, width int, left *[]string) error {
	keep, fitted := fitColumns(cols, rows, width)
	kept := make([]column, len(keep))
	for k, j := range keep {
		kept[k] = cols[j]
	}
	for j, c := range cols {
		if !slices.Contains(keep, j) && !slices.Contains(*left, c.title) {
			*left = append(*left, c.title)
		}
	}
	return writeGrid(b, kept, fitted, false)
}

func renderLoadMarkdown(b *bytes.Buffer, r *results.LoadResult) error {
	s := summarizeLoad(r)
	b.WriteString("### " + escapeMarkdown(r.Scenario) + " under load\n\n")
	if r.Rule != "" {
		b.WriteString("*" + escapeMarkdown(r.Rule) + "*\n\n")
	}
	b.WriteString(escapeMarkdown(s.scale) + "\n\n")
	b.WriteString(loadOutcome(r) + "\n\n")
	esc := func(rows [][]string) [][]string {
		out := make([][]string, len(rows))
		for i, row := range rows {
			for _, c := range row {
				out[i] = append(out[i], escapeMarkdown(c))
			}
		}
		return out
	}
	if err := writeGrid(b, speedColumns, esc(s.speed), true); err != nil {
		return err
	}
	b.WriteString("\n")
	if err := writeGrid(b, ruleColumns, esc(s.rule), true); err != nil {
		return err
	}
	if len(s.lines) > 0 {
		b.WriteByte('\n')
		for _, l := range s.lines {
			b.WriteString("- " + escapeMarkdown(l) + "\n")
		}
	}
	return nil
}

// loadOutcome is the markdown's bottom line, as the exit code says it.
func loadOutcome(r *results.LoadResult) string {
	fs := r.Shortfalls()
	if len(fs) == 0 {
		return "**as expected:** every target kept its expectation and every threshold"
	}
	var words []string
	for _, f := range fs {
		words = append(words, escapeMarkdown(f.Why))
	}
	lead := "**not as expected:** "
	if !r.Failed() {
		lead = "**no verdict:** "
	}
	return lead + strings.Join(words, "; ")
}

func renderLoadJSON(b *bytes.Buffer, r *results.LoadResult) error {
	doc := *r
	if doc.Schema == "" {
		doc.Schema = results.LoadSchemaVersion
	}
	enc := json.NewEncoder(b)
	enc.SetIndent("", "  ")
	enc.SetEscapeHTML(false)
	if err := enc.Encode(&doc); err != nil {
		return fmt.Errorf("encode load result: %w", err)
	}
	return nil
}

// renderLoadJUnit writes one suite per load, with a case per target for
// the rule and a case per target and threshold: CI shows which condition
// failed, not only that one did.
func renderLoadJUnit(b *bytes.Buffer, rs []*results.LoadResult) error {
	doc := junitSuites{Name: "racelab load"}
	for _, r := range rs {
		s := summarizeLoad(r)
		suite := junitSuite{Name: r.Scenario + " under load", Properties: []junitProperty{
			{"scenario", r.Scenario}, {"rule", r.Rule}, {"load", s.scale}, {"schema", results.LoadSchemaVersion}}}
		fs := r.Shortfalls()
		var d time.Duration
		for i := range r.Targets {
			t := &r.Targets[i]
			label := s.labels[i]
			d = max(d, t.Elapsed)
			counts := fmt.Sprintf(", counted %d, lost %d, over %d", t.Counted, t.Keys.Lost, t.Keys.Over)
			if r.Uncounted {
				counts = ""
			}
			text := fmt.Sprintf("sent %d, answered %d (%.0f/s), errors %d; p50 %s, p99 %s, max %s\nkeys %d: allowed %d%s\n%s\n",
				t.Sent, t.Answered, t.Throughput(), t.Errors, lat(t.Latency.P50, true), lat(t.Latency.P99, true), lat(t.Latency.Max, true),
				t.Keys.Trials, t.Allowed, counts, strings.Join(s.own[i], "\n"))
			c := junitCase{Name: label + ": " + r.Rule, Classname: "racelab.load." + r.Scenario, Time: seconds(t.Elapsed)}
			for _, f := range fs {
				if f.Target != label || f.Kind == results.ThresholdShortfall {
					continue
				}
				switch f.Kind {
				case results.RuleShortfall:
					c.Failure = &junitProblem{Message: f.Why, Type: "rule", Text: text}
				case results.InconclusiveShortfall:
					c.Error = &junitProblem{Message: f.Why, Type: "inconclusive", Text: text}
				default:
					c.Error = &junitProblem{Message: f.Why, Type: "error", Text: text}
				}
			}
			if c.Failure == nil && c.Error == nil {
				c.SystemOut = &junitOut{Text: text}
			}
			suite.Cases = append(suite.Cases, c)
			for _, th := range t.Thresholds {
				tc := junitCase{Name: label + ": " + th.Expr, Classname: "racelab.load." + r.Scenario + ".threshold", Time: seconds(t.Elapsed)}
				if th.Passed {
					tc.SystemOut = &junitOut{Text: "measured " + th.Actual + "\n"}
				} else {
					tc.Failure = &junitProblem{Message: th.Why, Type: "threshold", Text: "measured " + th.Actual + "\n"}
				}
				suite.Cases = append(suite.Cases, tc)
			}
		}
		for _, c := range suite.Cases {
			suite.Tests++
			if c.Failure != nil {
				suite.Failures++
			}
			if c.Error != nil {
				suite.Errors++
			}
		}
		suite.Time = seconds(d)
		doc.add(suite, d)
	}
	return doc.write(b)
}
