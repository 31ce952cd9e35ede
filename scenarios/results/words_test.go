package results

import (
	"strings"
	"testing"
	"time"
)

// Plural is how every answer of a trial is said: the edges of its English
// (one, a consonant before y, a vowel before y, a one-letter word) and of
// its number (zero, negative, large) must read as they always have.
func TestPlural(t *testing.T) {
	for _, tc := range []struct {
		n    int64
		word string
		want string
	}{
		{1, "hit", "1 hit"},
		{2, "hit", "2 hits"},
		{0, "view", "0 views"},
		{-1, "view", "-1 views"},
		{1, "retry", "1 retry"},
		{3, "retry", "3 retries"},
		{2, "day", "2 days"},
		{2, "y", "2 ies"},
		{9223372036854775807, "download", "9223372036854775807 downloads"},
		{2, "a long word that does not fit the buffer on the stack", "2 a long word that does not fit the buffer on the stacks"},
	} {
		if got := Plural(tc.n, tc.word); got != tc.want {
			t.Errorf("Plural(%d, %q) = %q, want %q", tc.n, tc.word, got, tc.want)
		}
	}
}

// SetDamage says a trial's over and lost counts in the story's words when
// it has some, in OverLost's default words when it has none or says
// nothing, and leaves out a count of 0.
func TestSetDamage(t *testing.T) {
	story := OverLost("%d over the limit", "%d never counted")
	silent := func(int64, int64) string { return "" }
	for _, tc := range []struct {
		say        func(over, lost int64) string
		over, lost int64
		want       string
	}{
		{story, 1, 2, "1 over the limit, 2 never counted"},
		{story, 0, 2, "2 never counted"},
		{story, 3, 0, "3 over the limit"},
		{story, 0, 0, ""},
		{nil, 7, 11, "7 over, 11 lost"},
		{silent, 7, 0, "7 over"},
		{nil, 0, 0, ""},
	} {
		tr := Trial{Over: tc.over, Lost: tc.lost, Damage: "stale"}
		tr.SetDamage(tc.say)
		if tr.Damage != tc.want {
			t.Errorf("over %d, lost %d: damage %q, want %q", tc.over, tc.lost, tr.Damage, tc.want)
		}
	}
}

func TestRoughlyAndOrList(t *testing.T) {
	for _, tc := range []struct {
		d    time.Duration
		want string
	}{{40 * time.Second, "40 seconds"}, {50 * time.Minute, "50 minutes"}, {2*time.Hour + 5*time.Minute, "2 hours 5 minutes"}, {time.Hour, "1 hour"}} {
		if got := Roughly(tc.d); got != tc.want {
			t.Errorf("Roughly(%s) = %q, want %q", tc.d, got, tc.want)
		}
	}
	for words, want := range map[string]string{"": "", "a": "a", "a b": "a or b", "a b c": "a, b or c"} {
		if got := OrList(strings.Fields(words)); got != want {
			t.Errorf("OrList(%q) = %q, want %q", words, got, want)
		}
	}
}

// TestMergedShortfalls: results read back together are judged as one
// run: each shortfall said with its scenario, rule breaks and missed
// thresholds first, whichever result they came from.
func TestMergedShortfalls(t *testing.T) {
	runs := []*Result{{Scenario: "a", Targets: []TargetResult{{Target: "x", Error: "refused"}}}}
	loads := []*LoadResult{{Scenario: "b", Targets: []LoadTarget{{Target: "y", Error: "refused"}}}}
	fs := MergedShortfalls(runs, loads)
	if len(fs) != 2 || fs[0].Target != "a/x" || fs[1].Target != "b/y" || !strings.HasPrefix(fs[0].Why, "a/") {
		t.Errorf("shortfalls %+v; want a/x then b/y, each why prefixed", fs)
	}
	if ErrorShortfall.rank() <= RuleShortfall.rank() || ThresholdShortfall.rank() != RuleShortfall.rank() || InconclusiveShortfall.rank() <= ErrorShortfall.rank() {
		t.Error("ranks: want rule and threshold first, then errors, then inconclusive")
	}
}
