package scenarios

import (
	"testing"

	"github.com/racelab/racelab/scenarios/results"
)

// TestDamageWords checks the worst-trial cell in each story's words: an
// oversold painting is one sale without a claim, said once, not "4 over,
// 4 lost".
func TestDamageWords(t *testing.T) {
	for _, tc := range []struct {
		scenario   string
		set        *results.Settings
		over, lost int64
		want       string
	}{
		{"five-checkouts", nil, 4, 4, "4 oversold"},
		{"five-checkouts", nil, 4, 5, "4 oversold, 1 more unrecorded"},
		{"five-checkouts", nil, 0, 1, "1 sale unrecorded"},
		{"five-checkouts", nil, 0, 0, ""},
		{"ten-hits-one-view", nil, 0, 9, "9 hits lost"},
		{"ten-hits-one-view", nil, 2, 9, "2 over, 9 lost"},
		{"six-become-four", nil, 1, 4, "1 over the limit, 4 never counted"},
		{"a-story-of-its-own", nil, 7, 11, "7 over, 11 lost"},
		{"a-story-of-its-own", nil, 0, 0, ""},
		{"stale-plan", &results.Settings{Knobs: map[string]string{"via": "extension"}}, 88, 0, "88 given away"},
		{"stale-plan", nil, 6, 1, "6 over, 1 lost"},
	} {
		var say func(over, lost int64) string // a story not found says nothing of its own
		if sc, err := Find(tc.scenario, tc.set); err == nil {
			say = sc.Damage
		}
		trial := results.Trial{Over: tc.over, Lost: tc.lost, Damage: "stale"}
		if trial.SetDamage(say); trial.Damage != tc.want {
			t.Errorf("%s: damage of over %d, lost %d = %q, want %q", tc.scenario, tc.over, tc.lost, trial.Damage, tc.want)
		}
	}
}
