package results

import (
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
	// Race names the race file the story was read from, when it was
	// one: no knob, but what finds the story again.
	Race *RaceFile `json:"race,omitempty"`
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
func (s Settings) Knobs() []string {
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
