package results

import "testing"

// Each form of a percentage keeps its own rounding at its edges: zero, a
// figure that carries into the next decade, a bound of exactly 1%, the
// steps between two significant figures, one and no decimals.
func TestPercent(t *testing.T) {
	for _, tc := range []struct {
		name string
		f    func(float64) string
		in   float64
		want string
	}{
		{"Percent", Percent, 0.99, "99%"},
		{"Percent", Percent, 0.001, "0.1%"},
		{"Percent", Percent, 0.999, "99.9%"},
		{"Percent", Percent, 0.95, "95%"},
		{"Percent", Percent, 1.0 / 3, "33.333333%"},
		{"Percent", Percent, 0, "0%"},
		{"Percent", Percent, 1e-7, "0.00001%"},

		{"PercentNear", PercentNear, 0.15, "15%"},
		{"PercentNear", PercentNear, 0.015, "1.5%"},
		{"PercentNear", PercentNear, 0.00065, "0.065%"},
		{"PercentNear", PercentNear, 0.0005, "0.050%"},
		{"PercentNear", PercentNear, 1, "100%"},
		{"PercentNear", PercentNear, 0, "0%"},
		{"PercentNear", PercentNear, 0.00997, "1.0%"},    // carries into the next decade
		{"PercentNear", PercentNear, 0.0996, "10%"},      // and past one decimal
		{"PercentNear", PercentNear, 0.000125, "0.013%"}, // half away from zero

		{"PercentUp", PercentUp, 0.01, "1.0%"}, // exactly 1% stays 1%
		{"PercentUp", PercentUp, 0.01001, "1.1%"},
		{"PercentUp", PercentUp, 0.000121, "0.013%"},
		{"PercentUp", PercentUp, 0.0991, "10%"},
		{"PercentUp", PercentUp, 0, "0%"},

		{"PercentShort", PercentShort, 0.37, "37%"},
		{"PercentShort", PercentShort, 0.1, "10%"},
		{"PercentShort", PercentShort, 0.012, "1.2%"},
		{"PercentShort", PercentShort, 0.01, "1.0%"},
		{"PercentShort", PercentShort, 0.0005, "0.05%"},
		{"PercentShort", PercentShort, 0.00123, "0.12%"},
		{"PercentShort", PercentShort, 0, "0%"},
	} {
		if got := tc.f(tc.in); got != tc.want {
			t.Errorf("%s(%v) = %q, want %q", tc.name, tc.in, got, tc.want)
		}
	}
}

// A distribution's shares are written to add up: 195 and 5 of 200 are
// 97.5% and 2.5%, not 98% and 2.5%.
func TestPercentShare(t *testing.T) {
	for _, tc := range []struct {
		n, total int
		want     string
	}{
		{195, 200, "97.5%"},
		{5, 200, "2.5%"},
		{111, 200, "55.5%"},
		{88, 200, "44%"},
		{200, 200, "100%"},
		{1, 3, "33.3%"},
		{1, 10000, "0.010%"},
	} {
		if got := PercentShare(tc.n, tc.total); got != tc.want {
			t.Errorf("PercentShare(%d, %d) = %q, want %q", tc.n, tc.total, got, tc.want)
		}
	}
}
