package report

import (
	"bytes"
	"fmt"
	"io"
	"time"

	"github.com/racelab/racelab/scenarios/engine"
	"github.com/racelab/racelab/scenarios/results"
)

// ExplainHTML writes e as one self-contained page, for a workshop screen
// or a handout to keep: explain's text (the story, its rule, each replay's
// outcome, how the fix works, the ending) with each replayed trial drawn
// as an SVG timeline, the same lanes in the same order as the text's, on
// one time axis. Like the run report it has no script and fetches
// nothing; the same seed gives the same bytes.
func ExplainHTML(w io.Writer, e engine.Explanation) error {
	sc := e.Story
	var b bytes.Buffer
	b.WriteString(pageHead("racelab explain: " + sc.Name))
	fmt.Fprintf(&b, "<h1>racelab explain</h1>\n<section>\n<h2>%s</h2>\n<p><b>%s</b></p>\n", esc(sc.Name), esc(sc.Title))
	fmt.Fprintf(&b, "<p>%s</p>\n<p class=\"rule\">Hard rule: %s.</p>\n", esc(sc.Story), esc(sc.Rule))
	if len(e.Replays) > 0 {
		fmt.Fprintf(&b, "<p class=\"note\">Each lane is one request of the trial, in the order the requests finished, numbered from 1; "+
			"every lane shares the trial's time axis. %s</p>\n", esc(svgLegend))
	}
	for i, r := range e.Replays {
		fmt.Fprintf(&b, "<h3>%d. %s</h3>\n<figure>\n", i+1, esc(r.Heading))
		unit := "real time"
		if r.Clock == results.ClockVirtual {
			unit = "virtual time"
		}
		svgTimeline(&b, fmt.Sprintf("timeline of trial %d on %s", r.Trial.Index+1, r.Target), r.Clock, r.Trial, laneAnswers(r.Trial), 0, sharedAxis(e.Replays, r))
		fmt.Fprintf(&b, "<figcaption><b>%s</b>, trial %d (%s from the release, lanes in finishing order)</figcaption>\n</figure>\n",
			esc(r.Target), r.Trial.Index+1, unit)
		for _, line := range readbackLines(r.Trial.Readback) {
			fmt.Fprintf(&b, "<p class=\"note\">%s</p>\n", esc(line))
		}
		fmt.Fprintf(&b, "<p>%s</p>\n", esc(r.Outcome))
	}
	fmt.Fprintf(&b, "<h3>%d. How the fix works</h3>\n<p>%s</p>\n", len(e.Replays)+1, esc(sc.Fix))
	if end := e.Ending; end != nil {
		fmt.Fprintf(&b, "<h3>%d. %s</h3>\n<ul class=\"lines\">\n", len(e.Replays)+2, esc(end.Heading))
		for _, it := range end.Items {
			fmt.Fprintf(&b, "<li><b>%s</b>: %s. %s</li>\n", esc(it.Part), esc(it.Mark), esc(it.Why))
		}
		b.WriteString("</ul>\n")
		if end.Closing != "" {
			fmt.Fprintf(&b, "<p>%s</p>\n", esc(end.Closing))
		}
	}
	if e.Footer != "" {
		fmt.Fprintf(&b, "<p class=\"note\">%s</p>\n", esc(e.Footer))
	}
	b.WriteString("</section>\n</main>\n</body>\n</html>\n")
	_, err := w.Write(b.Bytes())
	return err
}

// sharedAxis is where r's time axis ends. The race and its fix fire the
// same burst, and drawn each on its own scale (0–50 ms beside 0–20 ms)
// they would hide the very difference they show: on one clock they share
// one axis. Other replays (a sequence, a day-long script) keep their own.
func sharedAxis(replays []engine.Replay, r engine.Replay) time.Duration {
	var end time.Duration
	for _, o := range replays {
		if r.Compared && o.Compared && o.Clock == r.Clock {
			end = max(end, trialEnd(o.Trial))
		}
	}
	return end
}
