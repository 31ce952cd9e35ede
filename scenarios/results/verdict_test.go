package results

import (
	"reflect"
	"strings"
	"testing"
	"time"
)

// trials makes n trials of 4 requests: the first inconclusive ones with a
// failed request, the next broken ones lost one hit, the rest held.
func trials(n, inconclusive, broken int) []Trial {
	out := make([]Trial, n)
	for i := range out {
		t := Trial{Index: i, Requests: make([]Request, 4), Allowed: 4, Counted: 4}
		switch {
		case i < inconclusive:
			t.Allowed, t.Errors, t.Counted = 3, 1, 3
		case i < inconclusive+broken:
			t.Broken, t.Lost, t.Counted, t.Why = true, 1, 3, "lost one"
		}
		out[i] = t
	}
	return out
}

// The verdict thresholds where the verdict is computed: a target whose
// inconclusive trials are at most MaxInconclusive (10%) of them gets a
// verdict; one more, and it gets none.
func TestTooInconclusiveAtItsEdge(t *testing.T) {
	for inconclusive, want := range map[int]bool{9: false, 10: false, 11: true} {
		s := TallyOf(trials(100, inconclusive, 0))
		if got := s.TooInconclusive(); got != want {
			t.Errorf("%d of 100 inconclusive: too inconclusive %v; want %v", inconclusive, got, want)
		}
		tr := TargetResult{Target: "t", Expect: ExpectHold, Strict: true, Trials: trials(100, inconclusive, 0)}
		if got := tr.Inconclusive(); got != want {
			t.Errorf("%d of 100 inconclusive: target inconclusive %v; want %v", inconclusive, got, want)
		}
	}
	if s := TallyOf(trials(3, 3, 0)); !s.TooInconclusive() {
		t.Errorf("every trial inconclusive: a verdict was given")
	}
	// A proven break needs no share of conclusive trials.
	tr := TargetResult{Target: "t", Expect: ExpectHold, Strict: true, Trials: trials(10, 9, 1)}
	if !tr.Failed() {
		t.Errorf("9 inconclusive and 1 broken: not failed; a proven break is proof enough")
	}
}

// A burst spread past the bound proves nothing, but never hides a break;
// the cause says how wide it was.
func TestNotSimultaneousIsInconclusive(t *testing.T) {
	held := Trial{Requests: make([]Request, 2), Allowed: 2, Counted: 2, NotSimultaneous: true, ReleaseSpread: 2600 * time.Millisecond}
	broke := held
	broke.Broken = true
	if !held.Inconclusive() || broke.Inconclusive() || !held.SoftInconclusive() {
		t.Errorf("held and scattered: inconclusive %v (soft %v); broke and scattered: %v; want true, true, false",
			held.Inconclusive(), held.SoftInconclusive(), broke.Inconclusive())
	}
	s := TallyOf([]Trial{held})
	if s.NotSimultaneous != 1 || !strings.Contains(s.InconclusiveWhy("t"), "burst not simultaneous (spread 2.6s)") {
		t.Errorf("tally %d not simultaneous, why %q", s.NotSimultaneous, s.InconclusiveWhy("t"))
	}
}

// Merging tallies keeps every part's counts: a later part's inconclusive
// trials (and the rest) are added, as if its trials had followed.
func TestTallyMergeKeepsEveryPart(t *testing.T) {
	a, b := trials(20, 1, 2), trials(30, 4, 3)
	for i := range b {
		b[i].Index += len(a)
	}
	b[10].NotSimultaneous = true // held, scattered: one more inconclusive
	merged := TallyOf(a)
	second := TallyOf(b)
	merged.Merge(&second)
	want := TallyOf(append(append([]Trial{}, a...), b...))
	if merged.Inconclusive != 6 || merged.Broken != 5 || merged.Trials != 50 || merged.NotSimultaneous != 1 {
		t.Errorf("merged: %d trials, %d inconclusive, %d broken, %d not simultaneous; want 50, 6, 5, 1",
			merged.Trials, merged.Inconclusive, merged.Broken, merged.NotSimultaneous)
	}
	if !reflect.DeepEqual(merged, want) {
		t.Errorf("merged tally %+v\nwant the tally of every trial %+v", merged, want)
	}
}
