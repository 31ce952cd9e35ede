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

// storyLines are the lines a story's own figures add under the table:
// the distribution of requests admitted per window (six-of-five), the
// exposure after a cancel (stale-plan).
func storyLines(r *results.Result, s *results.Tally, label string) []string {
	var out []string
	if len(s.Windows) > 0 {
		total := 0
		for _, n := range s.Windows {
			total += n
		}
		var parts []string
		for _, a := range slices.Sorted(maps.Keys(s.Windows)) {
			parts = append(parts, fmt.Sprintf("%d in %s", a, shareOf(s.Windows[a], total)))
		}
		out = append(out, fmt.Sprintf("%s: admitted per window: %s (%s)", label, strings.Join(parts, ", "), plural(int64(total), "window")))
	}
	if r.Settings != nil && r.Settings.Bound > 0 && s.Trials > 0 {
		ex := slices.Clone(s.Exposures)
		slices.Sort(ex)
		line := fmt.Sprintf("%s: exposure after the cancel: none in any trial", label)
		if len(ex) > 0 {
			line = fmt.Sprintf("%s: exposure after the cancel: median %s, max %s over the %s exposed (bound %s)", label,
				formatDuration(ex[len(ex)/2].Round(time.Millisecond)), formatDuration(ex[len(ex)-1].Round(time.Millisecond)),
				plural(int64(len(ex)), "trial"), formatDuration(r.Settings.Bound))
		}
		line += fmt.Sprintf("; %s given away after it in %s", plural(s.Over, "download"), plural(int64(s.Trials), "trial"))
		out = append(out, line)
	}
	return out
}

// shareOf writes n of total as a percentage to one decimal, so that the
// shares of a distribution add up to 100% as written ("97.5%", "2.5%");
// a share too small for one decimal gets two significant figures.
func shareOf(n, total int) string {
	p := 100 * float64(n) / float64(total)
	if p < 0.05 {
		return percentOf(p / 100)
	}
	return strings.TrimSuffix(strconv.FormatFloat(p, 'f', 1, 64), ".0") + "%"
}
