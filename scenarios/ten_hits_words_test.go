package scenarios

import (
	"strings"
	"testing"

	"github.com/racelab/racelab/scenarios/engine"
	"github.com/racelab/racelab/scenarios/load"
	"github.com/racelab/racelab/scenarios/results"
)

// TestTenHitsWords: the account of a trial reads as a sentence whether or
// not its requests were kept: a load's key keeps none, so it cannot say
// which totals were answered, and says nothing empty in their place.
func TestTenHitsWords(t *testing.T) {
	res := mustLoad(t, load.LoadPlan{Targeting: engine.Targeting{Targets: []string{"sqlite"}}, Concurrency: 4, Requests: 50, Keys: 1, Seed: 1})
	why := res.Targets[0].WorstKey.Why
	if want := "sqlite: 50 hits answered; 50 views stored"; why != want {
		t.Errorf("worst key of a load: %q; want %q", why, want)
	}
	reqs := make([]results.Request, 10)
	for i := range reqs {
		reqs[i] = results.Request{Outcome: results.Allowed, Value: int64(i + 1)}
	}
	for _, tc := range []struct {
		trial results.Trial
		want  string
	}{
		{results.Trial{Allowed: 10, Counted: 10, Requests: reqs}, "kv: 10 hits answered 1, 2, 3, …, 10, each total once; 10 views stored"},
		{results.Trial{Allowed: 2, Counted: 2, Requests: reqs[:2]}, "kv: 2 hits answered 1, 2, each total once; 2 views stored"},
		{results.Trial{Allowed: 0, Refused: 0, Errors: 3, Requests: make([]results.Request, 3)}, "kv: 0 hits answered; 0 views stored"},
	} {
		tc.trial.Key = "k"
		got := tenHitsOneView.Account(&tc.trial, "kv")
		if got != tc.want {
			t.Errorf("account %q; want %q", got, tc.want)
		}
		if strings.Contains(got, " ,") || strings.Contains(got, "  ") {
			t.Errorf("account %q: an empty part", got)
		}
	}
}
