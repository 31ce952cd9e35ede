package load

import (
	"context"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/racelab/racelab/scenarios/engine"
	"github.com/racelab/racelab/scenarios/results"
	"github.com/racelab/racelab/scenarios/scenariostest"
	"github.com/racelab/racelab/targets"
	"github.com/racelab/racelab/targets/httpapi"
	"github.com/racelab/racelab/targets/httpapi/burst"
	"github.com/racelab/racelab/targets/httpapi/httpapitest"
	"github.com/racelab/racelab/targets/httpapi/server"
)

// serveActor serves the HTTP contract over an actor on a loopback port,
// through wrap: what a test service does besides keeping the contract.
func serveActor(t *testing.T, wrap func(h http.Handler) http.HandlerFunc) string {
	t.Helper()
	tg, err := targets.Open(context.Background(), "actor", targets.WithVirtualTime(false))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { tg.Close() })
	return httpapitest.Serve(t, wrap(server.New(tg.Store)))
}

// doubleCounting serves the contract, but counts every nth hit twice
// (answering once, with the second total): a service that over-counts,
// the break a view counter can make besides losing hits.
func doubleCounting(t *testing.T, every int64) (base string, twice *atomic.Int64) {
	var n atomic.Int64
	twice = new(atomic.Int64)
	base = serveActor(t, func(h http.Handler) http.HandlerFunc {
		return func(w http.ResponseWriter, r *http.Request) {
			if r.Method == http.MethodPost && strings.HasPrefix(r.URL.Path, "/hit/") && n.Add(1)%every == 0 {
				h.ServeHTTP(httptest.NewRecorder(), r.Clone(r.Context()))
				twice.Add(1)
			}
			h.ServeHTTP(w, r)
		}
	})
	return base, twice
}

// hitsOverHTTP is the plan of a ten-hits-one-view load on base, whole
// requests over HTTP/1.1.
func hitsOverHTTP(t *testing.T, base string) LoadPlan {
	t.Helper()
	hits := scenariostest.Lookup(t, "ten-hits-one-view")
	return LoadPlan{Scenario: hits, Targeting: engine.Targeting{Targets: []string{base}, Options: []targets.Option{targets.WithHTTP(httpapi.Config{Wire: burst.Config{Sync: httpapi.SyncNone}})}}}
}

// TestLoadShowsOverCounts: a load on a service that counts some hits twice
// says how many in OVER, misses over==0, and names as its worst key one
// that broke, with its over-count.
func TestLoadShowsOverCounts(t *testing.T) {
	base, twice := doubleCounting(t, 25)
	over, err := results.ParseThreshold("over==0")
	if err != nil {
		t.Fatal(err)
	}
	p := hitsOverHTTP(t, base)
	p.Concurrency, p.Requests, p.Keys, p.Seed, p.Thresholds = 8, 300, 40, 9, []results.Threshold{over}
	res, err := Load(context.Background(), p)
	if err != nil {
		t.Fatal(err)
	}
	tg := res.Targets[0]
	if tg.Error != "" || tg.Errors != 0 {
		t.Fatalf("error %q, %d failed requests", tg.Error, tg.Errors)
	}
	if n := twice.Load(); n != 12 || tg.Keys.Over != n || tg.Counted != tg.Allowed+n || tg.Keys.Lost != 0 {
		t.Errorf("%d hits counted twice: over %d, lost %d, allowed %d, counted %d", n, tg.Keys.Over, tg.Keys.Lost, tg.Allowed, tg.Counted)
	}
	if tg.Verdict() != "broken" || tg.Keys.Broken == 0 || tg.Keys.Broken > 12 {
		t.Errorf("verdict %s, %d keys broken", tg.Verdict(), tg.Keys.Broken)
	}
	if len(tg.Thresholds) != 1 || tg.Thresholds[0].Passed {
		t.Errorf("over==0 judged %+v; want missed", tg.Thresholds)
	}
	w := tg.WorstKey
	if w.Over <= 0 || w.Counted != w.Allowed+w.Over || !strings.Contains(w.Why, "stored") {
		t.Errorf("worst key %+v: want one that broke, with its over-count", w)
	}
	if err := res.Check(); err != nil {
		t.Errorf("the result does not check: %v", err)
	}
}
