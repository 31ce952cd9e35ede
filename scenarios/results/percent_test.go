package results

import "testing"

// Each form of a percentage keeps its own rounding at its edges: zero, a
// figure that carries into the next decade, a bound of exactly 1%, the
// steps between two significant figures, one and no decimals.
func TestPercent(t *testing.T) {
	for _, tc := range []struct {
		name string
		f    func(float64) string
		want map[float64]string
	}{
		{"Percent", Percent, map[float64]string{0.99: "99%", 0.001: "0.1%", 0.999: "99.9%", 0.95: "95%",
			1.0 / 3: "33.333333%", 0: "0%", 1e-7: "0.00001%"}},
		// Half away from zero, and a carry into the next decade written
		// with the next decade's figures.
		{"PercentNear", PercentNear, map[float64]string{0.15: "15%", 0.015: "1.5%", 0.00065: "0.065%",
			0.0005: "0.050%", 1: "100%", 0: "0%", 0.00997: "1.0%", 0.0996: "10%", 0.000125: "0.013%"}},
		// Exactly 1% stays 1%; anything above it goes up.
		{"PercentUp", PercentUp, map[float64]string{0.01: "1.0%", 0.01001: "1.1%", 0.000121: "0.013%",
			0.0991: "10%", 0: "0%"}},
		{"PercentShort", PercentShort, map[float64]string{0.37: "37%", 0.1: "10%", 0.012: "1.2%",
			0.01: "1.0%", 0.0005: "0.05%", 0.00123: "0.12%", 0: "0%"}},
	} {
		for in, want := range tc.want {
			if got := tc.f(in); got != want {
				t.Errorf("%s(%v) = %q, want %q", tc.name, in, got, want)
			}
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
