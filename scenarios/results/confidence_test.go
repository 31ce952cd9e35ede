package results

import (
	"math"
	"testing"

	"gonum.org/v1/gonum/mathext"
)

// TestUpperBound checks the exact bounds against reference values: R's
// binom.test(k, n, alternative = "less")$conf.int[2], which is the
// level-quantile of Beta(k+1, n-k), here computed to 16 digits with mpmath
// (bisection on betainc at 40 digits).
func TestUpperBound(t *testing.T) {
	for _, tc := range []struct {
		k, n  int
		level float64
		want  float64
	}{
		{0, 200, 0.95, 0.01486703923127206}, // the "0 of 200 → below 1.5%"
		{0, 10, 0.95, 0.2588655508930523},
		{0, 459, 0.99, 0.00998288736612908},
		{0, 1, 0.95, 0.95},
		{1, 10, 0.95, 0.3941633024365048}, // binom.test(1, 10): 0.3941633
		{1, 20, 0.95, 0.2161061642068473},
		{3, 20, 0.95, 0.3436638043142818},
		{5, 10, 0.95, 0.7775588989918709}, // binom.test(5, 10): 0.7775589
		{9, 10, 0.95, 0.9948838031081763},
		{1, 200, 0.95, 0.02349847043495071},
		{2, 300, 0.99, 0.02772234297720777},
		{10, 1000, 0.95, 0.01690317512056251},
		{50, 100, 0.95, 0.5863782853690882},
		{1, 5000, 0.95, 0.0009484177700043791},
		{100, 5000, 0.95, 0.02357300302543311},
		{4999, 5000, 0.95, 0.9999897413937424},
		{7, 12, 0.99, 0.8785334194920746},
		{10, 10, 0.95, 1},
		{0, 0, 0.95, 1}, // no trials, no knowledge
	} {
		got := upperBound(tc.k, tc.n, tc.level)
		// Ten significant digits: lgamma of a few thousand carries about
		// 1e-12 of relative error into the beta function's prefactor.
		if math.Abs(got-tc.want) > 1e-10*tc.want {
			t.Errorf("upperBound(%d, %d, %g) = %.17g, want %.17g", tc.k, tc.n, tc.level, got, tc.want)
		}
	}
}

// TestUpperBoundZeroMatchesBeta checks that the closed form for no breaks
// and the incomplete-beta inversion agree, so that both paths compute the
// same quantity.
func TestUpperBoundZeroMatchesBeta(t *testing.T) {
	for _, n := range []int{1, 2, 7, 59, 200, 459, 5000} {
		for _, level := range []float64{0.9, 0.95, 0.99} {
			closed := upperBound(0, n, level)
			beta := mathext.InvRegIncBeta(1, float64(n), level)
			if math.Abs(closed-beta) > 1e-12 {
				t.Errorf("n=%d level=%g: closed form %.17g, beta inversion %.17g", n, level, closed, beta)
			}
		}
	}
}

// TestRegIncBetaIsBinomialTail checks that the library's I_p(k+1, n-k),
// on which every bound rests, is P(X > k) for X
// binomial(n, p), with the tail summed directly in log space: two roads
// to one number.
func TestRegIncBetaIsBinomialTail(t *testing.T) {
	for _, n := range []int{1, 5, 20, 100, 1000} {
		for _, k := range []int{0, 1, n / 3, n / 2, n - 1} {
			if k < 0 || k >= n {
				continue
			}
			for _, p := range []float64{1e-4, 0.01, 0.1, 0.37, 0.5, 0.9, 0.999} {
				var cdf float64 // P(X <= k)
				for i := 0; i <= k; i++ {
					lc, _ := math.Lgamma(float64(n + 1))
					li, _ := math.Lgamma(float64(i + 1))
					lr, _ := math.Lgamma(float64(n - i + 1))
					cdf += math.Exp(lc - li - lr + float64(i)*math.Log(p) + float64(n-i)*math.Log1p(-p))
				}
				got := mathext.RegIncBeta(float64(k+1), float64(n-k), p)
				if math.Abs(got-(1-cdf)) > 1e-11 {
					t.Errorf("I_%g(%d, %d) = %.15g, want 1 - P(X <= %d) = %.15g", p, k+1, n-k, got, k, 1-cdf)
				}
			}
		}
	}
}

func TestTrialsNeeded(t *testing.T) {
	for _, tc := range []struct {
		level, rate float64
		want        int
	}{
		{0.95, 0.01, 299},
		{0.99, 0.01, 459},
		{0.95, 0.015, 199},
		{0.95, 0.05, 59},
		{0.99, 0.001, 4603},
		{0.9, 0.1, 22},
	} {
		got := TrialsNeeded(tc.level, tc.rate)
		if got != tc.want {
			t.Errorf("TrialsNeeded(%g, %g) = %d, want %d", tc.level, tc.rate, got, tc.want)
		}
		if upperBound(0, got, tc.level) > tc.rate || upperBound(0, got-1, tc.level) <= tc.rate {
			t.Errorf("TrialsNeeded(%g, %g) = %d is not the fewest that meet the rate", tc.level, tc.rate, got)
		}
	}
}

func TestTallyBound(t *testing.T) {
	tally := TallyOf([]Trial{{}, {Broken: true}, {Unsynchronized: true, Broken: true}, {}, {Unsynchronized: true}})
	b := tally.Bound(0.95, 0.5)
	// An unsynchronized trial that held proves nothing; one whose counts
	// prove a break is a break all the same.
	if b.Trials != 4 || b.Broken != 2 || b.Inconclusive != 1 || b.Level != 0.95 || b.MaxRate != 0.5 {
		t.Fatalf("bound = %+v, want 4 conclusive trials, 2 broken, 1 inconclusive", b)
	}
	if want := upperBound(2, 4, 0.95); b.Upper != want {
		t.Errorf("Upper = %g, want %g", b.Upper, want)
	}
	if b.Met() {
		t.Error("a bound with a broken trial is met")
	}
}

func TestBoundMet(t *testing.T) {
	for _, tc := range []struct {
		b    Bound
		want bool
	}{
		{Bound{Trials: 1, Upper: 0.95}, true}, // nothing asked
		{Bound{Trials: 459, Upper: 0.00998, MaxRate: 0.01}, true},
		{Bound{Trials: 458, Upper: 0.01001, MaxRate: 0.01}, false},
		{Bound{Trials: 5000, Broken: 1, Upper: 0.0009, MaxRate: 0.01}, false},
		{Bound{Trials: 0, Upper: 1, MaxRate: 0.01}, false},
	} {
		if got := tc.b.Met(); got != tc.want {
			t.Errorf("%+v.Met() = %v, want %v", tc.b, got, tc.want)
		}
	}
}
