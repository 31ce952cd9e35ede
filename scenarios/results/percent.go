package results

import (
	"math"
	"strconv"
	"strings"
)

// The percentages racelab writes, in one place. Each form keeps its own
// rounding, for what it says:
//
//	Percent       a share someone chose (a confidence level, a rate asked
//	              for, a constant), as they would have typed it: 99%, 0.1%;
//	              and a load's share of errors, in full
//	PercentNear   a measured rate, to about two significant figures: 15%,
//	              1.5%, 0.065%
//	PercentUp     the same rounded up, for an upper bound
//	PercentShort  a measured share as a threshold shows it: 37%, 1.2%, 0.05%
//	PercentShare  n of total to one decimal, so that shares add up: 97.5%

// Percent writes a fraction to a millionth of a percent and no further,
// with no trailing zeros, so that a share someone chose reads as they
// would have typed it: 0.99 → "99%", 0.001 → "0.1%", 0.999 → "99.9%".
func Percent(f float64) string {
	return strconv.FormatFloat(math.Round(f*100*1e6)/1e6, 'f', -1, 64) + "%"
}

// PercentNear writes a measured rate with about two significant figures,
// rounded to the nearest: 0.15 → "15%", 0.015 → "1.5%", 0.00065 →
// "0.065%", 1 → "100%".
func PercentNear(f float64) string { return percentRounded(f, math.Round) }

// PercentUp is PercentNear rounded up, for bounds: a bound written smaller
// than it is would claim more than the trials prove.
func PercentUp(f float64) string {
	// The nudge keeps a bound that is exactly 1% (up to float noise) from
	// being rounded up to 1.1%.
	return percentRounded(f*(1-1e-12), math.Ceil)
}

func percentRounded(f float64, round func(float64) float64) string {
	p := f * 100
	if p <= 0 {
		return "0%"
	}
	digits := func(p float64) int {
		switch {
		case p < 1:
			return 1 - int(math.Floor(math.Log10(p))) // two significant figures
		case p < 10:
			return 1
		}
		return 0
	}
	d := digits(p)
	scale := math.Pow(10, float64(d))
	p = round(p*scale) / scale
	// Rounding can carry into the next decade (0.997 → 1.00): write that
	// as 1.0, not with a third figure.
	return strconv.FormatFloat(p, 'f', min(d, digits(p)), 64) + "%"
}

// PercentShort writes a measured share as short as its precision allows,
// as a threshold's figure shows it (and a saved result keeps it): whole
// percents from 10%, one decimal from 1%, two significant figures below,
// without trailing zeros: 0.37 → "37%", 0.012 → "1.2%", 0.0005 → "0.05%".
func PercentShort(f float64) string {
	p := f * 100
	switch {
	case p == 0 || p >= 10:
		return strconv.FormatFloat(p, 'f', 0, 64) + "%"
	case p >= 1:
		return strconv.FormatFloat(p, 'f', 1, 64) + "%"
	default:
		return strconv.FormatFloat(p, 'g', 2, 64) + "%"
	}
}

// PercentShare writes n of total as a percentage to one decimal, so that
// the shares of a distribution add up to 100% as written ("97.5%",
// "2.5%", "50%"); a share too small for one decimal gets PercentNear's two
// significant figures.
func PercentShare(n, total int) string {
	p := 100 * float64(n) / float64(total)
	if p < 0.05 {
		return PercentNear(p / 100)
	}
	return strings.TrimSuffix(strconv.FormatFloat(p, 'f', 1, 64), ".0") + "%"
}
