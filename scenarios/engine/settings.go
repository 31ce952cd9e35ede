package engine

import (
	"fmt"
	"time"

	"github.com/racelab/racelab/internal/usage"
	"github.com/racelab/racelab/scenarios/pace"
	"github.com/racelab/racelab/scenarios/results"
)

// Stream is how a story fires a trial as arrivals over time.
type Stream struct {
	// Schedule is the arrivals' schedule; each trial draws its own from
	// the run's seed.
	Schedule pace.Schedule
	// Align starts each trial on a multiple of Align (a window boundary),
	// Lead before it; zero starts at once.
	Align time.Duration
	// Lead is how long before the multiple of Align a trial starts.
	Lead time.Duration
	// Words says the stream for the report: "Poisson arrivals at 20/s
	// for 1m".
	Words string
	// Prelude is how long a trial's prelude takes before the arrivals
	// start (stale-plan's subscription and cancel).
	Prelude time.Duration
}

// maxRealTrial is the longest trial racelab plays on the real clock: a
// story of hours is for virtual time, where it takes milliseconds.
const maxRealTrial = time.Hour

// realTrialError says why a trial of st is too long for the real clock,
// nil when it is not. A plan that asks for the real clock (asked) is told
// to drop it: a *usage.FieldError of field RealClock, which Validate
// returns before anything runs. A target that runs on the real clock
// anyway (an http target) is told to give way to one that does not.
func (st *Stream) realTrialError(asked bool) error {
	d := st.Prelude + st.Schedule.Duration()
	switch {
	case d <= maxRealTrial:
		return nil
	case asked:
		return usage.Fieldf("RealClock", "a trial takes %s on the real clock; play it in virtual time, without {}", results.DurationWords(d))
	}
	return fmt.Errorf("a trial takes %s on the real clock; play it in virtual time, on an embedded or real store", results.DurationWords(d))
}

// arrivals are trial i's arrival offsets.
func (st *Stream) arrivals(seed int64, i int) []time.Duration {
	sch := st.Schedule
	// Each trial its own seeded draw, the same for the same run seed.
	sch.Seed = uint64(seed)*0x9e3779b97f4a7c15 + uint64(i)
	var out []time.Duration
	for at := range sch.Arrivals() {
		if at >= sch.Duration() {
			break // the next span's: one at exactly the end starts the next window
		}
		out = append(out, at)
	}
	return out
}

// wait is how long to wait at now for the next start: the next multiple
// of align, lead before it (a whole align later when that has passed).
func (st *Stream) wait(now time.Time) time.Duration {
	if st.Align <= 0 {
		return 0
	}
	ns := now.UnixNano()
	next := (ns/int64(st.Align)+1)*int64(st.Align) - int64(st.Lead)
	for next < ns {
		next += int64(st.Align)
	}
	return time.Duration(next - ns)
}

// StreamWords says a schedule in words: "Poisson arrivals at 20/s for 1m0s".
func StreamWords(s pace.Schedule) string {
	kind := "Poisson arrivals"
	if s.Spacing == pace.Even {
		kind = "evenly spaced arrivals"
	}
	return fmt.Sprintf("%s at %s for %s", kind, RateWords(s.Start), s.Duration())
}

// RateWords writes a rate per second, or per minute or hour when that
// reads better: "20/s", "6/m", "6/h".
func RateWords(r pace.Rate) string {
	if r < 1 && r*60 == pace.Rate(int64(r*60)) {
		return fmt.Sprintf("%g/m", float64(r*60))
	}
	if r < 1 && r*3600 == pace.Rate(int64(r*3600)) {
		return fmt.Sprintf("%g/h", float64(r*3600))
	}
	return fmt.Sprintf("%g/s", float64(r))
}
