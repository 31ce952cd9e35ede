package results

import (
	"errors"
	"math"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/HdrHistogram/hdrhistogram-go"
)

// loadOf is a load of 1,000 answers that took 1 ms, 2 ms, … 1,000 ms, and
// failed failed requests of sent+dropped: every percentile is known
// (p(95) is 950 ms, give or take the histogram's three figures).
func loadOf(t *testing.T, sent, failed int64) *LoadTarget {
	t.Helper()
	h := hdrhistogram.New(1, int64(time.Hour/time.Microsecond), 3) // as a load keeps them, in µs
	for ms := int64(1); ms <= 1000; ms++ {
		if err := h.RecordValue(ms * 1000); err != nil {
			t.Fatal(err)
		}
	}
	saved, err := h.Encode(hdrhistogram.V2CompressedEncodingCookieBase)
	if err != nil {
		t.Fatal(err)
	}
	q := func(p float64) time.Duration { return time.Duration(h.ValueAtQuantile(p)) * time.Microsecond }
	lat := Latency{Count: h.TotalCount(), Min: time.Duration(h.Min()) * time.Microsecond, Mean: 500500 * time.Microsecond, P50: q(50), P90: q(90), P99: q(99), P999: q(99.9), Max: q(100)}
	return &LoadTarget{Sent: sent, Answered: 1000, Allowed: 1000, Errors: failed, Elapsed: 10 * time.Second, Latency: lat, Histogram: string(saved)}
}

// TestThresholdK6Grammar: k6's way of writing a threshold means what it
// means in k6, and the same as racelab's own spelling of it.
func TestThresholdK6Grammar(t *testing.T) {
	lt := loadOf(t, 1000, 10) // 1% failed
	p95, ok := lt.Percentile(95)
	if !ok {
		t.Fatal("the fixture's histogram cannot be read")
	}
	if p95 < 940*time.Millisecond || p95 > 960*time.Millisecond {
		t.Fatalf("p95 of 1..1000 ms is %s; the fixture is off", p95)
	}
	// Bounds are written from the exact figures, in k6's milliseconds.
	ms := func(d time.Duration) string {
		return strconv.FormatFloat(float64(d)/float64(time.Millisecond), 'f', -1, 64)
	}
	maxMs := ms(lt.Latency.Max)
	for _, tc := range []struct {
		expr string
		want bool
	}{
		// A percentile k6's way, p(N) in milliseconds, on both sides of
		// its own figure: limit-1, limit, limit+1.
		{"p(95)<" + ms(p95), false},
		{"p(95)<=" + ms(p95), true},
		{"p(95)<" + ms(p95+time.Millisecond), true},
		{"p95<" + ms(p95) + "ms", false},
		{"p95<=" + ms(p95) + "ms", true},
		{"p95<=" + ms(p95-time.Microsecond) + "ms", false},
		{"p(95) < 1s", true},
		{"p(99.9)<=1s", true},
		{"p(99.9)<900ms", false},
		{"p(100)<=" + maxMs, true}, // the max
		{"p(100)<" + maxMs, false},
		{"p1>0", true},
		// avg is mean, med is p50, as in k6.
		{"avg<500", false},
		{"avg<=501", true},
		{"avg>=500ms", true},
		{"med<500ms", false},
		{"med<=501ms", true},
		{"min>=1ms", true},
		{"min>1ms", false},
		{"max<=" + maxMs, true},
		{"max<" + maxMs, false},
		// rate is the share of requests that failed, as k6's http_req_failed.
		{"rate<0.01", false},
		{"rate<=0.01", true},
		{"rate<0.011", true},
		{"rate<1%", false},
		{"rate<=1%", true},
		// count is the requests sent, as k6's http_reqs.
		{"count==1000", true},
		{"count>1000", false},
		{"count===1000", true},
		{"count>=999", true},
		// racelab's own words still mean what they meant.
		{"errors<11", true},
		{"errors<10", false},
		{"errors<=1%", true},
		{"errors<1%", false},
		{"sent==1000", true},
	} {
		th, err := ParseThreshold(tc.expr)
		if err != nil {
			t.Errorf("%s: %v", tc.expr, err)
			continue
		}
		r := th.Check(lt, "x")
		if r.Passed != tc.want {
			t.Errorf("%s on p95 %s, mean %s, 10 of 1000 failed: passed %t, want %t (measured %s)", tc.expr, p95, lt.Latency.Mean, r.Passed, tc.want, r.Actual)
		}
		if !r.Passed && (!strings.Contains(r.Why, th.Expr) || !strings.Contains(r.Why, th.Metric+" was ")) {
			t.Errorf("%s: why %q does not name the threshold and its figure", tc.expr, r.Why)
		}
	}
}

// TestThresholdSpellingsAgree: k6's spelling and racelab's of one
// condition parse to the same bound on the same figure.
func TestThresholdSpellingsAgree(t *testing.T) {
	lt := loadOf(t, 1000, 10)
	for k6, own := range map[string]string{
		"p(95)<250":   "p95<250ms",
		"p(99.9)<2.5": "p99.9<2500us",
		"avg<200":     "mean<0.2s",
		"med<100":     "p50<100ms",
		"rate<0.01":   "errors<1%",
		"count>=100":  "sent>=100",
		"lost===0":    "lost==0",
	} {
		a, errA := ParseThreshold(k6)
		b, errB := ParseThreshold(own)
		if errA != nil || errB != nil {
			t.Errorf("%s / %s: %v / %v", k6, own, errA, errB)
			continue
		}
		if a.quantile != b.quantile || a.Op != b.Op || math.Abs(a.Value-b.Value) > 1e-9*b.Value || a.Percent != b.Percent {
			t.Errorf("%s is %+v, %s is %+v; want one condition", k6, a, own, b)
		}
		if ra, rb := a.Check(lt, "x"), b.Check(lt, "x"); ra.Passed != rb.Passed || ra.Actual != rb.Actual {
			t.Errorf("%s judged %+v, %s judged %+v; want the same", k6, ra, own, rb)
		}
	}
}

// TestThresholdRefusals: what cannot be read is a usage error in one
// line naming the threshold and the way to write it, and names no flag.
func TestThresholdRefusals(t *testing.T) {
	for expr, want := range map[string][]string{
		"":            {"no comparison"},
		"p99":         {"no comparison"},
		"<5":          {"no comparison"},
		"p99<":        {"takes a duration"},
		"p99<fast":    {"takes a duration", `"fast"`},
		"p99<-1ms":    {"takes a duration"},
		"p0<1s":       {"p0 is no percentile", "p95"},
		"p101<1s":     {"p101 is no percentile"},
		"p(95<1s":     {"closing parenthesis"},
		"p()<1s":      {"is no percentile"},
		"pmax<1s":     {`unknown metric "pmax"`},
		"p9x<1s":      {"is no percentile"},
		"latency<1s":  {`unknown metric "latency"`, "p(N)", "avg", "rate", "count"},
		"errors<101%": {"percentage"},
		// A bare fraction on a count would be a count of 0.01 requests:
		// refused, with both ways of writing the share.
		"errors<0.01":  {"errors counts requests", "errors<1%", "rate<0.01"},
		"late<=0.005":  {"late<=0.5%", "rate<=0.005"},
		"refused<2.5":  {"refused<250%"},
		"rate<5":       {"from 0 to 1", "rps"},
		"rate<101%":    {"share of requests that failed"},
		"rate<x":       {"share of requests that failed"},
		"lost==-1":     {"takes a number"},
		"rps>=x":       {"takes a number"},
		"count>=lots":  {"takes a number"},
		"avg<1 second": {"takes a duration"},
	} {
		_, err := ParseThreshold(expr)
		if err == nil {
			t.Errorf("%q was taken", expr)
			continue
		}
		msg := err.Error()
		if !errors.Is(err, ErrUsage) || strings.Contains(msg, "\n") || strings.Contains(msg, "--") || !strings.Contains(msg, "threshold ") {
			t.Errorf("%q: %q; want one usage line saying threshold, naming no flag", expr, msg)
		}
		for _, w := range want {
			if !strings.Contains(msg, w) {
				t.Errorf("%q: %q; want it to say %q", expr, msg, w)
			}
		}
	}
}

// TestThresholdWithoutFigures: a figure that was not measured never
// passes: no answers, no requests, a percentile without its histogram.
func TestThresholdWithoutFigures(t *testing.T) {
	noHistogram := loadOf(t, 1000, 0)
	noHistogram.Histogram = ""
	otherHistogram := loadOf(t, 1000, 0)
	otherHistogram.Latency.Count++ // a histogram of other answers
	for _, tc := range []struct {
		expr  string
		lt    *LoadTarget
		shown string
	}{
		{"p(95)<1h", &LoadTarget{Sent: 5, Errors: 5}, "no answers"},
		{"avg<1h", &LoadTarget{Sent: 5, Errors: 5}, "no answers"},
		{"rate<=1", &LoadTarget{}, "no requests"},
		{"p(95)<1h", noHistogram, "no histogram"},
		{"p(95)<1h", otherHistogram, "no histogram"},
	} {
		th, err := ParseThreshold(tc.expr)
		if err != nil {
			t.Fatal(err)
		}
		if r := th.Check(tc.lt, "x"); r.Passed || r.Actual != tc.shown {
			t.Errorf("%s: passed %t, measured %q; want missed, %q", tc.expr, r.Passed, r.Actual, tc.shown)
		}
	}
	// The four percentiles a result keeps need no histogram.
	th, _ := ParseThreshold("p(99)<1h")
	if r := th.Check(noHistogram, "x"); !r.Passed {
		t.Errorf("p(99)<1h without a histogram: %+v; want it read off the kept p99", r)
	}
}

func TestThresholdMetricsNamesK6(t *testing.T) {
	got := strings.Join(ThresholdMetrics(), " ")
	for _, w := range []string{"pN", "p(N)", "avg", "med", "min", "max", "rate", "count", "errors", "lost", "rps"} {
		if !strings.Contains(" "+got+" ", " "+w+" ") {
			t.Errorf("ThresholdMetrics() = %s; want %s among them", got, w)
		}
	}
}
