package engine

import (
	"errors"
	"math"
	"strings"
	"testing"

	"github.com/racelab/racelab/scenarios/results"
)

func TestEvidenceValidate(t *testing.T) {
	for _, tc := range []struct {
		name   string
		e      Evidence
		trials int
		want   string // "" for valid
	}{
		{"defaults", Evidence{}, 1, ""},
		{"99% below 1%", Evidence{Confidence: 0.99, MaxRate: 0.01}, 1, ""},
		{"level 100%", Evidence{Confidence: 1}, 1, "Confidence 100%"},
		{"level NaN", Evidence{Confidence: math.NaN()}, 1, "Confidence"},
		{"rate 100%", Evidence{MaxRate: 1}, 1, "MaxRate 100%"},
		{"negative rate", Evidence{MaxRate: -0.1}, 1, "MaxRate -10%"},
		{"cap too low", Evidence{Confidence: 0.99, MaxRate: 0.001, MaxTrials: 1000}, 1,
			"a rate below 0.1% at 99% confidence takes 4603 trials without a break, more than MaxTrials 1000"},
		{"trials over cap", Evidence{MaxRate: 0.05, MaxTrials: 100}, 200, "Trials 200 is more than MaxTrials 100"},
		{"negative cap", Evidence{MaxTrials: -1}, 1, "MaxTrials -1"},
		{"negative history timeout", Evidence{HistoryTimeout: -1}, 1, "HistoryTimeout"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			err := errors.Join(tc.e.Validate(tc.trials)...)
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
	e := Evidence{MaxRate: 0.05} // 59 trials at 95%
	planned := e.Planned(1)
	if planned != 59 {
		t.Fatalf("planned(1) = %d, want 59", planned)
	}
	for _, tc := range []struct {
		name   string
		e      Evidence
		trials []results.Trial
		want   bool
	}{
		{"fixed: under the count", Evidence{}, rep(held, 3), true},
		{"fixed: count reached", Evidence{}, rep(held, 59), false},
		{"fixed: breaks do not stop it", Evidence{}, append(rep(held, 2), broke), true},
		{"adaptive: under the bound", e, rep(held, 58), true},
		{"adaptive: bound met", e, rep(held, 59), false},
		{"adaptive: a break stops it", e, append(rep(held, 5), broke), false},
		{"adaptive: unsynchronized made up for", e, append(rep(held, 58), loose), true},
		{"adaptive: cap reached", Evidence{MaxRate: 0.05, MaxTrials: 60}, append(rep(held, 58), loose, loose), false},
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
