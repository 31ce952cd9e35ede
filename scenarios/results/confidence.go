package results

import (
	"math"
	"time"

	"gonum.org/v1/gonum/mathext"
)

// Defaults of the evidence a plan asks for, in one place.
const (
	// DefaultConfidence is the confidence level of the bound on the rate
	// of breaking that every result carries: the customary 95 %.
	DefaultConfidence = 0.95
	// DefaultMaxTrials caps an adaptive run (Evidence.MaxRate) per target.
	// 5000 trials held prove a rate below 0.06 % at 95 % confidence, which
	// is as far as a CI job should go; a longer proof is a soak test.
	DefaultMaxTrials = 5000
	// DefaultHistoryTimeout bounds the linearizability check of one
	// trial. Checking is NP-complete in general; the stories' histories
	// take well under a millisecond at N=50 (see history.go), so hitting
	// this limit means a pathological history, reported as unknown.
	DefaultHistoryTimeout = 2 * time.Second
)

// upperBound is the exact one-sided (Clopper–Pearson) upper bound on the
// probability p that a trial breaks, at confidence level, when k of n
// trials broke: the p at which k or fewer breaks in n trials would happen
// only 1−level of the time. 0 breaks in 200 trials give 1.49 % at 95 %.
// With no trials nothing is known, and the bound is 1.
func upperBound(k, n int, level float64) float64 {
	switch {
	case n <= 0 || k >= n:
		return 1
	case k <= 0:
		// P(no break in n) = (1−p)^n = 1−level, solved for p; expm1 keeps
		// the digits that 1−x would lose for small bounds.
		return -math.Expm1(math.Log1p(-level) / float64(n))
	}
	// The bound is the level-quantile of Beta(k+1, n−k): the x at which
	// the regularized incomplete beta I_x(k+1, n−k) reaches level
	// (gonum's inversion, checked against R's binom.test in the tests).
	return mathext.InvRegIncBeta(float64(k+1), float64(n-k), level)
}

// TrialsNeeded is the fewest trials that, all held, bound the rate of
// breaking at or below maxRate at confidence level: 459 for 1 % at 99 %.
func TrialsNeeded(level, maxRate float64) int {
	if !(maxRate > 0 && maxRate < 1 && level > 0 && level < 1) {
		return 1
	}
	n := int(math.Ceil(math.Log1p(-level) / math.Log1p(-maxRate)))
	// The closed form can land one off either way through rounding; settle
	// it against upperBound itself, which is what Met compares.
	for n > 1 && upperBound(0, n-1, level) <= maxRate {
		n--
	}
	for upperBound(0, n, level) > maxRate {
		n++
	}
	return max(n, 1)
}
