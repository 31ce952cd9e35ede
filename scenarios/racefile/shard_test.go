package racefile_test

import (
	"context"
	"errors"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/racelab/racelab/internal/testwait"
	"github.com/racelab/racelab/scenarios"
	"github.com/racelab/racelab/scenarios/engine"
	"github.com/racelab/racelab/scenarios/results"
	"github.com/racelab/racelab/scenarios/shards"
)

// TestShardedRaces splits each race's burst over three shards, fired
// from this process at agreed instants as three racelab processes would,
// against a naive and a fixed service, and merges the parts as racelab
// verify does. Shard 0 alone runs each trial's setup; verify reads the
// state back and judges the file's rule on every shard's answers put
// together: the naive service must break, the fixed one hold.
func TestShardedRaces(t *testing.T) {
	const trials, of = 6, 3
	// Each case sleeps through its trials' periods: they wait side by side.
	var cases []testwait.Case
	for _, file := range []string{"coupon.race.yaml", "balance.race.yaml", "signup.race.yaml", "idempotency.race.yaml", "transfer.race.yaml"} {
		cases = append(cases, testwait.Case{Name: file, Test: func(t *testing.T) {
			sc := load(t, file)
			naive, fixed := newService(t, true, true), newService(t, false, true)
			plan := engine.Plan{Scenario: sc, Trials: trials, Targets: []string{"naive=" + base(naive), "fixed=" + base(fixed)}}
			runID := "rf-" + strings.TrimSuffix(file, ".race.yaml")
			// Each trial's setup must be done before its release: on a
			// loaded machine it once took longer than 500 ms. The first
			// trial gets a period too.
			const period = 1500 * time.Millisecond
			start := time.Now().Add(period)
			parts := make([]*results.ShardResult, of)
			errs := make([]error, of)
			var wg sync.WaitGroup
			for i := range of {
				wg.Go(func() {
					s := engine.Sharding{Index: i, Of: of, RunID: runID, StartAt: start, Period: period, Host: "here"}
					parts[i], errs[i] = shards.RunShard(context.Background(), plan, s)
				})
			}
			wg.Wait()
			if err := errors.Join(errs...); err != nil {
				t.Fatal(err)
			}
			for _, p := range parts {
				if err := shards.CheckShard(p, scenarios.Find); err != nil {
					t.Fatal(err)
				}
				if p.Run.Settings == nil || p.Run.Settings.Race == nil || p.Run.Settings.Race.SHA256 == "" {
					t.Fatalf("shard %d names no race file (%+v): verify could not find the race", p.Shard, p.Run.Settings)
				}
			}
			// The merge is under test, not simultaneity (the evidence tests).
			res, err := shards.VerifyRun(context.Background(), parts, shards.VerifyPlan{Find: scenarios.Find, Evidence: engine.Evidence{MaxSpread: time.Minute}})
			if err != nil {
				t.Fatal(err)
			}
			n, f := res.Targets[0], res.Targets[1]
			if n.Error != "" || f.Error != "" {
				t.Fatalf("errors: naive %q, fixed %q", n.Error, f.Error)
			}
			ns, fs := n.Summary(), f.Summary()
			if ns.Broken < trials*3/4 {
				t.Errorf("naive broke in %d of %d merged trials; want at least %d (first why %q)", ns.Broken, ns.Trials, trials*3/4, ns.FirstWhy)
			}
			if fs.Trials != trials || fs.Broken != 0 || fs.Inconclusive != 0 {
				t.Errorf("fixed: %d trials, %d broken, %d inconclusive; want %d, none broken, all conclusive (first why %q)",
					fs.Trials, fs.Broken, fs.Inconclusive, trials, fs.FirstWhy)
			}
			if rb := n.Trials[0].Readback; rb == nil || len(rb.Answers) != sc.DefaultRequests {
				t.Errorf("the merged trial's readback %+v; want all %d answers of the three shards", rb, sc.DefaultRequests)
			}
		}})
	}
	testwait.SideBySide(t, cases...)
}

// TestShardsRefuseABurstOfCaptures: a burst that sends what the setup
// captured cannot be split, since only the shard that ran the setup
// knows it; the refusal says so, as a usage error, before anything is
// sent.
func TestShardsRefuseABurstOfCaptures(t *testing.T) {
	_, sc := loadText(t, `race: captured
setup:
  - request: POST /coupons
    as: coupon
burst:
  - request: POST /coupons/{{coupon.id}}/redeem
readback:
  - request: GET /coupons/{{coupon.id}}
    as: state
rule: state.redeemed <= 1
`)
	plan := engine.Plan{Scenario: sc, Targets: []string{"http://127.0.0.1:1"}}
	_, err := shards.RunShard(context.Background(), plan, engine.Sharding{Index: 1, Of: 2, RunID: "r1"})
	if !errors.Is(err, results.ErrUsage) || !strings.Contains(err.Error(), "its burst sends what its setup captured (coupon)") {
		t.Errorf("RunShard = %v; want a usage error saying the burst sends the setup's capture coupon", err)
	}
}
