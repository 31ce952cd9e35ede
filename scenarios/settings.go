package scenarios

import (
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/racelab/racelab/scenarios/pace"
)

// Settings are a story's own settings, given with its own flags of
// `racelab run` (Scenario.Knobs). A zero field takes the story's default;
// Tolerance is a pointer because a tolerance of 0 is a setting of its own.
type Settings struct {
	// Stock is how many copies of each item exist (five-checkouts).
	Stock int64 `json:"stock,omitempty"`
	// Limit and Window are the rate limit: Limit requests a caller in
	// each fixed Window (six-of-five).
	Limit  int64         `json:"limit,omitempty"`
	Window time.Duration `json:"window_ns,omitempty"`
	// Tolerance is how far over the limit the soft rule lets a window go
	// (six-of-five).
	Tolerance *int64 `json:"tolerance,omitempty"`
	// Rate, when set, fires each trial as a stream of arrivals at this
	// rate instead of a burst, spaced by Arrivals (six-of-five, and
	// stale-plan's downloads after the cancel).
	Rate     pace.Rate    `json:"rate,omitempty"`
	Arrivals pace.Spacing `json:"arrivals,omitempty"`
	// Rollover starts each stream half a window before a window boundary
	// (six-of-five).
	Rollover bool `json:"rollover,omitempty"`
	// Bound is the exposure the design accepts after a cancel
	// (stale-plan).
	Bound time.Duration `json:"bound_ns,omitempty"`
	// For is how long downloads keep arriving after the cancel
	// (stale-plan).
	For time.Duration `json:"for_ns,omitempty"`
	// Via is who grants the downloads after the cancel: ViaServer, whose
	// cached read of the plan expires in seconds, or ViaExtension, whose
	// licence is revalidated every twelve hours (stale-plan).
	Via string `json:"via,omitempty"`
}

// Who grants stale-plan's downloads (Settings.Via).
const (
	ViaServer    = "server"
	ViaExtension = "extension"
)

// The knobs, by the flag that sets each.
const (
	KnobStock     = "stock"
	KnobLimit     = "limit"
	KnobWindow    = "window"
	KnobTolerance = "tolerance"
	KnobRate      = "rate"
	KnobArrivals  = "arrivals"
	KnobRollover  = "rollover"
	KnobBound     = "bound"
	KnobFor       = "for"
	KnobVia       = "via"
)

// set lists the knobs a Settings sets, in the order of the constants.
func (s Settings) set() []string {
	var out []string
	add := func(on bool, k string) {
		if on {
			out = append(out, k)
		}
	}
	add(s.Stock != 0, KnobStock)
	add(s.Limit != 0, KnobLimit)
	add(s.Window != 0, KnobWindow)
	add(s.Tolerance != nil, KnobTolerance)
	add(s.Rate != 0, KnobRate)
	add(s.Arrivals != "", KnobArrivals)
	add(s.Rollover, KnobRollover)
	add(s.Bound != 0, KnobBound)
	add(s.For != 0, KnobFor)
	add(s.Via != "", KnobVia)
	return out
}

// With is the story with settings s: itself when s sets nothing. A
// setting the story does not take is a usage error naming the stories
// that do.
func (sc *Scenario) With(s Settings) (*Scenario, error) {
	set := s.set()
	for _, k := range set {
		if !slices.Contains(sc.Knobs, k) {
			var owners []string
			for _, o := range registry {
				if slices.Contains(o.Knobs, k) {
					owners = append(owners, o.Name)
				}
			}
			return nil, fmt.Errorf("%w: --%s is a setting of %s, not %s", ErrUsage, k, strings.Join(owners, " and "), sc.Name)
		}
	}
	if len(set) == 0 || sc.vary == nil {
		return sc, nil
	}
	v, err := sc.vary(s)
	if err != nil {
		return nil, fmt.Errorf("%w: %s: %w", ErrUsage, sc.Name, err)
	}
	return v, nil
}

// Settings are the settings the story was made with; nil for a story at
// defaults that records none.
func (sc *Scenario) Settings() *Settings { return sc.settings }

// stream is how a story fires a trial as arrivals over time.
type stream struct {
	// schedule is the arrivals' schedule; each trial draws its own from
	// the run's seed.
	schedule pace.Schedule
	// align starts each trial on a multiple of align (a window boundary),
	// lead before it; zero starts at once.
	align, lead time.Duration
	// words says it for the report: "Poisson arrivals at 20/s for 1m".
	words string
	// prelude is how long a trial's prelude takes before the arrivals
	// start (stale-plan's subscription and cancel).
	prelude time.Duration
}

// maxRealTrial is the longest trial racelab plays on the real clock: a
// story of hours is for virtual time, where it takes milliseconds.
const maxRealTrial = time.Hour

// realTrialError says why a trial of st is too long for the real clock,
// nil when it is not.
func (st *stream) realTrialError() error {
	if d := st.prelude + st.schedule.Duration(); d > maxRealTrial {
		return fmt.Errorf("a trial takes %s on the real clock; play it in virtual time, on an embedded or real store without --clock real", durationWords(d))
	}
	return nil
}

// arrivals are trial i's arrival offsets.
func (st *stream) arrivals(seed int64, i int) []time.Duration {
	sch := st.schedule
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
func (st *stream) wait(now time.Time) time.Duration {
	if st.align <= 0 {
		return 0
	}
	ns := now.UnixNano()
	next := (ns/int64(st.align)+1)*int64(st.align) - int64(st.lead)
	for next < ns {
		next += int64(st.align)
	}
	return time.Duration(next - ns)
}

// streamWords says a schedule in words: "Poisson arrivals at 20/s for 1m0s".
func streamWords(s pace.Schedule) string {
	kind := "Poisson arrivals"
	if s.Spacing == pace.Even {
		kind = "evenly spaced arrivals"
	}
	return fmt.Sprintf("%s at %s for %s", kind, rateWords(s.Start), s.Duration())
}

// rateWords writes a rate per second, or per minute or hour when that
// reads better: "20/s", "6/m", "6/h".
func rateWords(r pace.Rate) string {
	if r < 1 && r*60 == pace.Rate(int64(r*60)) {
		return fmt.Sprintf("%g/m", float64(r*60))
	}
	if r < 1 && r*3600 == pace.Rate(int64(r*3600)) {
		return fmt.Sprintf("%g/h", float64(r*3600))
	}
	return fmt.Sprintf("%g/s", float64(r))
}
