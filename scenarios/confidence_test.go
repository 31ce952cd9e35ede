package scenarios

import (
	"context"
	"errors"
	"math"
	"strings"
	"testing"

	"github.com/racelab/racelab/scenarios/engine"

	"github.com/racelab/racelab/scenarios/results"
)

func TestEvidenceValidate(t *testing.T) {
	for _, tc := range []struct {
		name   string
		e      engine.Evidence
		trials int
		want   string // "" for valid
	}{
		{"defaults", engine.Evidence{}, 1, ""},
		{"99% below 1%", engine.Evidence{Confidence: 0.99, MaxRate: 0.01}, 1, ""},
		{"level 100%", engine.Evidence{Confidence: 1}, 1, "--confidence 100%"},
		{"level NaN", engine.Evidence{Confidence: math.NaN()}, 1, "--confidence"},
		{"rate 100%", engine.Evidence{MaxRate: 1}, 1, "--max-rate 100%"},
		{"negative rate", engine.Evidence{MaxRate: -0.1}, 1, "--max-rate -10%"},
		{"cap too low", engine.Evidence{Confidence: 0.99, MaxRate: 0.001, MaxTrials: 1000}, 1,
			"a rate below 0.1% at 99% confidence takes 4603 trials without a break, more than --max-trials 1000"},
		{"trials over cap", engine.Evidence{MaxRate: 0.05, MaxTrials: 100}, 200, "--trials 200 is more than --max-trials 100"},
		{"negative cap", engine.Evidence{MaxTrials: -1}, 1, "--max-trials -1"},
		{"negative history timeout", engine.Evidence{HistoryTimeout: -1}, 1, "--history-timeout"},
		{"no such folder", engine.Evidence{HistoryHTML: "/nonexistent/folder/h.html"}, 1, "folder /nonexistent/folder does not exist"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			err := tc.e.validate(tc.trials)
			switch {
			case tc.want == "" && err != nil:
				t.Fatalf("validate = %v, want nil", err)
			case tc.want != "" && (err == nil || !strings.Contains(err.Error(), tc.want)):
				t.Fatalf("validate = %v, want an error containing %q", err, tc.want)
			case err != nil && !errors.Is(err, results.ErrUsage):
				t.Errorf("validate error %v is not a usage error", err)
			}
		})
	}
}

// TestAnotherTrial walks the adaptive loop's decisions on made-up trials.
func TestAnotherTrial(t *testing.T) {
	held, broke, loose := results.Trial{}, results.Trial{Broken: true}, results.Trial{Unsynchronized: true}
	rep := func(t results.Trial, n int) []results.Trial {
		out := make([]results.Trial, n)
		for i := range out {
			out[i] = t
		}
		return out
	}
	e := engine.Evidence{MaxRate: 0.05} // 59 trials at 95%
	planned := e.planned(1)
	if planned != 59 {
		t.Fatalf("planned(1) = %d, want 59", planned)
	}
	for _, tc := range []struct {
		name   string
		e      engine.Evidence
		trials []results.Trial
		want   bool
	}{
		{"fixed: under the count", engine.Evidence{}, rep(held, 3), true},
		{"fixed: count reached", engine.Evidence{}, rep(held, 59), false},
		{"fixed: breaks do not stop it", engine.Evidence{}, append(rep(held, 2), broke), true},
		{"adaptive: under the bound", e, rep(held, 58), true},
		{"adaptive: bound met", e, rep(held, 59), false},
		{"adaptive: a break stops it", e, append(rep(held, 5), broke), false},
		{"adaptive: unsynchronized made up for", e, append(rep(held, 58), loose), true},
		{"adaptive: cap reached", engine.Evidence{MaxRate: 0.05, MaxTrials: 60}, append(rep(held, 58), loose, loose), false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			rec := results.NewRecorder(&results.TargetResult{}, results.Keep{})
			for _, x := range tc.trials {
				rec.Add(x)
			}
			if got := tc.e.another(rec, 59); got != tc.want {
				t.Errorf("another after %d trials = %v, want %v", len(tc.trials), got, tc.want)
			}
		})
	}
}

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
	if len(sqlite.Trials) != 59 || sqlite.Bound == nil || !sqlite.Bound.Met() || sqlite.Verdict() != "holds" || sqlite.Failed() {
		t.Errorf("sqlite: %d trials, bound %+v, verdict %s; want 59 trials, met, holds", len(sqlite.Trials), sqlite.Bound, sqlite.Verdict())
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
	b := results.BoundOf(tr.Trials, 0.95, 0.01)
	tr.Bound = &b
	if tr.Verdict() != "unproven" || !tr.Failed() || tr.Proven() {
		t.Errorf("verdict %s, failed %v, proven %v; want unproven, failed", tr.Verdict(), tr.Failed(), tr.Proven())
	}
	tr.Bound = nil // an old result: nothing was asked
	if tr.Verdict() != "holds" || tr.Failed() {
		t.Errorf("without a bound: verdict %s, failed %v; want holds", tr.Verdict(), tr.Failed())
	}
}
