package results

import (
	"bytes"
	"encoding/json"
	"maps"
	"slices"
)

// A story's own figures travel by name, so that the engine carries them
// without knowing them and a report says them without knowing the story:
//
//   - on a Request, one number each (Request.Figures): the window a rate
//     limiter counted the request in;
//   - on a Trial, one or more numbers each (Trial.Figures): how many
//     requests each window admitted, how long after a cancel the last
//     original was granted;
//   - on a Tally, how often each number came up over the trials
//     (Tally.Figures), from which a report says shares, a median or a
//     maximum;
//   - on a Result, how a report says each trial figure (Result.Figures).
//
// A story adds a figure in its own file: it sets the values in its judge
// and declares the Figure on its scenario. An absent figure reads as 0.

// maxFigureValues bounds the distinct values a Tally keeps of one figure:
// the first ones seen. A figure of durations has as many values as trials.
const maxFigureValues = 100_000

// Figure declares how a report says one of a story's trial figures over
// a target's trials. It is recorded in the result, so that a saved result
// is said without the story's code.
type Figure struct {
	// Name is the figure's key in Trial.Figures and Tally.Figures.
	Name string `json:"name"`
	// Words name it at the start of its line: "admitted per window".
	Words string `json:"words"`
	// Spread says the values as a median and a maximum over the trials
	// that had one ("median 31s, max 44s over the 12 trials exposed"), and
	// "none in any trial" when none had; otherwise each value is said
	// with its share of them all ("5 in 97.5%, 6 in 2.5% (40 windows)"),
	// and nothing at all when there is none.
	Spread bool `json:"spread,omitempty"`
	// Duration says the values are nanoseconds.
	Duration bool `json:"duration,omitempty"`
	// Per names, for shares, what one value is counted per ("window"),
	// and, for a spread, what a trial with a value is ("exposed").
	Per string `json:"per"`
	// Bound, when set, is the largest value the story accepts, said after
	// a spread.
	Bound int64 `json:"bound,omitempty"`
	// Over and OverWords, when set, say after the figure what the trials'
	// Over counted, in the story's words: the noun and what befell it
	// ("download", "given away after it").
	Over      string `json:"over,omitempty"`
	OverWords string `json:"over_words,omitempty"`
}

// SetFigure records a figure of the trial: one value, or one per thing
// measured (per window). It replaces the figure's earlier values.
func (t *Trial) SetFigure(name string, values ...int64) {
	if t.Figures == nil {
		t.Figures = map[string][]int64{}
	}
	t.Figures[name] = values
}

// Figure is the trial's figure, its first value: 0 when it has none.
func (t *Trial) Figure(name string) int64 {
	if vs := t.Figures[name]; len(vs) > 0 {
		return vs[0]
	}
	return 0
}

// Distribution counts how often each value came up. What the store
// counted and every figure of a tally are kept this way, bounded in the
// distinct values they keep.
type Distribution map[int64]int

// add counts v, unless v would be a new value past max distinct ones;
// ok says it was counted.
func (d Distribution) add(v int64, n int, most int) (ok bool) {
	if _, seen := d[v]; seen || len(d) < most {
		d[v] += n
		return true
	}
	return false
}

// Count is how many values were counted.
func (d Distribution) Count() int {
	n := 0
	for _, c := range d {
		n += c
	}
	return n
}

// Median is the middle value counted (of an even count, the upper of the
// two middle ones); ok is false when none was.
func (d Distribution) Median() (v int64, ok bool) {
	rank := d.Count() / 2
	for _, v := range slices.Sorted(maps.Keys(d)) {
		if rank < d[v] {
			return v, true
		}
		rank -= d[v]
	}
	return 0, false
}

// Max is the largest value counted, 0 when none was.
func (d Distribution) Max() int64 {
	if len(d) == 0 {
		return 0
	}
	return slices.Max(slices.Collect(maps.Keys(d)))
}

// addFigures counts every value of a trial's figures into figs.
func addFigures(figs map[string]Distribution, trial map[string][]int64) map[string]Distribution {
	for name, vs := range trial {
		for _, v := range vs {
			figs = countFigure(figs, name, v, 1)
		}
	}
	return figs
}

// mergeFigures counts another tally's figures into figs.
func mergeFigures(figs, other map[string]Distribution) map[string]Distribution {
	for name, d := range other {
		for v, n := range d {
			figs = countFigure(figs, name, v, n)
		}
	}
	return figs
}

func countFigure(figs map[string]Distribution, name string, v int64, n int) map[string]Distribution {
	if figs == nil {
		figs = map[string]Distribution{}
	}
	if figs[name] == nil {
		figs[name] = Distribution{}
	}
	figs[name].add(v, n, maxFigureValues)
	return figs
}

// Results of schema v1 saved before figures were generic held three of
// them as fields of their own: six-of-five's window of each request and
// its requests admitted per window, and stale-plan's exposure after the
// cancel. They read back as the figures of those names, which the stories
// still use, so that such a result verifies and renders as it did.
const (
	legacyWindow    = "window"      // Request.Window
	legacyWindows   = "windows"     // Trial.Windows and Tally.Windows
	legacyExposure  = "exposure_ns" // Trial.Exposure
	legacyExposures = "exposures_ns"
)

// UnmarshalJSON reads a trial, the figures of a v1 result included.
func (t *Trial) UnmarshalJSON(b []byte) error {
	type trial Trial // without this method
	var v struct {
		trial
		Windows  []int64 `json:"windows"`
		Exposure int64   `json:"exposure_ns"`
	}
	if err := json.Unmarshal(b, &v); err != nil {
		return err
	}
	*t = Trial(v.trial)
	if len(v.Windows) > 0 {
		t.SetFigure(legacyWindows, v.Windows...)
	}
	if v.Exposure != 0 {
		t.SetFigure(legacyExposure, v.Exposure)
	}
	return legacyRequestFigures(b, t.Requests)
}

// UnmarshalJSON reads a shard's trial, the figures of a v1 part included.
func (t *ShardTrial) UnmarshalJSON(b []byte) error {
	type shardTrial ShardTrial
	if err := json.Unmarshal(b, (*shardTrial)(t)); err != nil {
		return err
	}
	return legacyRequestFigures(b, t.Requests)
}

// legacyRequestFigures gives each request of reqs the window a v1
// trial b recorded for it. Only such a trial is read twice: one with
// figures of its own is of this version, and the checks for the keys cost
// a scan, a second decoding far more.
func legacyRequestFigures(b []byte, reqs []Request) error {
	if bytes.Contains(b, []byte(`"figures"`)) || !bytes.Contains(b, []byte(`"`+legacyWindow+`":`)) {
		return nil
	}
	var v struct {
		Requests []struct {
			Window int64 `json:"window"`
		} `json:"requests"`
	}
	if err := json.Unmarshal(b, &v); err != nil {
		return err
	}
	for i := range min(len(v.Requests), len(reqs)) {
		if w := v.Requests[i].Window; w != 0 {
			if reqs[i].Figures == nil {
				reqs[i].Figures = map[string]int64{}
			}
			reqs[i].Figures[legacyWindow] = w
		}
	}
	return nil
}

// UnmarshalJSON reads a tally, the figures of a v1 result included.
func (s *Tally) UnmarshalJSON(b []byte) error {
	type tally Tally
	var v struct {
		tally
		Windows   map[int64]int `json:"windows"`
		Exposures []int64       `json:"exposures_ns"`
	}
	if err := json.Unmarshal(b, &v); err != nil {
		return err
	}
	*s = Tally(v.tally)
	for w, n := range v.Windows {
		s.Figures = countFigure(s.Figures, legacyWindows, w, n)
	}
	for _, e := range v.Exposures {
		s.Figures = countFigure(s.Figures, legacyExposure, e, 1)
	}
	return nil
}
