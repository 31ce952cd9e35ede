package engine

import (
	"time"

	"github.com/racelab/racelab/internal/usage"
	"github.com/racelab/racelab/scenarios/results"
)

// Evidence says how strong a verdict a plan asks for: the confidence level
// of the bound on the rate of breaking, whether to keep adding trials until
// that bound is small enough, and how each trial's history is checked.
// The zero value asks for the defaults: a 95 % bound over the trials asked
// for, and every history checked.
type Evidence struct {
	// Confidence is the level of the bound, between 0 and 1 (0.95 is 95 %);
	// 0 means DefaultConfidence.
	Confidence float64
	// MaxRate, above 0, makes the run adaptive: each target gets trials
	// (at least Plan.Trials) until enough synchronized ones held to bound
	// the rate of breaking at or below MaxRate at Confidence, or a trial
	// breaks, or MaxTrials is reached. A target expected to hold then
	// holds only if the bound was met.
	MaxRate float64
	// MaxTrials caps an adaptive run per target; 0 means DefaultMaxTrials.
	MaxTrials int
	// SkipHistory turns the per-trial linearizability check off.
	SkipHistory bool
	// HistoryTimeout bounds the check of one trial; 0 means
	// DefaultHistoryTimeout. A check that runs out says "unknown".
	HistoryTimeout time.Duration
	// MaxSpread is the widest release spread a burst may have and still
	// prove anything; 0 means DefaultMaxSpread. A burst spread wider is
	// not simultaneous: its trial is inconclusive unless its counts
	// prove a break (Trial.NotSimultaneous).
	MaxSpread time.Duration
}

// DefaultMaxSpread is the widest release spread that still counts as one
// burst. Measured on a 2-core machine shared at a load average of 12 to
// 18: one process firing 100 requests at SQLite released its bursts
// within 6 to 140 ms (median 39 ms, 30 trials); four shard processes of
// 25 against one racelab serve within 2 to 60 ms, and up to 0.35 to 0.67
// s right after a heavy load had swamped the server, when shards missed
// their instant. A quarter second keeps honest runs on a loaded CI
// machine conclusive and refuses bursts that drifted apart; across
// machines, clocks agree to milliseconds (README, "Beyond one machine").
const DefaultMaxSpread = 250 * time.Millisecond

// SpreadBound is the widest release spread a burst may have: MaxSpread,
// or DefaultMaxSpread.
func (e Evidence) SpreadBound() time.Duration {
	if e.MaxSpread == 0 {
		return DefaultMaxSpread
	}
	return e.MaxSpread
}

// Scattered reports whether a burst released over spread was too spread
// out to be one burst.
func (e Evidence) Scattered(spread time.Duration) bool { return spread > e.SpreadBound() }

func (e Evidence) Level() float64 {
	if e.Confidence == 0 {
		return results.DefaultConfidence
	}
	return e.Confidence
}

func (e Evidence) maxTrials() int {
	if e.MaxTrials == 0 {
		return results.DefaultMaxTrials
	}
	return e.MaxTrials
}

func (e Evidence) historyTimeout() time.Duration {
	if e.HistoryTimeout == 0 {
		return results.DefaultHistoryTimeout
	}
	return e.HistoryTimeout
}

// Validate checks the evidence settings against the trials asked for. It
// refuses, before anything runs, a bound that the trial cap cannot reach:
// better a usage error now than a verdict of "unproven" after an hour.
func (e Evidence) Validate(trials int) []error {
	var errs []error
	level := e.Level()
	if !(level > 0 && level < 1) { // also refuses NaN
		errs = append(errs, Wants.Invalid("Confidence", results.Percent(level)))
	}
	if !(e.MaxRate >= 0 && e.MaxRate < 1) {
		errs = append(errs, Wants.Invalid("MaxRate", results.Percent(e.MaxRate)))
	}
	usage.NotBelow(&errs, Wants, "MaxTrials", e.MaxTrials, 0)
	usage.NotBelow(&errs, Wants, "HistoryTimeout", e.HistoryTimeout, 0)
	usage.NotBelow(&errs, Wants, "MaxSpread", e.MaxSpread, 0)
	if len(errs) == 0 && e.MaxRate > 0 {
		need := results.TrialsNeeded(level, e.MaxRate)
		switch {
		case need > e.maxTrials():
			errs = append(errs, usage.Fieldf("MaxTrials", "a rate below %s at %s confidence takes %d trials without a break, more than {} %d",
				results.Percent(e.MaxRate), results.Percent(level), need, e.maxTrials()))
		case trials > e.maxTrials():
			errs = append(errs, usage.Fieldf("Trials", "{} %d is more than {MaxTrials} %d", trials, e.maxTrials()))
		}
	}
	return errs
}

// Planned is the number of trials a target gets unless it is stopped
// early: the trials asked for, raised in an adaptive run to the fewest
// that can meet the bound if none of them breaks.
func (e Evidence) Planned(trials int) int {
	if e.MaxRate <= 0 {
		return trials
	}
	return max(trials, results.TrialsNeeded(e.Level(), e.MaxRate))
}

// another reports whether a target that has recorded the trials in rec
// gets one more, out of planned.
func (e Evidence) another(rec *results.Recorder, planned int) bool {
	done := rec.Tally().Trials
	if e.MaxRate <= 0 {
		return done < planned
	}
	switch {
	case rec.Tally().Broken > 0:
		// The race showed: no number of further trials can make the
		// bound hold, and a naive target has made its point.
		return false
	case done >= e.maxTrials():
		return false
	case done < planned:
		return true
	default:
		// Inconclusive trials prove nothing, so they are made up for.
		return !rec.Tally().Bound(e.Level(), e.MaxRate).Met()
	}
}
