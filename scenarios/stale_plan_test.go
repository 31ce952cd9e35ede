package scenarios

import (
	"bytes"
	"context"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/racelab/racelab/scenarios/engine"

	"github.com/racelab/racelab/scenarios/results"

	"github.com/racelab/racelab/targets"
	"github.com/racelab/racelab/targets/clock"
	"github.com/racelab/racelab/targets/story"
)

// Via the extension the downloads go on for hours on every store, since
// no store is asked; they stop within the accepted 12 hours after the
// server learned of the cancel, the server counts none of them, the
// object's exposure is at most the revalidation interval itself, and the
// same seed gives the same bytes.
func TestStalePlanViaExtension(t *testing.T) {
	sc := vary(t, "stale-plan", results.Settings{Via: results.ViaExtension})
	var out [2][]byte
	for i := range out {
		res := runStory(t, sc, 60, 3, "kv", "hybrid", "actor")
		var err error
		if out[i], err = json.Marshal(res); err != nil {
			t.Fatal(err)
		}
		for _, tr := range res.Targets {
			s := tr.Summary()
			exposures := s.Figures[exposureFigure]
			worst := time.Duration(exposures.Max())
			var long int
			for e, n := range exposures {
				if time.Duration(e) > time.Hour {
					long += n
				}
			}
			if s.SoftBroken != 0 || worst > DefaultExtensionBound || s.Lost != 0 {
				t.Errorf("%s: soft broken %d, worst exposure %s, lost %d; want every exposure within %s",
					tr.Target, s.SoftBroken, worst, s.Lost, DefaultExtensionBound)
			}
			if long < 30 || s.Over == 0 {
				t.Errorf("%s: %d of 60 trials exposed over an hour, %d given away; want the licence to outlive the cancel by hours",
					tr.Target, long, s.Over)
			}
			if tr.Target == "actor" && (worst > story.Revalidation || s.Broken != 0) {
				t.Errorf("actor: worst exposure %s, broken %d; want at most %s and no renewal", worst, s.Broken, story.Revalidation)
			}
			lo, _, hi, _ := tr.CountedDistribution()
			if lo != 0 || hi != 0 {
				t.Errorf("%s: the server counted %d to %d; want none: the extension does not ask it", tr.Target, lo, hi)
			}
		}
	}
	if !bytes.Equal(out[0], out[1]) {
		t.Error("two runs of the same seed differ")
	}
}

// A licence that falls due just after the cancel is renewed by a server
// still reading the cached plan: the hard rule's break, which an object
// that owns the plan never makes.
func TestExtensionRenewsFromStalePlan(t *testing.T) {
	ctx := context.Background()
	for _, c := range []struct {
		target  string
		renewed bool
	}{{"kv", true}, {"actor", false}} {
		tg, err := targets.Open(ctx, c.target, targets.WithVirtualTime(true), targets.WithSeed(1))
		if err != nil {
			t.Fatal(err)
		}
		v := tg.Store.(targets.Clocked).Clock().(*clock.Virtual)
		e := newExtension(tg.Store.(story.Plans), tg.Store)
		var granted bool
		var value int64
		var derr error
		err = v.Run(ctx, 1, func(ctx context.Context, _ int) {
			const key = "subscriber-1"
			sleep := func(d time.Duration) error { return v.Sleep(ctx, d) }
			if derr = e.Subscribe(ctx, key); derr != nil {
				return
			}
			if _, derr = e.validate(ctx, key); derr != nil {
				return
			}
			// Pages keep the server's cached read warm until the cancel,
			// twelve hours after the licence was granted.
			if derr = sleep(story.Revalidation - time.Minute); derr != nil {
				return
			}
			if derr = browseAndCancel(e, ctx, key, 5*time.Second, sleep); derr != nil {
				return
			}
			// The licence is due now; the server's cache is 5 s old.
			granted, value, derr = e.Download(ctx, key, DailyLimit)
		})
		tg.Close()
		if err != nil || derr != nil {
			t.Fatalf("%s: %v, %v", c.target, err, derr)
		}
		if renewed := granted && value == 1; renewed != c.renewed {
			t.Errorf("%s: granted %v, renewed %v; want renewed %v", c.target, granted, value == 1, c.renewed)
		}
		tr := results.Trial{Requests: []results.Request{{Outcome: results.Allowed, Value: value, Invoke: time.Second}}, Allowed: 1}
		if !granted {
			tr = results.Trial{Requests: []results.Request{{Outcome: results.Refused}}, Refused: 1}
		}
		sc := vary(t, "stale-plan", results.Settings{Via: results.ViaExtension})
		sc.Decide(&tr, c.target)
		if tr.Broken != c.renewed || c.renewed && !strings.Contains(tr.Why, "renewed") {
			t.Errorf("%s: broken %v (%s); want %v", c.target, tr.Broken, tr.Why, c.renewed)
		}
	}
}

// --for sets how long the downloads keep coming, and the pages before the
// cancel keep pace with a short bound, so that a real-clock run against a
// short cache takes seconds.
func TestStalePlanTiming(t *testing.T) {
	sc := vary(t, "stale-plan", results.Settings{Bound: 2 * time.Second, For: 5 * time.Second, Rate: 4})
	if got := sc.Stream.Schedule.Duration(); got != 5*time.Second {
		t.Errorf("--for 5s: downloads for %s", got)
	}
	if sc.DefaultRequests != 20 {
		t.Errorf("4/s for 5s: %d requests; want 20", sc.DefaultRequests)
	}
	def := vary(t, "stale-plan", results.Settings{Via: results.ViaServer})
	if got := def.Stream.Schedule.Duration(); got != 2*time.Minute {
		t.Errorf("default: downloads for %s; want 2m", got)
	}
	ext := vary(t, "stale-plan", results.Settings{Via: results.ViaExtension})
	if got, want := ext.Stream.Schedule.Duration(), 2*DefaultExtensionBound; got != want {
		t.Errorf("via extension: downloads for %s; want %s", got, want)
	}
	if !strings.Contains(ext.Stream.Words, "6/h") {
		t.Errorf("via extension: %q; want the rate said per hour", ext.Stream.Words)
	}
}

// A trial of hours is refused on the real clock, at once and with the way
// out, rather than played for a day and a half.
func TestStalePlanHoursNotOnRealClock(t *testing.T) {
	sc := vary(t, "stale-plan", results.Settings{Via: results.ViaExtension})
	res, err := engine.Run(context.Background(), engine.Plan{Scenario: sc, Targets: []string{"kv"}, Trials: 1, Seed: 1, RealClock: true})
	if err != nil {
		t.Fatal(err)
	}
	if got := res.Targets[0].Error; !strings.Contains(got, "36h1m30s on the real clock; play it in virtual time") {
		t.Errorf("error %q; want the trial refused on the real clock", got)
	}
}
