package scenarios

import (
	"context"
	"testing"

	"github.com/racelab/racelab/scenarios/engine"
	"github.com/racelab/racelab/scenarios/results"
)

// TestAdaptiveRun runs until the bound is met on an atomic store, and
// stops at the first break on a naive one.
func TestAdaptiveRun(t *testing.T) {
	sc, _ := Lookup("five-checkouts")
	res, err := engine.Run(context.Background(), engine.Plan{Scenario: sc, Targets: []string{"sqlite", spec("kv")}, Seed: 1,
		Evidence: engine.Evidence{Confidence: 0.95, MaxRate: 0.05}})
	if err != nil {
		t.Fatal(err)
	}
	if res.MaxRate != 0.05 || res.Confidence != 0.95 || res.MaxTrials != results.DefaultMaxTrials || res.Trials != 59 {
		t.Errorf("result asks for rate %g at %g, at most %d trials, %d planned; want 0.05 at 0.95, %d, 59",
			res.MaxRate, res.Confidence, res.MaxTrials, res.Trials, results.DefaultMaxTrials)
	}
	sqlite, kv := &res.Targets[0], &res.Targets[1]
	// sqlite runs on the real clock: a busy machine may spread a burst
	// too far to prove anything, and such a trial is run again, so the
	// run stops at 59 judged trials, however many proved nothing.
	if sqlite.Bound == nil || sqlite.Bound.Trials != 59 || len(sqlite.Trials) != 59+sqlite.Bound.Inconclusive ||
		!sqlite.Bound.Met() || sqlite.Verdict() != "holds" || sqlite.Failed() {
		t.Errorf("sqlite: %d trials, bound %+v, verdict %s; want 59 judged trials and the inconclusive ones beside them, met, holds",
			len(sqlite.Trials), sqlite.Bound, sqlite.Verdict())
	}
	if len(kv.Trials) != 1 || kv.Broken() != 1 || kv.Failed() {
		t.Errorf("kv: %d trials, %d broken, failed %v; want one broken trial, not failed", len(kv.Trials), kv.Broken(), kv.Failed())
	}
}

// TestUnprovenFailsHold checks that a target expected to hold, which held
// without reaching the bound asked, is unproven and fails the run.
func TestUnprovenFailsHold(t *testing.T) {
	// 19 trials held and one proved nothing: few enough for a verdict
	// (MaxInconclusive), too few to prove a rate below 1%.
	trials := make([]results.Trial, 20)
	trials[7].Unsynchronized = true
	tr := results.TargetResult{Expect: results.ExpectHold, Strict: true, Trials: trials}
	s := tr.Summary()
	b := s.Bound(0.95, 0.01)
	tr.Bound = &b
	if tr.Verdict() != "unproven" || !tr.Failed() || tr.Proven() {
		t.Errorf("verdict %s, failed %v, proven %v; want unproven, failed", tr.Verdict(), tr.Failed(), tr.Proven())
	}
	tr.Bound = nil // an old result: nothing was asked
	if tr.Verdict() != "holds" || tr.Failed() {
		t.Errorf("without a bound: verdict %s, failed %v; want holds", tr.Verdict(), tr.Failed())
	}
}
