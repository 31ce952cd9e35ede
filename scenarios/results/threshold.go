package results

import (
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"
	"time"
)

// Threshold is one pass/fail condition on a load's figures, written as
// k6 writes them: "p99<250ms", "errors<1%", "lost==0", "rps>=900".
type Threshold struct {
	// Expr is the condition as the user wrote it, spaces removed.
	Expr   string
	Metric string
	Op     string
	// Value is the bound: nanoseconds for a latency, a fraction for a
	// percentage, a count or a rate otherwise.
	Value   float64
	Percent bool
}

// The metrics a threshold may name, and what each is measured in.
var thresholdMetrics = map[string]metricKind{
	"p50": latencyMetric, "p90": latencyMetric, "p99": latencyMetric, "p99.9": latencyMetric,
	"max": latencyMetric, "mean": latencyMetric, "min": latencyMetric,
	"errors": shareMetric, "refused": shareMetric, "late": shareMetric,
	"rps":  rateMetric,
	"lost": countMetric, "over": countMetric, "broken": countMetric, "inconclusive": countMetric,
	"sent": countMetric, "answered": countMetric,
}

type metricKind int

const (
	latencyMetric metricKind = iota // a duration: p99<250ms
	shareMetric                     // a count, or a share of the requests with %: errors<1%
	rateMetric                      // answers a second: rps>=900
	countMetric                     // a count: lost==0
)

// ThresholdMetrics lists the metrics a threshold may name.
func ThresholdMetrics() []string {
	var names []string
	for n := range thresholdMetrics {
		names = append(names, n)
	}
	slices.Sort(names)
	return names
}

// thresholdOps are the comparisons, longest first so that "<=" is not
// read as "<".
var thresholdOps = []string{"<=", ">=", "==", "!=", "<", ">"}

// ParseThreshold reads METRIC OP VALUE. Latencies take a Go duration
// (250ms, 1.5s); errors, refused and late take a count or a percentage of
// the requests (1%); rps a number; the key counts (lost, over, broken,
// inconclusive) and sent, answered a whole number.
func ParseThreshold(s string) (Threshold, error) {
	expr := strings.Join(strings.Fields(s), "")
	bad := func(why string) (Threshold, error) {
		return Threshold{}, fmt.Errorf("%w: --threshold %q: %s; want METRIC OP VALUE, e.g. 'p99<250ms', 'errors<1%%', 'lost==0' (metrics: %s)",
			ErrUsage, s, why, strings.Join(ThresholdMetrics(), ", "))
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
	kind, ok := thresholdMetrics[metric]
	if !ok {
		return bad(fmt.Sprintf("unknown metric %q", metric))
	}
	t := Threshold{Expr: expr, Metric: metric, Op: op}
	switch kind {
	case latencyMetric:
		d, err := time.ParseDuration(value)
		if err != nil || d < 0 {
			return bad(fmt.Sprintf("%s takes a duration such as 250ms, not %q", metric, value))
		}
		t.Value = float64(d)
	case shareMetric:
		num, pct := strings.CutSuffix(value, "%")
		v, err := strconv.ParseFloat(num, 64)
		if err != nil || v < 0 || math.IsNaN(v) || math.IsInf(v, 0) || pct && v > 100 {
			return bad(fmt.Sprintf("%s takes a count or a percentage such as 1%%, not %q", metric, value))
		}
		t.Value, t.Percent = v, pct
		if pct {
			t.Value = v / 100
		}
	default:
		v, err := strconv.ParseFloat(value, 64)
		if err != nil || v < 0 || math.IsNaN(v) || math.IsInf(v, 0) {
			return bad(fmt.Sprintf("%s takes a number, not %q", metric, value))
		}
		t.Value = v
	}
	return t, nil
}

// ThresholdResult is one threshold judged on one target.
type ThresholdResult struct {
	Expr string `json:"expr"`
	// Actual is the measured figure, in the threshold's own unit.
	Actual string `json:"actual"`
	Passed bool   `json:"passed"`
	// Why says in one line how it was missed; empty when it passed.
	Why string `json:"why,omitempty"`
}

// Judge measures t's metric on a target's load and compares.
func (t Threshold) Judge(lt *LoadTarget, label string) ThresholdResult {
	v, shown := t.measure(lt)
	r := ThresholdResult{Expr: t.Expr, Actual: shown, Passed: compare(v, t.Op, t.Value)}
	if !r.Passed {
		r.Why = fmt.Sprintf("%s: threshold %s not met: %s was %s", label, t.Expr, t.Metric, shown)
	}
	return r
}

// measure is the figure a threshold compares, and how to show it.
func (t Threshold) measure(lt *LoadTarget) (float64, string) {
	l := lt.Latency
	lat := map[string]time.Duration{"p50": l.P50, "p90": l.P90, "p99": l.P99, "p99.9": l.P999, "max": l.Max, "mean": l.Mean, "min": l.Min}
	if d, ok := lat[t.Metric]; ok {
		if l.Count == 0 {
			// No answer has no latency; it must not pass "p99<250ms".
			return math.Inf(1), "no answers"
		}
		return float64(d), Round(d).String()
	}
	asked := lt.Sent + lt.Dropped
	share := map[string]int64{"errors": lt.Errors, "refused": lt.Refused, "late": lt.Late}
	if n, ok := share[t.Metric]; ok {
		if !t.Percent {
			return float64(n), strconv.FormatInt(n, 10)
		}
		if asked == 0 {
			return math.Inf(1), "no requests"
		}
		f := float64(n) / float64(asked)
		return f, fmt.Sprintf("%s (%d of %d)", PercentOf(f), n, asked)
	}
	switch t.Metric {
	case "rps":
		r := lt.Throughput()
		return r, strconv.FormatFloat(r, 'f', 1, 64) + "/s"
	}
	s := lt.Keys
	counts := map[string]int64{"lost": s.Lost, "over": s.Over, "broken": int64(s.Broken), "inconclusive": int64(s.Inconclusive),
		"sent": lt.Sent, "answered": lt.Answered}
	n := counts[t.Metric]
	return float64(n), strconv.FormatInt(n, 10)
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

// PercentOf writes a share with the precision small shares need: 0.05%,
// 1.2%, 37%.
func PercentOf(f float64) string {
	p := f * 100
	switch {
	case p == 0 || p >= 10:
		return strconv.FormatFloat(p, 'f', 0, 64) + "%"
	case p >= 1:
		return strconv.FormatFloat(p, 'f', 1, 64) + "%"
	default:
		return strconv.FormatFloat(p, 'g', 2, 64) + "%"
	}
}

// Round shortens a latency for people: three significant figures.
func Round(d time.Duration) time.Duration {
	switch {
	case d >= 100*time.Second:
		return d.Round(time.Second)
	case d >= 10*time.Second:
		return d.Round(100 * time.Millisecond)
	case d >= time.Second:
		return d.Round(10 * time.Millisecond)
	case d >= 100*time.Millisecond:
		return d.Round(time.Millisecond)
	case d >= 10*time.Millisecond:
		return d.Round(100 * time.Microsecond)
	case d >= time.Millisecond:
		return d.Round(10 * time.Microsecond)
	default:
		return d.Round(time.Microsecond)
	}
}
