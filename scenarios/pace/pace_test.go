package pace

import (
	"math"
	"slices"
	"testing"
	"time"
)

func collect(s Schedule) []time.Duration { return slices.Collect(s.Arrivals()) }

func TestConstantRateIsExact(t *testing.T) {
	for _, tc := range []struct {
		rate Rate
		d    time.Duration
	}{{2000, 10 * time.Second}, {20, time.Minute}, {3, time.Second}, {0.5, 10 * time.Second}} {
		got := collect(Constant(tc.rate, tc.d))
		want := int(float64(tc.rate) * tc.d.Seconds())
		if len(got) != want {
			t.Errorf("%v for %v: %d arrivals, want %d", tc.rate, tc.d, len(got), want)
			continue
		}
		gap := time.Duration(float64(time.Second) / float64(tc.rate))
		for i, at := range got {
			if want := time.Duration(i+1) * gap; absDur(at-want) > time.Microsecond {
				t.Fatalf("%v: arrival %d at %v, want %v", tc.rate, i+1, at, want)
			}
		}
	}
}

// TestRateAccuracyPerSecond is the pacer in virtual time: every second of
// a 500/s schedule holds 500 arrivals, and every second of a ramp holds
// the area under the rate in that second, within one.
func TestRateAccuracyPerSecond(t *testing.T) {
	s := Schedule{Start: 0, Stages: []Stage{{10 * time.Second, 1000}, {5 * time.Second, 1000}, {5 * time.Second, 200}}, Spacing: Even}
	per := map[int]int{}
	for at := range s.Arrivals() {
		per[int((at-1)/time.Second)]++ // an arrival at exactly 1 s closes the first second
	}
	for sec := 0; sec < 20; sec++ {
		mid := time.Duration(sec)*time.Second + time.Second/2
		want := float64(s.RateAt(mid)) // linear within a second: the mean is the middle
		if got := float64(per[sec]); math.Abs(got-want) > 1 {
			t.Errorf("second %d: %v arrivals, want %.0f±1", sec, got, want)
		}
	}
	if got, want := int64(len(collect(s))), s.Expected(); got != want {
		t.Errorf("%d arrivals in all, want %d", got, want)
	}
}

func TestPoissonIsSeededAndHasTheRate(t *testing.T) {
	s := Schedule{Start: 200, Stages: []Stage{{60 * time.Second, 200}}, Spacing: Poisson, Seed: 7}
	a, b := collect(s), collect(s)
	if !slices.Equal(a, b) {
		t.Fatal("the same seed gave two schedules")
	}
	s.Seed = 8
	if slices.Equal(a, collect(s)) {
		t.Fatal("two seeds gave one schedule")
	}
	// 12,000 expected; a Poisson count's sd is its square root, about 110.
	if n := float64(len(a)); math.Abs(n-12000) > 5*math.Sqrt(12000) {
		t.Errorf("%v arrivals, want 12000 within 5 sd", n)
	}
	if !slices.IsSorted(a) {
		t.Error("arrivals out of order")
	}
	// Exponential gaps: their sd is their mean (5 ms).
	var sum, sq float64
	prev := time.Duration(0)
	for _, at := range a {
		g := (at - prev).Seconds()
		sum, sq, prev = sum+g, sq+g*g, at
	}
	mean := sum / float64(len(a))
	sd := math.Sqrt(sq/float64(len(a)) - mean*mean)
	if math.Abs(sd/mean-1) > 0.05 {
		t.Errorf("gap sd/mean = %.3f, want 1 (exponential gaps)", sd/mean)
	}
}

func TestParse(t *testing.T) {
	for in, want := range map[string]Rate{"2000/s": 2000, "90/m": 1.5, "3600/h": 1, "20": 20, " 5 / s ": 5, "10/100ms": 100} {
		got, err := ParseRate(in)
		if err != nil || math.Abs(float64(got-want)) > 1e-9 {
			t.Errorf("ParseRate(%q) = %v, %v; want %v", in, got, err, want)
		}
	}
	for _, in := range []string{"", "fast", "-1/s", "10/week", "NaN/s", "2e6/s", "10/0s"} {
		if _, err := ParseRate(in); err == nil {
			t.Errorf("ParseRate(%q) took it", in)
		}
	}
	st, err := ParseStages("30s:100/s, 1m:500/s")
	if err != nil || !slices.Equal(st, []Stage{{30 * time.Second, 100}, {time.Minute, 500}}) {
		t.Errorf("ParseStages = %v, %v", st, err)
	}
	for _, in := range []string{"", "30s", "30s:", "0s:10/s", "x:10/s", "30s:10/s,,1m:5/s"} {
		if _, err := ParseStages(in); err == nil {
			t.Errorf("ParseStages(%q) took it", in)
		}
	}
}

func TestStopsWhenAsked(t *testing.T) {
	n := 0
	for range Constant(1000, time.Hour).Arrivals() {
		if n++; n == 5 {
			break
		}
	}
	if n != 5 {
		t.Fatalf("n = %d", n)
	}
}

func absDur(d time.Duration) time.Duration {
	if d < 0 {
		return -d
	}
	return d
}
