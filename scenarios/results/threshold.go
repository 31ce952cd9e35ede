package results

import (
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/HdrHistogram/hdrhistogram-go"

	"github.com/racelab/racelab/internal/usage"
)

// Threshold is one pass/fail condition on a load's figures, in racelab's
// words ("p99<250ms", "errors<1%", "lost==0", "rps>=900") or in k6's
// ("p(95)<250", "avg<200", "med<100", "rate<0.01", "count>1000").
type Threshold struct {
	// Expr is the condition as the user wrote it, spaces removed.
	Expr string
	// Metric is the figure's name as written, lower case: "p(95)", "avg".
	Metric string
	Op     string
	// Value is the bound: nanoseconds for a latency, a fraction for a
	// percentage or a rate, a count or answers a second otherwise.
	Value   float64
	Percent bool
	// figure is the figure compared, under its one name: avg is mean,
	// med is p50, count is sent, and a percentile is "p" with quantile.
	figure   string
	quantile float64
}

// The figures a threshold may name, and what each is measured in.
var thresholdMetrics = map[string]metricKind{
	"max": latencyMetric, "mean": latencyMetric, "min": latencyMetric,
	"errors": shareMetric, "refused": shareMetric, "late": shareMetric,
	"rate": fractionMetric,
	"rps":  rateMetric,
	"lost": countMetric, "over": countMetric, "broken": countMetric, "inconclusive": countMetric,
	"sent": countMetric, "answered": countMetric,
}

// k6's names for racelab's figures. k6's rate is that of its
// http_req_failed metric, the share of requests that failed; the rate of
// its http_reqs counter, answers a second, is rps here.
var thresholdAliases = map[string]string{"avg": "mean", "med": "p50", "count": "sent"}

type metricKind int

const (
	latencyMetric  metricKind = iota // a duration: p99<250ms, or milliseconds as k6 reads p(95)<250
	shareMetric                      // a count, or a share of the requests with %: errors<1%
	fractionMetric                   // a share of the requests, 0 to 1 or with %: rate<0.01
	rateMetric                       // answers a second: rps>=900
	countMetric                      // a count: lost==0
)

// ThresholdMetrics lists the metrics a threshold may name; pN and p(N)
// stand for any percentile, such as p95 or p(99.9).
func ThresholdMetrics() []string {
	var names []string
	for n := range thresholdMetrics {
		names = append(names, n)
	}
	for n := range thresholdAliases {
		names = append(names, n)
	}
	slices.Sort(names)
	return append([]string{"pN", "p(N)"}, names...)
}

// thresholdOps are the comparisons, longest first so that "<=" is not
// read as "<"; "===" is k6's spelling of "==".
var thresholdOps = []string{"===", "<=", ">=", "==", "!=", "<", ">"}

// ParseThreshold reads METRIC OP VALUE. Latencies (any percentile pN or
// p(N), avg or mean, med, min, max) take a Go duration (250ms, 1.5s) or, as
// k6 writes them, a number of milliseconds (250); errors, refused and late
// take a whole count or a percentage of the requests (1%); rate the share
// of requests that failed, as a fraction (0.01) or a percentage; rps a
// number; the key counts (lost, over, broken, inconclusive) and sent (k6's
// count), answered a number.
func ParseThreshold(s string) (Threshold, error) {
	expr := strings.Join(strings.Fields(s), "")
	bad := func(why string, args ...any) (Threshold, error) {
		// A usage error naming the field, which the caller says in its
		// own words (cmd: --threshold).
		return Threshold{}, usage.Fieldf("threshold", "{} %q: %s; want METRIC OP VALUE, e.g. 'p99<250ms', 'p(95)<250' (milliseconds, as k6), 'errors<1%%', 'rate<0.01', 'lost==0' (metrics: %s)",
			s, fmt.Sprintf(why, args...), strings.Join(ThresholdMetrics(), ", "))
	}
	i, op := -1, ""
	for _, o := range thresholdOps {
		if j := strings.Index(expr, o); j > 0 && (i < 0 || j < i) {
			i, op = j, o
		}
	}
	if i < 0 {
		return bad("no comparison (<, <=, >, >=, ==, !=)")
	}
	// A longer operator at the same place wins ("<=" over "<").
	for _, o := range thresholdOps {
		if strings.HasPrefix(expr[i:], o) && len(o) > len(op) {
			op = o
		}
	}
	metric, value := strings.ToLower(expr[:i]), expr[i+len(op):]
	if cut := strings.TrimRight(metric, "=!<>"); cut != metric {
		// "p(95)=<200": the comparison is misspelt, and what is left of
		// it is no part of the metric's name.
		return bad("%q is not a comparison: <, <=, >, >=, == or !=", expr[len(cut):i+len(op)])
	}
	t := Threshold{Expr: expr, Metric: metric, Op: op, figure: metric}
	if op == "===" {
		t.Op = "=="
	}
	if alias, ok := thresholdAliases[metric]; ok {
		t.figure = alias
	}
	kind, ok := thresholdMetrics[t.figure]
	if q, isPercentile, err := percentile(t.figure); isPercentile {
		if err != nil {
			return bad("%v", err)
		}
		kind, ok, t.figure, t.quantile = latencyMetric, true, "p", q
	}
	if !ok {
		return bad("unknown metric %q", metric)
	}
	number := func() (float64, bool) {
		v, err := strconv.ParseFloat(value, 64)
		return v, err == nil && v >= 0 && !math.IsNaN(v) && !math.IsInf(v, 0)
	}
	switch kind {
	case latencyMetric:
		if ms, ok := number(); ok {
			t.Value = ms * float64(time.Millisecond)
			break
		}
		d, err := time.ParseDuration(value)
		if err != nil || d < 0 {
			return bad("%s takes a duration such as 250ms (or milliseconds, as k6: 250), not %q", metric, value)
		}
		t.Value = float64(d)
	case shareMetric, fractionMetric:
		num, pct := strings.CutSuffix(value, "%")
		v, err := strconv.ParseFloat(num, 64)
		whole := v == math.Trunc(v)
		switch {
		case err != nil || v < 0 || math.IsNaN(v) || math.IsInf(v, 0) || pct && v > 100:
			return bad("%s takes %s, not %q", metric, map[metricKind]string{
				shareMetric:    "a count or a percentage of the requests such as 1%",
				fractionMetric: "the share of requests that failed, such as 0.01 or 1%"}[kind], value)
		case kind == fractionMetric && !pct && v > 1:
			return bad("rate is the share of requests that failed, from 0 to 1 (k6's http_req_failed), not %s; answers a second are rps", value)
		case kind == shareMetric && !pct && !whole:
			// A k6 user may mean a share (1%); racelab would count
			// requests. Refused, never guessed: errors<0.01 passing on
			// no errors at all and failing on one is worse than a usage
			// error.
			return bad("%s counts requests, and %s is no count: for a share of the requests write %s%s%.10g%% (or rate%s%s as k6 does)",
				metric, value, metric, t.Op, v*100, t.Op, value)
		}
		t.Value, t.Percent = v, pct || kind == fractionMetric
		if pct {
			t.Value = v / 100
		}
	default:
		v, ok := number()
		if !ok {
			return bad("%s takes a number, not %q", metric, value)
		}
		if kind == countMetric && v != math.Trunc(v) {
			// count>1.5 would read as count>=2 without a word.
			return bad("%s counts requests, a whole number, not %s", metric, value)
		}
		t.Value = v
	}
	return t, nil
}

// percentile reads "pN" or k6's "p(N)" as the quantile N (0 < N <= 100);
// isPercentile says whether name is written as one at all.
func percentile(name string) (q float64, isPercentile bool, err error) {
	n, ok := strings.CutPrefix(name, "p")
	if !ok || n == "" {
		return 0, false, nil
	}
	if inner, k6 := strings.CutPrefix(n, "("); k6 {
		n, ok = strings.CutSuffix(inner, ")")
		if !ok {
			return 0, true, fmt.Errorf("%s lacks its closing parenthesis: p(95)", name)
		}
	} else if n[0] < '0' || n[0] > '9' {
		return 0, false, nil
	}
	q, err = strconv.ParseFloat(n, 64)
	if err != nil || !(q > 0 && q <= 100) {
		return 0, true, fmt.Errorf("%s is no percentile: want p1 to p100, such as p95, p99.9 or p(95)", name)
	}
	return q, true, nil
}

// thresholdResult is one threshold checked on one target.
type thresholdResult struct {
	Expr string `json:"expr"`
	// Actual is the measured figure, in the threshold's own unit.
	Actual string `json:"actual"`
	Passed bool   `json:"passed"`
	// Why says in one line how it was missed; empty when it passed.
	Why string `json:"why,omitempty"`
}

// Check measures t's metric on a target's load and compares it with the
// bound.
func (t Threshold) Check(lt *LoadTarget, label string) thresholdResult {
	v, shown := t.measure(lt)
	r := thresholdResult{Expr: t.Expr, Actual: shown, Passed: compare(v, t.Op, t.Value)}
	if !r.Passed {
		r.Why = fmt.Sprintf("%s: threshold %s not met: %s was %s", label, t.Expr, t.Metric, shown)
	}
	return r
}

// measure is the figure a threshold compares, and how to show it.
func (t Threshold) measure(lt *LoadTarget) (float64, string) {
	l := lt.Latency
	lat := map[string]time.Duration{"max": l.Max, "mean": l.Mean, "min": l.Min}
	if d, ok := lat[t.figure]; ok || t.figure == "p" {
		if l.Count == 0 {
			// No answer has no latency; it must not pass "p99<250ms".
			return math.Inf(1), "no answers"
		}
		if t.figure == "p" {
			var known bool
			if d, known = t.knownPercentile(l); !known {
				if d, known = lt.Percentile(t.quantile); !known {
					// An unreadable histogram proves nothing: it must not
					// pass either.
					return math.Inf(1), "no histogram"
				}
			}
		}
		return float64(d), Round(d).String()
	}
	asked := lt.Sent + lt.Dropped
	share := map[string]int64{"errors": lt.Errors, "refused": lt.Refused, "late": lt.Late, "rate": lt.Errors}
	if n, ok := share[t.figure]; ok {
		if !t.Percent {
			return float64(n), strconv.FormatInt(n, 10)
		}
		if asked == 0 {
			return math.Inf(1), "no requests"
		}
		f := float64(n) / float64(asked)
		return f, fmt.Sprintf("%s (%d of %d)", PercentShort(f), n, asked)
	}
	switch t.figure {
	case "rps":
		r := lt.Throughput()
		return r, strconv.FormatFloat(r, 'f', 1, 64) + "/s"
	}
	s := lt.Keys
	counts := map[string]int64{"lost": s.Lost, "over": s.Over, "broken": int64(s.Broken), "inconclusive": int64(s.Inconclusive),
		"sent": lt.Sent, "answered": lt.Answered}
	n := counts[t.figure]
	return float64(n), strconv.FormatInt(n, 10)
}

// knownPercentile is a percentile the result keeps as a figure of its
// own, read off the same histogram.
func (t Threshold) knownPercentile(l Latency) (time.Duration, bool) {
	switch t.quantile {
	case 50:
		return l.P50, true
	case 90:
		return l.P90, true
	case 99:
		return l.P99, true
	case 99.9:
		return l.P999, true
	case 100:
		return l.Max, true
	}
	return 0, false
}

func compare(v float64, op string, bound float64) bool {
	switch op {
	case "<":
		return v < bound
	case "<=":
		return v <= bound
	case ">":
		return v > bound
	case ">=":
		return v >= bound
	case "==":
		return v == bound
	default:
		return v != bound
	}
}

// Round shortens a latency for people: three significant figures.
func Round(d time.Duration) time.Duration {
	// From 100s down to 1ms, a duration of at least a power of ten keeps
	// that power and the two below it; anything shorter keeps whole µs.
	for floor := 100 * time.Second; floor >= time.Millisecond; floor /= 10 {
		if d >= floor {
			return d.Round(floor / 100)
		}
	}
	return d.Round(time.Microsecond)
}

// Percentile reads the q-th percentile (0 to 100) off the target's saved
// histogram; ok is false when the histogram cannot be read or does not
// hold every answer.
func (lt *LoadTarget) Percentile(q float64) (d time.Duration, ok bool) {
	if lt.Histogram == "" {
		return 0, false
	}
	// A saved histogram is the reader's input: the decoder panics on
	// some malformed ones, which prove nothing either.
	defer func() {
		if recover() != nil {
			d, ok = 0, false
		}
	}()
	h, err := hdrhistogram.Decode([]byte(lt.Histogram))
	if err != nil || h.TotalCount() != lt.Latency.Count {
		return 0, false
	}
	return time.Duration(h.ValueAtQuantile(q)) * time.Microsecond, true
}
