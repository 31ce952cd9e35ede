package engine

import (
	"testing"
	"time"

	"github.com/racelab/racelab/scenarios/pace"
	"github.com/racelab/racelab/scenarios/results"
)

// An IntKnob takes its bounds and nothing past them, and records what it
// takes by name, as given.
func TestIntKnobBounds(t *testing.T) {
	k := IntKnob("stock", "copies", 1, MaxRequests, "1 to 10000 copies")
	for _, tc := range []struct {
		v  string
		ok bool
	}{{"0", false}, {"1", true}, {"2", true}, {"9999", true}, {"10000", true}, {"10001", false}, {"x", false}} {
		var s results.Settings
		err := k.Set(&s, tc.v)
		if (err == nil) != tc.ok {
			t.Errorf("stock %s: err %v; want accepted %t", tc.v, err, tc.ok)
		}
		if err != nil && err.Error() != "stock "+tc.v+": want 1 to 10000 copies" {
			t.Errorf("stock %s: %q", tc.v, err)
		}
		if got, set := s.Knob("stock"); set != tc.ok || tc.ok && got != tc.v {
			t.Errorf("stock %s: recorded %q (%t)", tc.v, got, set)
		}
	}
}

// What a knob puts in a Settings it reads back the same: a rate in a
// person's words when they are exact, else per second to the last digit.
func TestKnobsReadBackWhatTheyPut(t *testing.T) {
	rate := RateKnob("rate", "")
	for _, r := range []pace.Rate{0.1, 6.0 / 3600, 20, 7.0 / 60, 1e-3} {
		var s results.Settings
		rate.Put(&s, r)
		var err error
		if got := rate.Read(s, 0, &err); got != r || err != nil {
			t.Errorf("rate %v: put %q, read %v (%v)", r, s.Knobs["rate"], got, err)
		}
	}
	var s results.Settings
	RateKnob("rate", "").Put(&s, 0.1)
	DurationKnob("window", "", "60s").Put(&s, time.Minute)
	BoolKnob("rollover", "").Put(&s, true)
	if s.Knobs["rate"] != "6/m" || s.Knobs["window"] != "1m0s" || s.Knobs["rollover"] != "true" {
		t.Errorf("knobs %v; want 6/m, 1m0s and true", s.Knobs)
	}
	// Read keeps the first error, and reads the rest as their defaults.
	var err error
	s = results.Settings{Knobs: map[string]string{"window": "soon", "limit": "x"}}
	w := DurationKnob("window", "", "60s").Read(s, time.Second, &err)
	l := IntKnob("limit", "", 1, 0, "1 or more").Read(s, 5, &err)
	if w != time.Second || l != 5 || err == nil || err.Error() != `window "soon": want a positive duration such as 60s` {
		t.Errorf("window %s, limit %d, err %v; want the defaults and the window's error", w, l, err)
	}
}
