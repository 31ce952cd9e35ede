package report

import (
	"strings"
	"testing"
	"time"

	"github.com/racelab/racelab/scenarios/results"
)

// sixOfFiveStrictBroke: six-of-five, whose table has a SOFT RULE column
// after VERDICT. SQLite, which must hold, admitted six in a window: its
// hard rule broke, and the soft rule (a tolerance of one) held.
func sixOfFiveStrictBroke() *results.Result {
	sq := broken(trial(0, "caller-7a2e-1-0", 6, 6, 0, 6, 900*time.Microsecond), 1, 0,
		"sqlite: 6 requests admitted (6 in one window) against a limit of 5 a window, 6 counted: 1 over the limit")
	sq.SetFigure("windows", 6)
	actor := trial(0, "caller-7a2e-0-0", 5, 7, 0, 5, 70*time.Microsecond)
	actor.SetFigure("windows", 5)
	r := result("six-of-five", "at most 5 requests admitted a caller per 60s window, and every admitted request counted", 12, 1, 1,
		target("actor", guaranteeActor, results.ExpectHold, true, actor),
		target("sqlite", guaranteeSQLite, results.ExpectHold, true, sq))
	r.Soft = "at most 6 admitted a window: the limit of 5 with a tolerance of 1, enough for abuse protection"
	r.Figures = []results.Figure{{Name: "windows", Words: "admitted per window", Per: "window"}}
	return r
}

// TestVerdictColumnByTitle: the renderers that single out the verdict
// find it by its title, not as the row's last cell, which for a story with
// a soft rule is the soft rule's.
func TestVerdictColumnByTitle(t *testing.T) {
	r := sixOfFiveStrictBroke()
	s := summarize(r, Options{})
	if last := s.cols[len(s.cols)-1].title; last != softColumn.title {
		t.Fatalf("the last column is %q; this test wants a table whose last column is %q", last, softColumn.title)
	}
	verdict := s.rows[1][s.verdictIndex()]
	if !strings.Contains(verdict, "BROKEN") {
		t.Fatalf("sqlite's verdict cell reads %q; want it BROKEN", verdict)
	}

	t.Run("junit", func(t *testing.T) {
		p := parseJUnit(t, render(t, r, JUnit))
		c := p.Suites[0].Cases[1]
		if c.Failure == nil {
			t.Fatalf("sqlite broke a hard rule it must hold; want a <failure>, got %+v", c)
		}
		if want := "sqlite: " + verdict; c.Failure.Message != want {
			t.Errorf("failure message %q; want %q", c.Failure.Message, want)
		}
	})
	t.Run("html", func(t *testing.T) {
		page := string(render(t, r, HTML))
		want := `<td class="v-` + verdictClass(&r.Targets[1]) + `">` + esc(verdict) + `</td>`
		if !strings.Contains(page, want) {
			t.Errorf("the page lacks the coloured verdict cell %s", want)
		}
		if bad := `<td class="v-` + verdictClass(&r.Targets[1]) + `">holds</td>`; strings.Contains(page, bad) {
			t.Errorf("the page colours the soft rule's cell as the verdict: %s", bad)
		}
	})
}
