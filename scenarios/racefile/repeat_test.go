package racefile_test

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

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
	res := naiveAndFixed(t, sc, trials, base(naive), base(fixed))
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

// TestRepeatInFlight: a step repeated 40 times is sent with at most
// RepeatInFlight (16) repetitions in flight, and more than one at once;
// each repetition n sends its own {{n}}, once; -n sets repeat: requests.
func TestRepeatInFlight(t *testing.T) {
	var mu sync.Mutex
	inFlight, most := 0, 0
	seen := map[string]int{}
	mux := http.NewServeMux()
	mux.HandleFunc("POST /users/{n}", func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		inFlight++
		most = max(most, inFlight)
		seen[r.PathValue("n")]++
		mu.Unlock()
		time.Sleep(20 * time.Millisecond)
		mu.Lock()
		inFlight--
		mu.Unlock()
		reply(w, 201, map[string]any{"id": "id-" + r.PathValue("n")})
	})
	mux.HandleFunc("POST /buy/{id}", func(w http.ResponseWriter, r *http.Request) { reply(w, 200, map[string]any{}) })
	mux.HandleFunc("GET /x", func(w http.ResponseWriter, r *http.Request) { reply(w, 200, map[string]any{}) })
	srv := httptest.NewServer(mux)
	defer srv.Close()
	_, sc := loadText(t, `race: r
setup:
  - request: POST /users/{{n}}
    repeat: requests
    as: users
burst:
  - request: POST /buy/{{users[i].id}}
readback:
  - request: GET /x
    as: x
rule: allowed == requests && size(users) == requests
`)
	res, err := engine.Run(context.Background(), engine.Plan{Scenario: sc, Trials: 1, Requests: 40, Targets: []string{base(srv)}})
	if err != nil {
		t.Fatal(err)
	}
	if tr := res.Targets[0]; tr.Error != "" || tr.Summary().Broken+tr.Summary().Inconclusive != 0 {
		t.Fatalf("error %q, first why %q, first error %q", tr.Error, tr.Summary().FirstWhy, tr.Summary().FirstError)
	}
	mu.Lock()
	defer mu.Unlock()
	if most > 16 || most < 2 { // the issue pins 16
		t.Errorf("%d repetitions in flight at most; want 2 to 16", most)
	}
	if len(seen) != 40 {
		t.Errorf("%d different {{n}} sent; want 40 (0 to 39)", len(seen))
	}
	for n, times := range seen {
		if times != 1 {
			t.Errorf("repetition %s sent %d times", n, times)
		}
	}
}
