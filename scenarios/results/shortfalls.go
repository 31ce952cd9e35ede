package results

import (
	"cmp"
	"slices"
)

// MergedShortfalls are the shortfalls of several results read back
// together (racelab report), each said with its scenario: rule breaks and
// missed thresholds first, across results as within one, then what could
// not be run, then what could not be judged.
func MergedShortfalls(runs []*Result, loads []*LoadResult) []Shortfall {
	var fs []Shortfall
	add := func(scenario string, own []Shortfall) {
		for _, f := range own {
			f.Target, f.Why = scenario+"/"+f.Target, scenario+"/"+f.Why
			fs = append(fs, f)
		}
	}
	for _, r := range runs {
		add(r.Scenario, r.Shortfalls())
	}
	for _, r := range loads {
		add(r.Scenario, r.Shortfalls())
	}
	slices.SortStableFunc(fs, func(a, b Shortfall) int { return cmp.Compare(a.Kind.rank(), b.Kind.rank()) })
	return fs
}

// rank orders shortfalls as the exit code ranks them: what was proven
// wrong (exit 3) before what could not be done (exit 1).
func (k ShortfallKind) rank() int {
	switch k {
	case RuleShortfall, ThresholdShortfall:
		return 0
	case ErrorShortfall:
		return 1
	}
	return 2
}
