package results

import (
	"encoding/json"
	"maps"
	"reflect"
	"testing"
)

// figured is a trial with figures: one value per window, and one
// exposure when it has one.
func figured(i int, windows []int64, exposure int64) Trial {
	t := Trial{Index: i, Requests: make([]Request, 2), Allowed: 2, Counted: 2}
	t.SetFigure("windows", windows...)
	if exposure > 0 {
		t.SetFigure("exposure_ns", exposure)
	}
	return t
}

// TestTallyFigures: every value of every trial's figures is counted, and
// merging two tallies counts the same as one tally of all their trials.
func TestTallyFigures(t *testing.T) {
	trials := []Trial{
		figured(0, []int64{5}, 30),
		figured(1, []int64{5, 6}, 0),
		figured(2, []int64{0}, 10),
		figured(3, []int64{5}, 20),
	}
	s := TallyOf(trials)
	if want := (Distribution{5: 3, 6: 1, 0: 1}); !reflect.DeepEqual(s.Figures["windows"], want) {
		t.Errorf("windows %v, want %v", s.Figures["windows"], want)
	}
	ex := s.Figures["exposure_ns"]
	if median, ok := ex.Median(); !ok || median != 20 || ex.Max() != 30 || ex.Count() != 3 {
		t.Errorf("exposures %v: median %d (%v), max %d, count %d; want 20, 30, 3", ex, median, ok, ex.Max(), ex.Count())
	}
	a, b := TallyOf(trials[:1]), TallyOf(trials[1:])
	var merged Tally
	merged.Merge(&a)
	merged.Merge(&b)
	if !reflect.DeepEqual(merged.Figures, s.Figures) {
		t.Errorf("merged figures %v, want %v", merged.Figures, s.Figures)
	}
	// The merge copied a's figures: counting into it leaves a alone.
	if a.Figures["windows"][5] != 1 {
		t.Errorf("merging changed its argument: %v", a.Figures)
	}
}

// TestDistributionMedian: of an even count, the upper of the two middle
// values, as the counted median says it; nothing of an empty one.
func TestDistributionMedian(t *testing.T) {
	for _, tc := range []struct {
		d    Distribution
		want int64
		ok   bool
	}{
		{Distribution{}, 0, false},
		{Distribution{7: 1}, 7, true},
		{Distribution{1: 1, 2: 1}, 2, true},
		{Distribution{1: 2, 9: 1}, 1, true},
		{Distribution{1: 1, 5: 1, 9: 2}, 9, true},
	} {
		if got, ok := tc.d.Median(); got != tc.want || ok != tc.ok {
			t.Errorf("median of %v = %d, %v; want %d, %v", tc.d, got, ok, tc.want, tc.ok)
		}
	}
}

// TestFigureValuesBounded: past the bound on distinct values a new value
// is left out; values already seen go on counting.
func TestFigureValuesBounded(t *testing.T) {
	var figs map[string]Distribution
	for v := range int64(maxFigureValues + 1) {
		figs = countFigure(figs, "f", v, 1)
	}
	figs = countFigure(figs, "f", 0, 1)
	d := figs["f"]
	if len(d) != maxFigureValues || d[0] != 2 || d[maxFigureValues] != 0 {
		t.Errorf("%d values, %d of 0, %d of the last; want %d, 2, 0", len(d), d[0], d[maxFigureValues], maxFigureValues)
	}
}

// TestFiguresJSON: figures travel by name through JSON and come back the
// same.
func TestFiguresJSON(t *testing.T) {
	trial := figured(0, []int64{5, 6}, 30)
	trial.Requests[0].Figures = map[string]int64{"window": 4}
	res := TargetResult{Target: "kv", Trials: []Trial{trial}}
	tally := TallyOf(res.Trials)
	res.Tally = &tally
	b, err := json.Marshal(res)
	if err != nil {
		t.Fatal(err)
	}
	var back TargetResult
	if err := json.Unmarshal(b, &back); err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(back, res) {
		t.Errorf("read back %+v\nwant %+v\nfrom %s", back, res, b)
	}
}

// TestLegacyFigures reads the fields a v1 result held before figures were
// generic: they come back as the figures of the same names.
func TestLegacyFigures(t *testing.T) {
	const trial = `{"index": 0, "key": "k", "requests": [{"index": 0, "outcome": "allowed", "value": 1, "window": 29},
		{"index": 1, "outcome": "allowed", "value": 1, "window": 30}, {"index": 2, "outcome": "error"}],
		"windows": [1, 1], "exposure_ns": 35730070092}`
	var got Trial
	if err := json.Unmarshal([]byte(trial), &got); err != nil {
		t.Fatal(err)
	}
	want := map[string][]int64{"windows": {1, 1}, "exposure_ns": {35730070092}}
	if !reflect.DeepEqual(got.Figures, want) {
		t.Errorf("trial figures %v, want %v", got.Figures, want)
	}
	for i, w := range []int64{29, 30, 0} {
		if r := got.Requests[i]; r.Figures["window"] != w || w == 0 && r.Figures != nil {
			t.Errorf("request %d figures %v, want window %d", i, r.Figures, w)
		}
	}
	var shard ShardTrial
	if err := json.Unmarshal([]byte(trial), &shard); err != nil || shard.Requests[1].Figures["window"] != 30 {
		t.Errorf("shard trial: %v, request 1 figures %v; want window 30", err, shard.Requests[1].Figures)
	}

	const tally = `{"trials": 3, "counted": {"2": 3}, "windows": {"5": 4, "6": 1}, "exposures_ns": [30, 10, 30]}`
	var s Tally
	if err := json.Unmarshal([]byte(tally), &s); err != nil {
		t.Fatal(err)
	}
	wantTally := map[string]Distribution{"windows": {5: 4, 6: 1}, "exposure_ns": {30: 2, 10: 1}}
	if !maps.EqualFunc(s.Figures, wantTally, maps.Equal) || s.Trials != 3 || s.Counted[2] != 3 {
		t.Errorf("tally %+v; want %d trials, counted 2 thrice, figures %v", s, 3, wantTally)
	}

	// A document of this version with a figure named "window" reads it
	// once, from its figures.
	const now = `{"index": 0, "requests": [{"index": 0, "outcome": "allowed", "figures": {"window": 7}}]}`
	if err := json.Unmarshal([]byte(now), &got); err != nil || got.Requests[0].Figures["window"] != 7 {
		t.Errorf("%v, figures %v; want window 7", err, got.Requests[0].Figures)
	}
}
