package report

import (
	"fmt"
	"strings"

	"github.com/racelab/racelab/scenarios/results"
)

// causesLine says why some of a race file's trials proved nothing, each
// distinct cause with its count and one trial, for a target whose verdict
// they did not take away (InconclusiveWhy says them for one they did);
// "" when every trial proved something.
func causesLine(s *results.Tally, label string) string {
	if s.Inconclusive == 0 || len(s.Causes) == 0 {
		return ""
	}
	return fmt.Sprintf("%s: %d of %d trials proved nothing: %s", label, s.Inconclusive, s.Trials, strings.Join(s.Causes.Lines(), "; "))
}

// uncounted says the result is a race file's that declares no counted::
// its COUNTED column has nothing to show.
func uncounted(r *results.Result) bool {
	return r.Settings.Uncounted()
}
