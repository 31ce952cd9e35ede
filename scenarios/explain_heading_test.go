package scenarios_test

import (
	"context"
	"strings"
	"testing"

	"github.com/racelab/racelab/scenarios/engine"
	"github.com/racelab/racelab/scenarios/scenariostest"
)

// TestExplainHeadingSaysWhatShowed checks that the first replay is titled
// "The race" only when the race showed: a service given as the race that
// holds (here the actor, as a URL that holds would) is titled for what its
// lanes show.
func TestExplainHeadingSaysWhatShowed(t *testing.T) {
	sc := scenariostest.Lookup(t, "ten-hits-one-view")
	for _, tc := range []struct{ target, want string }{
		{"kv", "The race, replayed on kv (10 requests at once, seed 7)"},
		{"actor", "The race did not show on actor (10 requests at once, seed 7)"},
	} {
		e, err := engine.Explain(context.Background(), &engine.Explainer{Scenario: sc, Target: tc.target, Fixed: "sqlite", Seed: 7})
		if err != nil {
			t.Fatalf("%s: %v", tc.target, err)
		}
		if got := e.Replays[0].Heading; !strings.HasPrefix(got, tc.want) {
			t.Errorf("%s: first heading %q, want %q", tc.target, got, tc.want)
		}
	}
}
