package httpapi_test

import (
	"context"
	"crypto/tls"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"

	"github.com/racelab/racelab/scenarios/engine"
	"github.com/racelab/racelab/scenarios/results"
	"github.com/racelab/racelab/targets/httpapi"
	"github.com/racelab/racelab/targets/httpapi/burst"
	"github.com/racelab/racelab/targets/httpapi/server"
	"github.com/racelab/racelab/targets/storetest"
	"github.com/racelab/racelab/targets/story"
)

var syncModes = []httpapi.Sync{httpapi.SyncH2, httpapi.SyncLastByte, httpapi.SyncNone}

// TestEveryModeDeliversExactlyN fires bursts in each sync mode, over h2c
// and plain HTTP/1.1 and over TLS, and counts at the server: each burst is
// exactly N requests for its key, all answered, all counted.
func TestEveryModeDeliversExactlyN(t *testing.T) {
	const n, trials = 50, 4
	base, _ := serve(t, open(t, "actor").Store)
	tlsBase, tlsCfg := serveTLS(t, open(t, "actor").Store)
	for _, tls := range []bool{false, true} {
		for _, mode := range syncModes {
			name := fmt.Sprintf("%s/tls=%t", mode, tls)
			t.Run(name, func(t *testing.T) {
				url, cfg := base, httpapi.Config{Wire: burst.Config{Sync: mode}}
				if tls {
					url, cfg.Wire.TLS = tlsBase, tlsCfg
				}
				tr := play(t, "ten-hits-one-view", url, n, trials, cfg)
				if tr.Error != "" {
					t.Fatal(tr.Error)
				}
				for _, trial := range tr.Trials {
					if trial.Allowed != n || trial.Counted != n || trial.Broken || trial.Unsynchronized {
						t.Errorf("trial %d: allowed %d counted %d broken %t unsynchronized %t (%s); want %d, %d, holding, synchronized",
							trial.Index, trial.Allowed, trial.Counted, trial.Broken, trial.Unsynchronized, firstError(tr), n, n)
					}
					if trial.ArrivalSpread <= 0 {
						t.Errorf("trial %d: no arrival spread; the server reports arrivals", trial.Index)
					}
					if !tls {
						if got, _ := stats(t, base, "hit", trial.Key); got != n {
							t.Errorf("trial %d: the server saw %d requests for %s, want %d", trial.Index, got, trial.Key, n)
						}
					}
				}
			})
		}
	}
}

// TestAtomicStoresHoldOverManyTrials plays every story against stores that
// keep the rules, in every sync mode, ten-hits-one-view over many trials of
// 50 requests: a synchronized burst must never make a correct store look
// broken, nor lose or add a request on the way. It runs beside the other
// parallel tests, which mostly wait out warm-ups (TestTwelveSecondWarmUp's
// 12 s), so that its work fills their waits; it has its own servers and
// keys, and judges no durations.
func TestAtomicStoresHoldOverManyTrials(t *testing.T) {
	t.Parallel()
	for _, store := range []struct {
		spec   string
		trials int
	}{
		// The actor's storage latency is cut to a microsecond: it
		// serializes requests either way, and 2,500 of them need not take
		// seconds. SQLite costs more per request under the race detector.
		{"actor?storage-latency=1us", 50},
		{"sqlite", 20},
	} {
		base, _ := serve(t, open(t, store.spec).Store)
		for _, mode := range syncModes {
			for _, story := range []struct {
				name      string
				n, trials int
			}{{"ten-hits-one-view", 50, store.trials}, {"six-become-four", 12, 5}, {"five-checkouts", 5, 5}} {
				t.Run(strings.Split(store.spec, "?")[0]+"/"+string(mode)+"/"+story.name, func(t *testing.T) {
					trials := story.trials
					if testing.Short() {
						trials = min(trials, 5)
					}
					tr := play(t, story.name, base, story.n, trials, httpapi.Config{Wire: burst.Config{Sync: mode}})
					if tr.Error != "" {
						t.Fatal(tr.Error)
					}
					if len(tr.Trials) != trials || tr.Broken() > 0 {
						t.Errorf("%d of %d trials broke; first: %s %s", tr.Broken(), len(tr.Trials), whyOf(tr), firstError(tr))
					}
					for _, trial := range tr.Trials {
						if len(trial.Requests) != story.n || trial.Errors > 0 || trial.Unsynchronized {
							t.Fatalf("trial %d: %d requests, %d errors, unsynchronized %t; want %d, 0, false (%s)",
								trial.Index, len(trial.Requests), trial.Errors, trial.Unsynchronized, story.n, firstError(tr))
						}
					}
				})
			}
		}
	}
}

// TestNaiveStoreShowsTheRace runs the stories against the KV simulator
// through racelab serve: the race shows over the network as it does in
// process.
func TestNaiveStoreShowsTheRace(t *testing.T) {
	base, _ := serve(t, open(t, "kv").Store)
	for _, story := range []string{"ten-hits-one-view", "six-become-four", "five-checkouts"} {
		tr := play(t, story, base, 0, 1, httpapi.Config{})
		if tr.Error != "" {
			t.Fatal(tr.Error)
		}
		if tr.Broken() != 1 {
			t.Errorf("%s on kv over http: the rule held; want the race to show", story)
		}
	}
}

// whyOf is the first broken trial's account.
func whyOf(tr results.TargetResult) string {
	for _, t := range tr.Trials {
		if t.Broken {
			return t.Why
		}
	}
	return ""
}

// httptestH1 serves h over plain HTTP/1.1 only, as most test servers do.
func httptestH1(t *testing.T, h http.Handler) string {
	t.Helper()
	srv := httptest.NewServer(h)
	t.Cleanup(srv.Close)
	return srv.URL
}

// TestAutoPicksTheTightestSync: h2 where the server speaks it (h2c on
// http, ALPN on https), lastbyte where it speaks HTTP/1.1 only.
func TestAutoPicksTheTightestSync(t *testing.T) {
	store := open(t, "actor").Store
	h2c, _ := serve(t, store)
	tlsBase, tlsCfg := serveTLS(t, store)
	h1only := httptestH1(t, server.New(store))
	tests := []struct {
		base string
		tls  *tls.Config
		want string
	}{
		{h2c, nil, "h2"},
		{tlsBase, tlsCfg, "h2"},
		{h1only, nil, "lastbyte"},
	}
	for _, tt := range tests {
		c := client(t, tt.base, httpapi.Config{Wire: burst.Config{TLS: tt.tls}})
		if err := c.Prepare(context.Background(), 3); err != nil {
			t.Fatalf("%s: %v", tt.base, err)
		}
		if got := c.SyncMode(); got != tt.want {
			t.Errorf("auto against %s picked %s, want %s", tt.base, got, tt.want)
		}
	}
}

// TestForcedH2AgainstHTTP1 fails clearly when the server has no HTTP/2.
func TestForcedH2AgainstHTTP1(t *testing.T) {
	base := httptestH1(t, server.New(open(t, "actor").Store))
	c := client(t, base, httpapi.Config{Wire: burst.Config{Sync: httpapi.SyncH2}})
	err := c.Prepare(context.Background(), 2)
	if err == nil || !strings.Contains(err.Error(), "does not speak HTTP/2") {
		t.Fatalf("Prepare = %v, want an error saying the server does not speak HTTP/2", err)
	}
}

// TestUnreachable fails Prepare with the address that refused.
func TestUnreachable(t *testing.T) {
	addr := storetest.ClosedAddr(t)
	for _, mode := range []httpapi.Sync{httpapi.SyncAuto, httpapi.SyncH2, httpapi.SyncLastByte, httpapi.SyncNone} {
		c := client(t, "http://"+addr, httpapi.Config{Wire: burst.Config{Sync: mode}})
		if err := c.Prepare(context.Background(), 2); err == nil || !strings.Contains(err.Error(), addr) {
			t.Errorf("%s: Prepare = %v, want an error naming %s", mode, err, addr)
		}
	}
}

// TestSynchronizedIsNotEarly is the other side of the early-answer tests
// (early_internal_test.go): racelab serve's handler waits for the whole
// request, so nothing it answers is early, in either withholding mode.
func TestSynchronizedIsNotEarly(t *testing.T) {
	base, _ := serve(t, open(t, "actor").Store)
	for _, mode := range []httpapi.Sync{httpapi.SyncH2, httpapi.SyncLastByte} {
		c := client(t, base, httpapi.Config{Wire: burst.Config{Sync: mode}})
		fs := stage(t, context.Background(), c, 5, func(ctx context.Context) (story.Reply, error) {
			v, err := c.Hit(ctx, "k-"+string(mode))
			return story.Reply{OK: true, Value: v}, err
		})
		replies := make([]story.Reply, len(fs))
		errs := make([]error, len(fs))
		var wg sync.WaitGroup
		for i, f := range fs {
			wg.Go(func() { replies[i], errs[i] = f(t.Context()) })
		}
		wg.Wait()
		for i, r := range replies {
			if errs[i] != nil || r.Early || r.Arrival.IsZero() {
				t.Errorf("%s: request %d early %t, arrival %v, error %v; want not early, with an arrival", mode, i, r.Early, r.Arrival, errs[i])
			}
		}
	}
}

// TestBurstMakesTheStorysOwnRequest: an HTTP burst is made by the story's
// own request function, the one it plays on every target, not by a
// second definition of it: a player whose request is a hit sends hits,
// whatever op its scenario names, and a request it answers without the
// service (as stale-plan's extension does on a fresh licence) sends
// nothing. Every request sent is staged, in every mode, and answered with
// its arrival; the answers are the player's own.
func TestBurstMakesTheStorysOwnRequest(t *testing.T) {
	base, _ := serve(t, open(t, "actor").Store)
	ctx := context.Background()
	const n = 8
	for _, mode := range syncModes {
		c := client(t, base, httpapi.Config{Wire: burst.Config{Sync: mode}})
		key := "own-" + string(mode)
		pl := engine.Player{Do: func(ctx context.Context, k string, i int) engine.Answer {
			if i == 0 {
				return engine.AnswerOf(false, 0, nil) // answered without the service
			}
			v, err := c.Hit(ctx, k)
			return engine.AnswerOf(true, v, err)
		}}
		do, err := engine.StageBurst(ctx, pl, c, key, 0, n)
		if err != nil {
			t.Fatalf("%s: %v", mode, err)
		}
		answers := make([]engine.Answer, n)
		var wg sync.WaitGroup
		for j := range n {
			wg.Go(func() { answers[j] = do(ctx, j) })
		}
		wg.Wait()
		seen := map[int64]bool{}
		for j, a := range answers {
			switch {
			case j == 0 && (a.Outcome != results.Refused || !a.Arrival.IsZero()):
				t.Errorf("%s: request 0 %v with arrival %v; want refused without the service", mode, a.Outcome, a.Arrival)
			case j > 0 && (a.Err != nil || a.Outcome != results.Allowed || a.Arrival.IsZero() || a.Early || seen[a.Value]):
				t.Errorf("%s: request %d %v %d, arrival %v, early %t, err %v", mode, j, a.Outcome, a.Value, a.Arrival, a.Early, a.Err)
			}
			seen[a.Value] = true
		}
		if hits, _ := stats(t, base, "hit", key); hits != n-1 {
			t.Errorf("%s: the server counted %d hits, want %d", mode, hits, n-1)
		}
		if downloads, _ := stats(t, base, "download", key); downloads != 0 {
			t.Errorf("%s: %d downloads, want none: the scenario's op is not the request", mode, downloads)
		}
	}
}
