package results

import (
	"fmt"
	"slices"
)

// checkThresholdList refuses a target whose judged thresholds are not the
// load's list: a threshold the load asked for and the target leaves out
// (`lost==0` deleted from a target that missed it) would turn a missed
// threshold into a pass. A target judges none only where a load judges
// none: a shard's part (its merge judges), a target that failed, or a
// load cut short; CheckJudged says when it must.
func (r *LoadResult) checkThresholdList(t *LoadTarget) error {
	if len(t.Thresholds) == 0 {
		return nil
	}
	got := make([]string, len(t.Thresholds))
	for i, th := range t.Thresholds {
		got[i] = th.Expr
	}
	if !slices.Equal(got, r.Thresholds) {
		return fmt.Errorf("thresholds %q judged; the load asks %q", got, r.Thresholds)
	}
	return nil
}

// CheckJudged refuses a saved load (not a shard's part, which judges no
// threshold) in which a target that ran the whole load judged none of
// the thresholds the load asks: their verdicts went missing.
func (r *LoadResult) CheckJudged() error {
	if r.Interrupted || len(r.Thresholds) == 0 {
		return nil
	}
	labels := r.Labels()
	for i := range r.Targets {
		if t := &r.Targets[i]; t.Error == "" && len(t.Thresholds) == 0 {
			return fmt.Errorf("target %s: no threshold judged; the load asks %q", labels[i], r.Thresholds)
		}
	}
	return nil
}
