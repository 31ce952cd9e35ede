package results

import (
	"math"
	"time"
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
	// the regularized incomplete beta I_x(k+1, n−k) reaches level.
	return invRegIncBeta(float64(k+1), float64(n-k), level)
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

// invRegIncBeta finds the x in [0, 1] at which I_x(a, b) = y. I_x rises
// monotonically from 0 to 1, so bisection always converges; 200 halvings
// reach the last bit of a float64 even for bounds far below 1e-10, and
// cost microseconds.
func invRegIncBeta(a, b, y float64) float64 {
	lo, hi := 0.0, 1.0
	for range 200 {
		mid := lo + (hi-lo)/2
		if mid <= lo || mid >= hi {
			break // adjacent floats: converged
		}
		if regIncBeta(a, b, mid) < y {
			lo = mid
		} else {
			hi = mid
		}
	}
	return hi // the side that reaches y: a bound must not understate
}

// regIncBeta is the regularized incomplete beta function I_x(a, b), by the
// continued fraction of Numerical Recipes (§6.4), evaluated with the
// modified Lentz method on whichever side of the mean it converges fast.
func regIncBeta(a, b, x float64) float64 {
	switch {
	case x <= 0:
		return 0
	case x >= 1:
		return 1
	}
	la, _ := math.Lgamma(a)
	lb, _ := math.Lgamma(b)
	lab, _ := math.Lgamma(a + b)
	front := math.Exp(lab - la - lb + a*math.Log(x) + b*math.Log1p(-x))
	if x < (a+1)/(a+b+2) {
		return front * betaContinuedFraction(a, b, x) / a
	}
	return 1 - front*betaContinuedFraction(b, a, 1-x)/b
}

// betaContinuedFraction evaluates the continued fraction of I_x(a, b). It
// converges in O(sqrt(max(a, b))) terms when x is below the mean, which
// regIncBeta ensures; 10000 terms cover a and b in the millions.
func betaContinuedFraction(a, b, x float64) float64 {
	const (
		eps  = 1e-16
		tiny = 1e-300
	)
	qab, qap, qam := a+b, a+1, a-1
	c, d := 1.0, 1-qab*x/qap
	if math.Abs(d) < tiny {
		d = tiny
	}
	d = 1 / d
	h := d
	// step takes one term aa of the fraction (Lentz's method) and returns
	// the factor it changes the estimate by.
	step := func(aa float64) float64 {
		d = 1 + aa*d
		if math.Abs(d) < tiny {
			d = tiny
		}
		c = 1 + aa/c
		if math.Abs(c) < tiny {
			c = tiny
		}
		d = 1 / d
		return d * c
	}
	for m := 1; m <= 10000; m++ {
		fm := float64(m)
		m2 := 2 * fm
		h *= step(fm * (b - fm) * x / ((qam + m2) * (a + m2)))            // the even term
		del := step(-(a + fm) * (qab + fm) * x / ((a + m2) * (qap + m2))) // the odd term
		h *= del
		if math.Abs(del-1) < eps {
			break
		}
	}
	return h
}
