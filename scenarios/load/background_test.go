package load_test

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/racelab/racelab/internal/usage"
	"github.com/racelab/racelab/scenarios"
	"github.com/racelab/racelab/scenarios/engine"
	"github.com/racelab/racelab/scenarios/load"
	"github.com/racelab/racelab/scenarios/scenariostest"
)

// Bursts fired on top of a background load still get their verdicts: kv
// breaks and sqlite holds, with the load running on the trials' own
// stores all along and its throughput reported. The rate is low enough
// for the race detector on a busy machine: pure-Go SQLite under -race
// answers a few hundred requests a second, and a load past a store's
// capacity queues up until a read-back times out, which is a finding of
// its own (the README's table), not this test's.
func TestBurstsOnTopOfLoad(t *testing.T) {
	sc := scenariostest.Lookup(t, "ten-hits-one-view")
	bg := load.New(load.Plan{Rate: 25, Keys: 20, OnKey: true, Seed: 3}, sc)
	res, err := engine.Run(t.Context(), engine.Plan{Scenario: sc, Targets: []string{"kv", "sqlite"}, Trials: 4, Seed: 3, RealClock: true,
		Background: bg.Start})
	if err != nil {
		t.Fatal(err)
	}
	kv, sqlite := res.Targets[0].Summary(), res.Targets[1].Summary()
	if e := res.Targets[0].Error + res.Targets[1].Error; e != "" {
		t.Fatalf("a target failed: %s", e)
	}
	if kv.Broken == 0 {
		t.Errorf("kv under load: none of %d trials broke; want the race shown", kv.Trials)
	}
	if sqlite.Broken != 0 || sqlite.Trials-sqlite.Inconclusive == 0 {
		t.Errorf("sqlite under load: %d of %d trials broke, %d inconclusive; want it held, with proof", sqlite.Broken, sqlite.Trials, sqlite.Inconclusive)
	}
	sums := bg.Summaries()
	if len(sums) != 2 {
		t.Fatalf("%d summaries, want one per target", len(sums))
	}
	for i, want := range []string{"kv", "sqlite"} {
		s := sums[i]
		if s.Target != want || s.Error != "" {
			t.Errorf("summary %d: target %q, error %q; want %s without error", i, s.Target, s.Error, want)
		}
		if s.Answered == 0 || s.Throughput() <= 0 || s.P99 <= 0 {
			t.Errorf("%s: %d answered, %.1f/s, p99 %v; want the load's answers counted", s.Target, s.Answered, s.Throughput(), s.P99)
		}
		// kv's trials last at least its simulated latencies (a cold read
		// and a write, tens of ms each): four of them span several of the
		// reader's 40 ms arrivals. SQLite's may all fall between two.
		if s.Target == "kv" && s.KeyReads == 0 {
			t.Errorf("%s: no read of a trial's own key; OnKey asked for them", s.Target)
		}
		if s.KeyErrors > s.KeyReads {
			t.Errorf("%s: %d errors in %d reads of the trials' keys", s.Target, s.KeyErrors, s.KeyReads)
		}
	}
	var out strings.Builder
	if err := load.Write(&out, sums); err != nil {
		t.Fatal(err)
	}
	if got := out.String(); !strings.HasPrefix(got, "background on kv: 25/s asked over 20 keys, ") || strings.Count(got, "\n") != 2 {
		t.Errorf("summary lines:\n%s", got)
	}
}

// Virtual time has no rate: a background on a store in virtual time is
// refused before anything runs, naming the field.
func TestBackgroundNeedsTheRealClock(t *testing.T) {
	sc, _ := scenarios.Lookup("ten-hits-one-view")
	bg := load.New(load.Plan{Rate: 100}, sc)
	_, err := engine.Run(context.Background(), engine.Plan{Scenario: sc, Targets: []string{"sqlite", "kv"}, Seed: 1, Background: bg.Start})
	var fe *usage.FieldError
	if !errors.As(err, &fe) || fe.Field != "Background" || !strings.Contains(err.Error(), "kv: it runs in virtual time") {
		t.Fatalf("err = %v; want a usage error on Background naming kv", err)
	}
	if n := len(bg.Summaries()); n != 0 {
		t.Errorf("%d loads ran; want none", n)
	}
}

func TestPlanValidate(t *testing.T) {
	for _, tc := range []struct {
		plan  load.Plan
		field string
	}{
		{load.Plan{Rate: 0}, "Background"},
		{load.Plan{Rate: -1}, "Background"},
		{load.Plan{Rate: 1, Keys: -1}, "BackgroundKeys"},
		{load.Plan{Rate: 1, Keys: 1_000_001}, "BackgroundKeys"},
		{load.Plan{Rate: 1, Keys: 1_000_000}, ""},
		{load.Plan{Rate: 0.5}, ""},
	} {
		errs := tc.plan.Validate()
		var got string
		if len(errs) > 0 {
			var fe *usage.FieldError
			if errors.As(errs[0], &fe) {
				got = fe.Field
			}
		}
		if got != tc.field {
			t.Errorf("%+v: field %q (%v), want %q", tc.plan, got, errs, tc.field)
		}
	}
}
