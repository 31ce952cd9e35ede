package scenarios

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"go.uber.org/goleak"

	"github.com/racelab/racelab/scenarios/engine"
	"github.com/racelab/racelab/scenarios/results"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// TestBurstOverlaps proves the burst is simultaneous: every call waits until
// all n calls are in flight, which only happens if none finished before the
// last one started.
func TestBurstOverlaps(t *testing.T) {
	for _, n := range []int{1, 2, 10, 100, 500} {
		var inFlight atomic.Int64
		all := make(chan struct{})
		// Every request waits until all n are in flight at once. A burst
		// fired one request after another never gets there: each request
		// then fails after the short timeout, and the test says why
		// instead of hanging.
		reqs := engine.Burst(context.Background(), n, 2*time.Second, func(ctx context.Context, i int) engine.Answer {
			if inFlight.Add(1) == int64(n) {
				close(all)
			}
			select {
			case <-all:
				return engine.Answer{Outcome: results.Allowed, Value: int64(i)}
			case <-ctx.Done():
				return engine.Answer{Err: fmt.Errorf("request %d waited 2s and only %d of %d requests were ever in flight together: the burst is not simultaneous", i, inFlight.Load(), n)}
			}
		})
		if got := len(reqs); got != n {
			t.Fatalf("n=%d: got %d requests, want %d", n, got, n)
		}
		for i, r := range reqs {
			if r.Outcome != results.Allowed || r.Index != i || r.Value != int64(i) {
				t.Errorf("n=%d: slot %d = %+v, want allowed, index and value %d", n, i, r, i)
			}
			if r.Invoke < 0 || r.Return < r.Invoke {
				t.Errorf("n=%d: slot %d instants invoke=%v return=%v out of order", n, i, r.Invoke, r.Return)
			}
		}
		if s := engine.ReleaseSpread(reqs); s < 0 {
			t.Errorf("n=%d: negative release spread %v", n, s)
		}
	}
}

// TestBurstFailuresAreData checks that a target's failures (an error, a
// timeout, a panic) land in the request's slot instead of stopping the run.
func TestBurstFailuresAreData(t *testing.T) {
	boom := errors.New("connection refused")
	reqs := engine.Burst(context.Background(), 4, 20*time.Millisecond, func(ctx context.Context, i int) engine.Answer {
		switch i {
		case 0:
			return engine.Answer{Outcome: results.Allowed, Value: 1}
		case 1:
			return engine.Answer{Err: boom}
		case 2:
			<-ctx.Done() // outlives its timeout
			return engine.Answer{Err: ctx.Err()}
		default:
			panic("store bug")
		}
	})
	want := []struct {
		outcome results.Outcome
		err     string
	}{
		{results.Allowed, ""},
		{results.Errored, "connection refused"},
		{results.Errored, "context deadline exceeded"},
		{results.Errored, "panic in target: store bug"},
	}
	for i, w := range want {
		if reqs[i].Outcome != w.outcome || reqs[i].Error != w.err {
			t.Errorf("slot %d = %s %q, want %s %q", i, reqs[i].Outcome, reqs[i].Error, w.outcome, w.err)
		}
	}
}

func TestReleaseSpread(t *testing.T) {
	reqs := []results.Request{{Invoke: 30}, {Invoke: 10}, {Invoke: 25}}
	if got, want := engine.ReleaseSpread(reqs), time.Duration(20); got != want {
		t.Errorf("releaseSpread = %v, want %v", got, want)
	}
}

func BenchmarkBurst(b *testing.B) {
	for _, n := range []int{10, 100} {
		b.Run(fmt.Sprintf("n=%d", n), func(b *testing.B) {
			for b.Loop() {
				engine.Burst(context.Background(), n, time.Second, func(context.Context, int) engine.Answer {
					return engine.Answer{Outcome: results.Allowed}
				})
			}
		})
	}
}

// Two targets of one name are told apart in what their trials say, as in
// the table: by their full spec.
func TestTrialsNameTargetsAsReportsDo(t *testing.T) {
	sc, _ := Lookup("ten-hits-one-view")
	res, err := engine.Run(context.Background(), engine.Plan{Scenario: sc, Targets: []string{"kv", "kv?cache-ttl=30s"}, Trials: 3, Seed: 1})
	if err != nil {
		t.Fatal(err)
	}
	for i, want := range []string{"kv: ", "kv?cache-ttl=30s: "} {
		tr := res.Targets[i]
		if len(tr.Trials) == 0 || !tr.Trials[0].Broken {
			t.Fatalf("%s: %d trials, first broken %v; want the race shown", tr.Spec, len(tr.Trials), len(tr.Trials) > 0 && tr.Trials[0].Broken)
		}
		if why := tr.Trials[0].Why; !strings.HasPrefix(why, want) {
			t.Errorf("%s: %q; want it to start %q", tr.Spec, why, want)
		}
	}
}

// TestSequentialTrialsNeverStraddleMidnight: six downloads in a row, one
// trial after another for more than a virtual day, never let a trial run
// across UTC midnight (see untilDayFits); the actor then holds in every
// trial.
func TestSequentialTrialsNeverStraddleMidnight(t *testing.T) {
	// Six downloads 3 s apart take 15 s of virtual time: 6,000 trials
	// span more than a day, so they pass midnight wherever they start.
	res, err := engine.Run(context.Background(), engine.Plan{Scenario: sixBecomeFour, Targets: []string{"actor"}, Sequential: true, Trials: 6000, Seed: 7})
	if err != nil {
		t.Fatal(err)
	}
	if s := res.Targets[0].Summary(); s.Broken != 0 || s.Trials != 6000 {
		t.Errorf("actor, six in a row over a virtual day: %d of %d trials broke (%s)", s.Broken, s.Trials, s.FirstWhy)
	}
}
