package racefile_test

import (
	"context"
	"strings"
	"testing"

	"github.com/racelab/racelab/scenarios/engine"
	loadpkg "github.com/racelab/racelab/scenarios/load"
	"github.com/racelab/racelab/scenarios/results"
)

// TestLoadJudgesEachKey puts a closed load on a naive and a fixed service
// with races whose setup readies each key (a wallet, a bank of two
// accounts) and whose rule reads the key's own answers: every key is set
// up once before the load, and judged on its own readback at the end. Ten
// workers over two keys keep several requests in flight on each key at
// once, so the naive service breaks the rule on some key; the fixed one
// holds it on every key, with no key left unjudged.
func TestLoadJudgesEachKey(t *testing.T) {
	const keys, requests = 2, 40
	for _, file := range []string{"balance.race.yaml", "transfer.race.yaml"} {
		t.Run(file, func(t *testing.T) {
			t.Parallel()
			sc := load(t, file)
			naive, fixed := newService(t, true, false), newService(t, false, false)
			res, err := loadpkg.Load(context.Background(), loadpkg.LoadPlan{
				Scenario: sc, Targeting: engine.Targeting{Targets: []string{"naive=" + base(naive), "fixed=" + base(fixed)}, ExpectOf: map[string]engine.Override{"naive": engine.OverrideBreaks}},
				Concurrency: 10, Requests: requests, Keys: keys, Seed: 1,
			})
			if err != nil {
				t.Fatal(err)
			}
			if fs := res.Shortfalls(); len(fs) > 0 {
				t.Errorf("shortfalls: %+v", fs)
			}
			n, f := &res.Targets[0], &res.Targets[1]
			for _, lt := range []*results.LoadTarget{n, f} {
				if lt.Error != "" {
					t.Fatalf("%s: %s", lt.Target, lt.Error)
				}
				if lt.Sent != requests || lt.Keys.Trials != keys || lt.Keys.Inconclusive != 0 {
					t.Errorf("%s: sent %d, %d keys judged, %d inconclusive (first error %q); want %d, %d, 0",
						lt.Target, lt.Sent, lt.Keys.Trials, lt.Keys.Inconclusive, lt.Keys.FirstError, requests, keys)
				}
			}
			if n.Keys.Broken == 0 || !strings.Contains(n.WorstKey.Why, "broke") {
				t.Errorf("naive: %d of %d keys broke, worst key %q; want a broken one", n.Keys.Broken, n.Keys.Trials, n.WorstKey.Why)
			}
			if f.Keys.Broken != 0 || f.Verdict() != "holds" {
				t.Errorf("fixed: %d keys broke, verdict %s (%q); want none, holds", f.Keys.Broken, f.Verdict(), f.Keys.FirstWhy)
			}
			// Each key's rule counts that key's requests only: the fixed
			// service's keys add up to the load.
			if got := f.Allowed + f.Refused; got != requests {
				t.Errorf("fixed: %d allowed + refused; want %d", got, requests)
			}
		})
	}
}

// TestLoadWithoutSetupOnService: a race file with no setup (the shipped
// ten-hits-one-view) under load on racelab's own contract: the fixed store
// holds on every key, each judged on its own readback and answers.
func TestLoadWithoutSetupOnService(t *testing.T) {
	sc := load(t, "../../races/ten-hits-one-view.race.yaml")
	res, err := loadpkg.Load(context.Background(), loadpkg.LoadPlan{
		Scenario: sc, Targeting: engine.Targeting{Targets: []string{serveStore(t, "sqlite")}}, Concurrency: 8, Requests: 60, Keys: 3, Seed: 1,
	})
	if err != nil {
		t.Fatal(err)
	}
	lt := &res.Targets[0]
	if lt.Error != "" || lt.Keys.Trials != 3 || lt.Keys.Broken != 0 || lt.Keys.Inconclusive != 0 || lt.Counted != 60 {
		t.Errorf("error %q, %d keys, %d broken, %d inconclusive (first error %q), counted %d; want 3 keys holding, 60 counted",
			lt.Error, lt.Keys.Trials, lt.Keys.Broken, lt.Keys.Inconclusive, lt.Keys.FirstError, lt.Counted)
	}
}
