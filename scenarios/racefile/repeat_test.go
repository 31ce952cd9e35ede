package racefile_test

import (
	"context"
	"encoding/json"
	"strings"
	"testing"

	"github.com/racelab/racelab/scenarios/engine"
)

// TestManyUsersOversell plays the shop race: ten users log in (a form
// POST answering Set-Cookie, repeated once per request), then each buys
// with their own session. The naive shop oversells its 3 items, the
// fixed one holds; every user logged in once a trial.
func TestManyUsersOversell(t *testing.T) {
	const trials = 5
	sc := load(t, "shop.race.yaml")
	naive, ns := newShop(t, true)
	fixed, _ := newShop(t, false)
	res, err := engine.Run(context.Background(), engine.Plan{
		Scenario: sc, Trials: trials,
		Targets:  []string{"naive=" + base(naive), "fixed=" + base(fixed)},
		ExpectOf: map[string]engine.Override{"naive": engine.OverrideBreaks},
	})
	if err != nil {
		t.Fatal(err)
	}
	n, f := &res.Targets[0], &res.Targets[1]
	for _, tr := range []int{0, 1} {
		if e := res.Targets[tr].Error; e != "" {
			t.Fatalf("%s: %s", res.Targets[tr].Label(), e)
		}
	}
	nsum, fsum := n.Summary(), f.Summary()
	if nsum.Broken < trials-1 {
		t.Errorf("naive broke in %d of %d trials; want at least %d (first error %q)", nsum.Broken, trials, trials-1, nsum.FirstError)
	}
	if fsum.Broken != 0 || fsum.Inconclusive != 0 {
		t.Errorf("fixed: %d broken, %d inconclusive; want none (first why %q, first error %q)", fsum.Broken, fsum.Inconclusive, fsum.FirstWhy, fsum.FirstError)
	}
	ns.mu.Lock()
	logins := ns.logins
	ns.mu.Unlock()
	if logins != trials*sc.DefaultRequests {
		t.Errorf("naive shop saw %d logins; want %d (one per request per trial)", logins, trials*sc.DefaultRequests)
	}
	// The sessions are secrets: the result keeps ten of Hidden, and no
	// session id anywhere.
	if rb := n.Trials[0].Readback; rb == nil || string(rb.Bodies["sid"]) != `["…","…","…","…","…","…","…","…","…","…"]` {
		t.Errorf("first trial kept sid %s; want ten of …", rb.Bodies["sid"])
	}
	saved, err := json.Marshal(res)
	if err != nil {
		t.Fatal(err)
	}
	ns.mu.Lock()
	defer ns.mu.Unlock()
	for sid := range ns.sessions {
		if strings.Contains(string(saved), sid) {
			t.Fatalf("the result shows the session %s", sid)
		}
	}
}
