package report

import (
	"reflect"
	"testing"
	"time"

	"github.com/racelab/racelab/scenarios/results"
)

// TestStoryLines says figures as their declarations ask, knowing no story:
// shares of every value, or a spread with its bound and the trials' Over.
func TestStoryLines(t *testing.T) {
	windows := results.Figure{Name: "windows", Words: "admitted per window", Per: "window"}
	exposure := results.Figure{Name: "exposure_ns", Words: "exposure after the cancel", Spread: true, Duration: true,
		Per: "exposed", Bound: int64(45 * time.Second), Over: "download", OverWords: "given away after it"}
	for _, tc := range []struct {
		name  string
		fig   results.Figure
		tally results.Tally
		want  []string
	}{
		{"shares", windows, results.Tally{Trials: 40, Figures: map[string]results.Distribution{"windows": {5: 39, 6: 1}}},
			[]string{"kv: admitted per window: 5 in 97.5%, 6 in 2.5% (40 windows)"}},
		{"one share", windows, results.Tally{Trials: 1, Figures: map[string]results.Distribution{"windows": {5: 1}}},
			[]string{"kv: admitted per window: 5 in 100% (1 window)"}},
		{"no shares", windows, results.Tally{Trials: 3}, nil},
		{"spread", exposure, results.Tally{Trials: 20, Over: 14,
			Figures: map[string]results.Distribution{"exposure_ns": {int64(30500 * time.Millisecond): 1, int64(44912 * time.Millisecond): 1}}},
			[]string{"kv: exposure after the cancel: median 45s, max 45s over the 2 trials exposed (bound 45s); 14 downloads given away after it in 20 trials"}},
		{"spread of one", exposure, results.Tally{Trials: 1, Over: 1,
			Figures: map[string]results.Distribution{"exposure_ns": {int64(1234567 * time.Microsecond): 1}}},
			[]string{"kv: exposure after the cancel: median 1.2s, max 1.2s over the 1 trial exposed (bound 45s); 1 download given away after it in 1 trial"}},
		{"spread of none", exposure, results.Tally{Trials: 3},
			[]string{"kv: exposure after the cancel: none in any trial; 0 downloads given away after it in 3 trials"}},
		{"no trials", exposure, results.Tally{}, nil},
		{"a spread of counts, no bound or over", results.Figure{Name: "n", Words: "retries before the grant", Spread: true, Per: "retried"},
			results.Tally{Trials: 4, Figures: map[string]results.Distribution{"n": {1: 2, 7: 1}}},
			[]string{"kv: retries before the grant: median 1, max 7 over the 3 trials retried"}},
		{"undeclared", results.Figure{Name: "other", Words: "other", Per: "x"},
			results.Tally{Trials: 1, Figures: map[string]results.Distribution{"windows": {5: 1}}}, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := &results.Result{Figures: []results.Figure{tc.fig}}
			if got := storyLines(r, &tc.tally, "kv"); !reflect.DeepEqual(got, tc.want) {
				t.Errorf("lines %q\nwant  %q", got, tc.want)
			}
		})
	}
}
