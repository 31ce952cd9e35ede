package pace

import (
	"errors"
	"fmt"
	"iter"
	"math"
	"math/rand/v2"
	"strconv"
	"strings"
	"time"
)

// Rate is arrivals per second.
type Rate float64

// MaxRate bounds any rate racelab paces: a million arrivals a second is
// past what one machine sends, and keeps the arithmetic exact enough.
const MaxRate Rate = 1_000_000

// ParseRate reads a rate written as a count per unit: "2000/s", "90/m",
// "3600/h", or a bare number of arrivals per second ("20").
func ParseRate(s string) (Rate, error) {
	num, unit, found := strings.Cut(strings.TrimSpace(s), "/")
	per := time.Second
	if found {
		switch strings.TrimSpace(unit) {
		case "s", "1s", "sec":
		case "m", "1m", "min":
			per = time.Minute
		case "h", "1h":
			per = time.Hour
		default:
			d, err := time.ParseDuration(strings.TrimSpace(unit))
			if err != nil || d <= 0 {
				return 0, fmt.Errorf("rate %q: unit %q is not s, m, h or a duration; want e.g. 2000/s", s, unit)
			}
			per = d
		}
	}
	n, err := strconv.ParseFloat(strings.TrimSpace(num), 64)
	if err != nil || math.IsNaN(n) || math.IsInf(n, 0) || n < 0 {
		return 0, fmt.Errorf("rate %q is not a number of arrivals per unit; want e.g. 2000/s", s)
	}
	r := Rate(n / per.Seconds())
	if r > MaxRate {
		return 0, fmt.Errorf("rate %q is above %s, the most racelab paces", s, MaxRate)
	}
	return r, nil
}

// String writes the rate per second, as ParseRate reads it.
func (r Rate) String() string {
	return strconv.FormatFloat(float64(r), 'f', -1, 64) + "/s"
}

// Stage moves the rate linearly to Target over Duration.
type Stage struct {
	Duration time.Duration `json:"duration_ns"`
	Target   Rate          `json:"target"`
}

// ParseStages reads stages written DURATION:RATE, comma separated:
// "30s:100/s,1m:500/s" ramps to 100/s over 30 s, then to 500/s over a
// minute.
func ParseStages(s string) ([]Stage, error) {
	if strings.TrimSpace(s) == "" {
		return nil, errors.New("no stages; want e.g. 30s:100/s,1m:500/s")
	}
	var out []Stage
	for part := range strings.SplitSeq(s, ",") {
		ds, rs, ok := strings.Cut(strings.TrimSpace(part), ":")
		if !ok {
			return nil, fmt.Errorf("stage %q is not DURATION:RATE; want e.g. 30s:100/s,1m:500/s", part)
		}
		d, err := time.ParseDuration(strings.TrimSpace(ds))
		if err != nil || d <= 0 {
			return nil, fmt.Errorf("stage %q: duration %q is not a positive duration such as 30s", part, ds)
		}
		r, err := ParseRate(rs)
		if err != nil {
			return nil, fmt.Errorf("stage %q: %w", part, err)
		}
		out = append(out, Stage{Duration: d, Target: r})
	}
	if len(out) == 0 {
		return nil, errors.New("no stages; want e.g. 30s:100/s,1m:500/s")
	}
	return out, nil
}

// Spacing is how arrivals are spread at a given rate.
type Spacing string

// The spacings.
const (
	// Even spaces arrivals exactly 1/rate apart: the steady client of
	// wrk2 and vegeta.
	Even Spacing = "even"
	// Poisson draws independent exponential gaps with mean 1/rate: many
	// independent callers, or a bot that does not keep time.
	Poisson Spacing = "poisson"
)

// ParseSpacing reads "even" or "poisson".
func ParseSpacing(s string) (Spacing, error) {
	switch Spacing(strings.ToLower(strings.TrimSpace(s))) {
	case Even:
		return Even, nil
	case Poisson:
		return Poisson, nil
	}
	return "", fmt.Errorf("arrivals %q: want even or poisson", s)
}

// Schedule is when arrivals come: from Start, through each stage in turn.
// A constant rate is one stage whose target is its start.
type Schedule struct {
	Start   Rate
	Stages  []Stage
	Spacing Spacing
	// Seed decides the Poisson gaps; an even schedule ignores it.
	Seed uint64
}

// Constant is rate r for d.
func Constant(r Rate, d time.Duration) Schedule {
	return Schedule{Start: r, Stages: []Stage{{Duration: d, Target: r}}, Spacing: Even}
}

// Duration is the schedule's length: its stages' durations summed, or
// math.MaxInt64 when the sum would overflow, so that stages too long in
// all are never taken for none (a sum that wrapped below zero).
func (s Schedule) Duration() time.Duration {
	var d time.Duration
	for _, st := range s.Stages {
		if st.Duration > math.MaxInt64-d {
			return math.MaxInt64
		}
		d += st.Duration
	}
	return d
}

// Expected is how many arrivals the schedule makes on average: the area
// under its rate, rounded down.
func (s Schedule) Expected() int64 {
	var n float64
	from := s.Start
	for _, st := range s.Stages {
		n += float64(from+st.Target) / 2 * st.Duration.Seconds()
		from = st.Target
	}
	return int64(n + 1e-9)
}

// RateAt is the rate the schedule asks for at offset t.
func (s Schedule) RateAt(t time.Duration) Rate {
	from := s.Start
	for _, st := range s.Stages {
		if t < st.Duration {
			f := float64(t) / float64(st.Duration)
			return from + Rate(f)*(st.Target-from)
		}
		t -= st.Duration
		from = st.Target
	}
	return from
}

// Arrivals yields each arrival's offset from the start, in order, until
// the schedule ends. Even spacing puts arrival k (from 1) where the area
// under the rate reaches k: a constant 10/s gives 100 ms, 200 ms, … A
// Poisson schedule is the same map applied to a unit-rate Poisson
// process, which is exactly an inhomogeneous Poisson process of the
// schedule's rate, and is the same for the same seed.
func (s Schedule) Arrivals() iter.Seq[time.Duration] {
	return func(yield func(time.Duration) bool) {
		var rng *rand.Rand
		if s.Spacing == Poisson {
			rng = rand.New(rand.NewPCG(s.Seed, 0x9e3779b97f4a7c15))
		}
		var base time.Duration // the start of the current stage
		var done float64       // arrivals' worth of area before it
		from := s.Start
		mark := 0.0 // the area the next arrival waits for
		next := func() {
			if rng != nil {
				mark += rng.ExpFloat64()
			} else {
				mark++
			}
		}
		next()
		for _, st := range s.Stages {
			if st.Duration <= 0 {
				from = st.Target
				continue
			}
			a, b := float64(from), float64(st.Target)
			sec := st.Duration.Seconds()
			area := (a + b) / 2 * sec
			for mark-done <= area+1e-9 {
				t, ok := invert(a, b, sec, mark-done)
				if !ok {
					break
				}
				if !yield(base + time.Duration(t*float64(time.Second))) {
					return
				}
				next()
			}
			base += st.Duration
			done += area
			from = st.Target
		}
	}
}

// invert finds the time t in [0, sec] at which the area under a rate
// moving linearly from a to b over sec seconds reaches m.
func invert(a, b, sec, m float64) (float64, bool) {
	if m < 0 {
		return 0, true
	}
	slope := (b - a) / sec
	var t float64
	switch {
	case math.Abs(slope) < 1e-12:
		if a <= 0 {
			return 0, false
		}
		t = m / a
	default:
		// a·t + slope·t²/2 = m
		disc := a*a + 2*slope*m
		if disc < 0 {
			return 0, false
		}
		t = (-a + math.Sqrt(disc)) / slope
	}
	if t < 0 || t > sec*(1+1e-12) {
		return 0, false
	}
	return min(t, sec), true
}
