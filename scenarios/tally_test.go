package scenarios

import (
	"context"
	"math"
	"testing"

	"github.com/racelab/racelab/scenarios/engine"
	"github.com/racelab/racelab/scenarios/results"
)

// TestRunKeepsSample runs more trials than a run keeps, on the simulated
// stores that forget each trial's key: what is kept stays within the
// budget, and the tally and bound count every trial, at the level asked.
func TestRunKeepsSample(t *testing.T) {
	sc, _ := Lookup("ten-hits-one-view")
	res, err := engine.Run(context.Background(), engine.Plan{Scenario: sc, Targets: []string{"kv", "actor"}, Trials: 300, Seed: 3,
		Keep: results.Keep{Trials: 20}, Evidence: engine.Evidence{Confidence: 0.99}})
	if err != nil {
		t.Fatal(err)
	}
	for _, tr := range res.Targets {
		s := tr.Summary()
		if len(tr.Trials) > 23 || tr.Tally == nil || s.Trials != 300 {
			t.Errorf("%s: %d trials kept, tally %v, %d counted; want at most 23 kept of 300", tr.Target, len(tr.Trials), tr.Tally != nil, s.Trials)
		}
		// Clopper–Pearson at the edges: nothing broke in 300, so that
		// 0.99 = 1 − (1 − upper)^300; or every one did, and nothing is
		// ruled out.
		want := 1.0
		if b := tr.Evidence(); b.Broken == 0 {
			want = -math.Expm1(math.Log(0.01) / 300)
		}
		b := tr.Evidence()
		if b.Level != 0.99 || b.Trials != 300 || math.Abs(b.Upper-want) > 1e-12 {
			t.Errorf("%s: bound %+v; want 300 trials at 99%%", tr.Target, b)
		}
	}
	if kv := res.Targets[0].Summary(); kv.Broken != 300 {
		t.Errorf("kv broke in %d of 300 trials, want every one", kv.Broken)
	}
	if actor := res.Targets[1].Summary(); actor.Broken != 0 || actor.Inconclusive != 0 {
		t.Errorf("actor: %d broken, %d inconclusive; want none", actor.Broken, actor.Inconclusive)
	}
}
