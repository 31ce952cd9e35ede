package report

import (
	"fmt"
	"maps"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/racelab/racelab/scenarios/results"
)

// softCell is the soft rule's verdict: "holds", "holds in 200/200",
// "broken in 3/200", "inconclusive in 20/20". It is said, never judged against an expectation: the
// hard rule decides the run.
func softCell(s *results.Tally, multi bool) string {
	n := s.Trials
	if n == 0 {
		return none
	}
	in := func(k int) string {
		if !multi {
			return ""
		}
		return fmt.Sprintf(" in %d/%d", k, n)
	}
	switch {
	case s.SoftBroken > 0:
		return "broken" + in(s.SoftBroken)
	case s.SoftTooInconclusive():
		// A failed request may have taken effect: holding needs proof.
		return "inconclusive" + in(s.SoftInconclusive)
	}
	return "holds" + in(n)
}

// storyLines are the lines a story's own figures add under the table,
// each said as the result declares it (results.Figure): each value's share
// ("admitted per window: 5 in 97.5%, 6 in 2.5% (40 windows)"), or a
// spread over the trials that had one ("exposure after the cancel: median
// 31s, max 44s over the 12 trials exposed (bound 45s)").
func storyLines(r *results.Result, s *results.Tally, label string) []string {
	var out []string
	for _, f := range r.Figures {
		d := s.Figures[f.Name]
		var line string
		if f.Spread {
			line = spreadLine(f, d, s)
		} else {
			line = sharesLine(f, d)
		}
		if line != "" {
			out = append(out, label+": "+f.Words+": "+line)
		}
	}
	return out
}

// sharesLine says each value of d with its share of them all: "5 in 97.5%,
// 6 in 2.5% (40 windows)"; "" when d has none.
func sharesLine(f results.Figure, d results.Distribution) string {
	total := d.Count()
	if total == 0 {
		return ""
	}
	var parts []string
	for _, v := range slices.Sorted(maps.Keys(d)) {
		parts = append(parts, fmt.Sprintf("%s in %s", figureValue(f, v), results.PercentShare(d[v], total)))
	}
	return fmt.Sprintf("%s (%s)", strings.Join(parts, ", "), results.Plural(int64(total), f.Per))
}

// spreadLine says the median and the maximum of d over the trials of s
// that had a value, "none in any trial" when none had, then the trials'
// Over in the story's words; "" when there were no trials.
func spreadLine(f results.Figure, d results.Distribution, s *results.Tally) string {
	if s.Trials == 0 {
		return ""
	}
	line := "none in any trial"
	if median, ok := d.Median(); ok {
		line = fmt.Sprintf("median %s, max %s over the %s %s", figureValue(f, median), figureValue(f, d.Max()),
			results.Plural(int64(d.Count()), "trial"), f.Per)
		if f.Bound > 0 {
			line += fmt.Sprintf(" (bound %s)", figureBound(f))
		}
	}
	if f.Over != "" {
		line += fmt.Sprintf("; %s %s in %s", results.Plural(s.Over, f.Over), f.OverWords, results.Plural(int64(s.Trials), "trial"))
	}
	return line
}

// figureValue writes one value of a figure: a duration to the millisecond
// in the unit that suits it, a count as it is.
func figureValue(f results.Figure, v int64) string {
	if f.Duration {
		return formatDuration(time.Duration(v).Round(time.Millisecond))
	}
	return strconv.FormatInt(v, 10)
}

// figureBound writes a figure's bound as it was set.
func figureBound(f results.Figure) string {
	if f.Duration {
		return formatDuration(time.Duration(f.Bound))
	}
	return strconv.FormatInt(f.Bound, 10)
}
