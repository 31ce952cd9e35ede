package httpapi_test

import (
	"context"
	"errors"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/racelab/racelab/targets/httpapi"
	"github.com/racelab/racelab/targets/httpapi/burst"
	"github.com/racelab/racelab/targets/httpapi/server"
	"github.com/racelab/racelab/targets/storetest"
)

// slowWarmUp serves the contract over an actor store, but makes every GET
// of the base URL (the client's warm-up request) wait for delay first.
func slowWarmUp(t *testing.T, delay time.Duration) string {
	t.Helper()
	contract := server.New(open(t, "actor").Store)
	return serveHandler(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method == http.MethodGet && r.URL.Path == "/" {
			select {
			case <-time.After(delay):
			case <-r.Context().Done():
				return
			}
		}
		contract.ServeHTTP(w, r)
	}))
}

var allModes = []httpapi.Sync{httpapi.SyncAuto, httpapi.SyncH2, httpapi.SyncLastByte, httpapi.SyncNone}

// TestSilentServerGivesUpAtDialTimeout: against a service that accepts and
// never answers, Prepare fails after DialTimeout in every mode, over http
// and https, with an error that says so, and not once per round of
// connections: 20 connections are more than are opened at once. The
// cases run one after another, so that each is timed on its own.
func TestSilentServerGivesUpAtDialTimeout(t *testing.T) {
	const wait = 500 * time.Millisecond
	addr := storetest.SilentListener(t)
	for _, scheme := range []string{"http", "https"} {
		for _, mode := range allModes {
			t.Run(scheme+"/"+string(mode), func(t *testing.T) {
				c := client(t, scheme+"://"+addr, httpapi.Config{Wire: burst.Config{Sync: mode, DialTimeout: wait}})
				start := time.Now()
				err := c.Prepare(context.Background(), 20)
				took := time.Since(start)
				if err == nil || !errors.Is(err, context.DeadlineExceeded) || !strings.Contains(err.Error(), "no answer within 500ms") {
					t.Fatalf("Prepare = %v; want an error saying no answer within 500ms", err)
				}
				if took < wait || took > wait+time.Second {
					t.Errorf("Prepare gave up after %s; want %s, within a second", took, wait)
				}
				t.Logf("gave up after %s: %v", took.Round(time.Millisecond), err)
			})
		}
	}
}

// TestWarmUpEndsWithTheContext: an interrupted run does not sit out the
// DialTimeout of a silent service (a minute here). The bound on the time
// after the cancel is loose because a loaded CI machine running -race
// needs it; a warm-up that ignored the context would take the minute.
func TestWarmUpEndsWithTheContext(t *testing.T) {
	addr := storetest.SilentListener(t)
	for _, mode := range allModes {
		t.Run(string(mode), func(t *testing.T) {
			t.Parallel()
			c := client(t, "http://"+addr, httpapi.Config{Wire: burst.Config{Sync: mode, DialTimeout: time.Minute}})
			ctx, cancel := context.WithCancel(context.Background())
			time.AfterFunc(200*time.Millisecond, cancel)
			start := time.Now()
			err := c.Prepare(ctx, 20)
			if took := time.Since(start); took > 3*time.Second {
				t.Errorf("Prepare returned %s after the start, %s after the cancel", took, took-200*time.Millisecond)
			}
			if !errors.Is(err, context.Canceled) {
				t.Errorf("Prepare = %v; want context.Canceled", err)
			}
		})
	}
}

// TestSlowWarmUpWithinDialTimeout: a service whose warm-up takes longer
// than a short DialTimeout fails it, and succeeds with a longer one, in
// every mode: the limit is the one the client was given. The long one
// leaves a wide margin, for loaded CI machines.
func TestSlowWarmUpWithinDialTimeout(t *testing.T) {
	const delay = time.Second
	base := slowWarmUp(t, delay)
	for _, mode := range allModes {
		t.Run(string(mode), func(t *testing.T) {
			t.Parallel()
			short := client(t, base, httpapi.Config{Wire: burst.Config{Sync: mode, DialTimeout: 300 * time.Millisecond}})
			if err := short.Prepare(context.Background(), 4); !errors.Is(err, context.DeadlineExceeded) {
				t.Errorf("DialTimeout 300ms: Prepare = %v; want no answer within 300ms", err)
			}
			long := client(t, base, httpapi.Config{Wire: burst.Config{Sync: mode, DialTimeout: 8 * time.Second}})
			if err := long.Prepare(context.Background(), 4); err != nil {
				t.Errorf("DialTimeout 8s: Prepare = %v; want the %s warm-up to succeed", err, delay)
			}
		})
	}
}

// TestTwelveSecondWarmUp is the case that once failed on a fixed 10 s
// limit: a warm-up of 12 s succeeds within a DialTimeout of 30 s.
func TestTwelveSecondWarmUp(t *testing.T) {
	if testing.Short() {
		t.Skip("takes 12 s")
	}
	t.Parallel()
	base := slowWarmUp(t, 12*time.Second)
	start := time.Now()
	tr := play(t, "ten-hits-one-view", base, 10, 1, httpapi.Config{Wire: burst.Config{DialTimeout: 30 * time.Second}})
	if tr.Error != "" || len(tr.Trials) != 1 || tr.Trials[0].Counted != 10 {
		t.Fatalf("run after a 12 s warm-up: error %q, %d trials; want one trial counting 10", tr.Error, len(tr.Trials))
	}
	if took := time.Since(start); took < 12*time.Second {
		t.Errorf("the run took %s; the warm-up alone takes 12 s", took)
	}
}
