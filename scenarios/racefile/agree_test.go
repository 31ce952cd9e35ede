package racefile_test

import (
	"context"
	"net/http/httptest"
	"testing"

	"github.com/racelab/racelab/scenarios/engine"
	"github.com/racelab/racelab/scenarios/scenariostest"
	"github.com/racelab/racelab/targets"
	"github.com/racelab/racelab/targets/httpapi/server"
)

// serveStore serves an opened store over racelab's HTTP contract, as
// racelab serve --store SPEC does, on 127.0.0.1.
func serveStore(t *testing.T, spec string) string {
	t.Helper()
	tg, err := targets.Open(context.Background(), spec)
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(server.New(tg.Store, server.WithStoreName(tg.Name())))
	t.Cleanup(func() {
		srv.Close()
		_ = tg.Close()
	})
	return srv.URL
}

// TestShippedRacesAgreeWithStories plays each shipped race file and the
// built-in story it writes down against the same served kv and sqlite:
// the verdicts agree, trial for trial in what broke.
func TestShippedRacesAgreeWithStories(t *testing.T) {
	const trials = 5
	kv, sqlite := serveStore(t, "kv"), serveStore(t, "sqlite")
	for _, story := range []string{"ten-hits-one-view", "six-become-four", "five-checkouts"} {
		t.Run(story, func(t *testing.T) {
			race := scenariostest.Lookup(t, "../races/"+story+".race.yaml")
			builtin := scenariostest.Lookup(t, story)
			verdicts := map[string][]string{}
			for _, sc := range []*engine.Scenario{builtin, race} {
				res, err := engine.Run(context.Background(), engine.Plan{
					Scenario: sc, Trials: trials, Targets: []string{"naive=" + kv, "fixed=" + sqlite},
					ExpectOf: map[string]engine.Override{"naive": engine.OverrideBreaks},
					Evidence: engine.Evidence{SkipHistory: true},
				})
				if err != nil {
					t.Fatal(err)
				}
				for _, tr := range res.Targets {
					s := tr.Summary()
					verdicts[tr.Label()] = append(verdicts[tr.Label()], tr.Verdict())
					if s.Inconclusive > 0 || tr.Error != "" {
						t.Errorf("%s on %s: %d inconclusive, error %q (first error %q)", sc.Name, tr.Label(), s.Inconclusive, tr.Error, s.FirstError)
					}
				}
			}
			for target, want := range map[string]string{"naive": "broken", "fixed": "holds"} {
				if got := verdicts[target]; len(got) != 2 || got[0] != want || got[1] != want {
					t.Errorf("%s: story then race file %v; want %s from both", target, got, want)
				}
			}
		})
	}
}
