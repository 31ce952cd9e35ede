package results

import (
	"reflect"
	"testing"
)

// TestRecorderSample feeds a recorder more trials than it keeps: the tally
// counts them all, the sample keeps the first ones and, past the budget,
// the first broken, the first inconclusive and the worst.
func TestRecorderSample(t *testing.T) {
	var all []Trial
	tr := &TargetResult{}
	rec := NewRecorder(tr, Keep{Trials: 10})
	for i := range 5000 {
		trial := Trial{Index: i, Requests: make([]Request, 4), Allowed: 4, Counted: 4}
		switch i {
		case 2000:
			trial.Errors, trial.Allowed = 1, 3 // inconclusive
		case 3000:
			trial.Broken, trial.Lost, trial.Counted, trial.Why = true, 1, 3, "lost one"
		case 4000:
			trial.Broken, trial.Lost, trial.Counted, trial.Why = true, 3, 1, "lost three" // the worst
		case 4500:
			trial.Broken, trial.Lost, trial.Counted, trial.Why = true, 2, 2, "lost two"
		}
		all = append(all, trial)
		rec.Add(trial)
	}
	rec.Finish(DefaultConfidence, 0)
	var kept []int
	for _, k := range tr.Trials {
		kept = append(kept, k.Index)
	}
	want := []int{0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 2000, 3000, 4000}
	if !reflect.DeepEqual(kept, want) {
		t.Errorf("kept trials %v, want %v", kept, want)
	}
	if tr.Tally == nil {
		t.Fatal("a sampled target has no tally")
	}
	if got, wantTally := *tr.Tally, TallyOf(all); !reflect.DeepEqual(got, wantTally) {
		t.Errorf("tally %+v\nwant %+v", got, wantTally)
	}
	if s := tr.Summary(); s.Trials != 5000 || s.Broken != 3 || s.Inconclusive != 1 || s.Worst.Index != 4000 || s.FirstWhy != "lost one" {
		t.Errorf("summary: %d trials, %d broken, %d inconclusive, worst %d, first why %q", s.Trials, s.Broken, s.Inconclusive, s.Worst.Index, s.FirstWhy)
	}
	if b := tr.Evidence(); b.Trials != 4999 || b.Broken != 3 || b.Inconclusive != 1 {
		t.Errorf("bound over %d conclusive trials, %d broken, %d inconclusive; want 4999, 3, 1", b.Trials, b.Broken, b.Inconclusive)
	}
}
