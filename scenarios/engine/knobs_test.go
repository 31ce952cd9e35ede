package engine

import (
	"testing"

	"github.com/racelab/racelab/scenarios/results"
)

// An IntKnob takes its bounds and nothing past them.
func TestIntKnobBounds(t *testing.T) {
	k := IntKnob("stock", "copies", 1, MaxRequests, "1 to 10000 copies", func(s *results.Settings) *int64 { return &s.Stock })
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
	}
}
