package scenarios

import (
	"testing"

	"github.com/racelab/racelab/scenarios/engine"
)

// TestScenariosAreComplete checks that every story carries what the
// commands print: a title, a story, a rule, the fix, a line-up and a way to
// tell a trial in words.
func TestScenariosAreComplete(t *testing.T) {
	for _, sc := range All() {
		if sc.Title == "" || sc.Story == "" || sc.Rule == "" || sc.Fix == "" || len(sc.Lineup) == 0 ||
			sc.DefaultRequests < 1 || !hasModel(sc) && sc.Stream == nil || sc.Judge == nil || sc.Tell == nil || sc.Op == "" || sc.Needs == "" {
			t.Errorf("%s is missing a part: %+v", sc.Name, sc)
		}
	}
}

// burstStories are the stories whose trials are bursts: the ones the
// engine-wide tests fire at every store. A story that streams (stale-plan)
// has tests of its own.
func burstStories() []*engine.Scenario {
	var out []*engine.Scenario
	for _, sc := range All() {
		if sc.Stream == nil {
			out = append(out, sc)
		}
	}
	return out
}

func hasModel(sc *engine.Scenario) bool {
	_, ok := engine.ModelOf(sc)
	return ok
}
