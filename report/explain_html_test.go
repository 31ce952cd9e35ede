package report

import (
	"bytes"
	"context"
	"encoding/xml"
	"errors"
	"io"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/racelab/racelab/scenarios/engine"
	"github.com/racelab/racelab/scenarios/results"
	"github.com/racelab/racelab/scenarios/scenariostest"
	"github.com/racelab/racelab/targets"
)

// replayed explains story on kv against actor with seed 7, a real replay
// in virtual time.
func replayed(t *testing.T, story string) engine.Explanation {
	t.Helper()
	sc := scenariostest.Lookup(t, story)
	e, err := engine.Explain(context.Background(), &engine.Explainer{Scenario: sc, Catalog: targets.Builtin(), Target: "kv", Fixed: "actor", Seed: 7})
	if err != nil {
		t.Fatal(err)
	}
	return e
}

func explainPage(t *testing.T, e engine.Explanation) string {
	t.Helper()
	var b bytes.Buffer
	if err := ExplainHTML(&b, e); err != nil {
		t.Fatal(err)
	}
	return b.String()
}

var laneNumber = regexp.MustCompile(`class="muted">#(\d+)</text>`)

// TestExplainHTML: the page of a seeded kv race draws every mark the text
// timeline writes, one lane per request numbered 1..n in the text's order,
// the same bytes from the same seed, and nothing to fetch.
func TestExplainHTML(t *testing.T) {
	e := replayed(t, "ten-hits-one-view")
	page := explainPage(t, e)
	if again := explainPage(t, replayed(t, "ten-hits-one-view")); again != page {
		t.Error("the same seed gave a different page")
	}
	for _, bad := range []string{"<script", "<link", "src=", "href=", "url(", "@import"} {
		if strings.Contains(page, bad) {
			t.Errorf("page contains %q: it must need nothing from outside", bad)
		}
	}
	var text bytes.Buffer
	if err := Explain(&text, e); err != nil {
		t.Fatal(err)
	}
	// The text's lane order, per timeline: "  #6  16.3ms read …".
	var textOrder [][]string
	for l := range strings.Lines(text.String()) {
		if strings.Contains(l, "from the release, lanes in finishing order") {
			textOrder = append(textOrder, nil)
		}
		if f := strings.Fields(l); len(f) > 1 && strings.HasPrefix(l, "  #") {
			textOrder[len(textOrder)-1] = append(textOrder[len(textOrder)-1], strings.TrimPrefix(f[0], "#"))
		}
	}
	svgs := svgBlock.FindAllString(page, -1)
	if len(svgs) != len(e.Replays) || len(svgs) != len(textOrder) {
		t.Fatalf("%d figures, %d replays, %d text timelines", len(svgs), len(e.Replays), len(textOrder))
	}
	for i, svg := range svgs {
		wellFormed(t, svg)
		var order []string
		for _, m := range laneNumber.FindAllStringSubmatch(svg, -1) {
			order = append(order, m[1])
		}
		if !slices.Equal(order, textOrder[i]) {
			t.Errorf("figure %d lanes %v, the text's %v", i+1, order, textOrder[i])
		}
		var nums []int
		for _, n := range order {
			k, _ := strconv.Atoi(n)
			nums = append(nums, k)
		}
		slices.Sort(nums)
		for j, k := range nums {
			if k != j+1 {
				t.Errorf("figure %d numbers its lanes %v; want 1..%d", i+1, nums, len(nums))
				break
			}
		}
		if len(order) != 10 {
			t.Errorf("figure %d has %d lanes, want 10", i+1, len(order))
		}
	}
	race := svgs[0]
	for _, mark := range []string{`class="m-read"`, `class="m-write"`, `class="m-lands"`, `class="m-answer"`, `class="m-erased"`,
		"read nothing", "write 1", "lands", "1 view at", "✗ erased #6&#39;s update"} {
		if !strings.Contains(race, mark) {
			t.Errorf("the race's figure lacks %q", mark)
		}
	}
	// Each erasure the text names is drawn: the same count of red lines.
	if got, want := strings.Count(race, `<line class="m-erased"`), strings.Count(text.String(), "✗ erased"); got != want || want == 0 {
		t.Errorf("%d erasure lines drawn, the text names %d", got, want)
	}
	if strings.Contains(svgs[1], "m-erased") {
		t.Error("the fix's figure shows an erasure")
	}
	for _, want := range []string{e.Story.Title, "Hard rule: " + esc(e.Story.Rule), "How the fix works", esc(e.Replays[0].Outcome)} {
		if !strings.Contains(page, want) {
			t.Errorf("page lacks %q", want)
		}
	}
}

// TestExplainHTMLRefused: a story whose fixed store refuses draws the
// refusals, as the text says them.
func TestExplainHTMLRefused(t *testing.T) {
	e := replayed(t, "five-checkouts")
	page := explainPage(t, e)
	var text bytes.Buffer
	if err := Explain(&text, e); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(text.String(), "refused") {
		t.Skip("the replay refuses nobody")
	}
	if !strings.Contains(page, `class="m-refused"`) {
		t.Error("the page draws no refusal")
	}
}

// TestHTMLReportMarks: the run report's timeline of a traced kv trial
// carries the same marks as explain's page, from the same renderer.
func TestHTMLReportMarks(t *testing.T) {
	e := replayed(t, "ten-hits-one-view")
	rp := e.Replays[0]
	r := &results.Result{Scenario: e.Story.Name, Rule: e.Story.Rule, Targets: []results.TargetResult{
		{Target: rp.Target, Clock: rp.Clock, Trials: []results.Trial{*rp.Trial}},
	}}
	page := string(render(t, r, HTML))
	svgs := svgBlock.FindAllString(page, -1)
	if len(svgs) != 1 {
		t.Fatalf("%d figures, want 1", len(svgs))
	}
	wellFormed(t, svgs[0])
	for _, mark := range []string{"m-read", "m-write", "m-lands", "m-answer", "m-erased", "virtual time from the release"} {
		if !strings.Contains(svgs[0], mark) {
			t.Errorf("the report's timeline lacks %q", mark)
		}
	}
	if strings.Contains(page, "These lanes carry no steps") {
		t.Error("a traced trial's page says its lanes carry no steps")
	}
	for i := range rp.Trial.Requests {
		rp.Trial.Requests[i].Steps = nil
	}
	r.Targets[0].Trials[0] = *rp.Trial
	if !strings.Contains(string(render(t, r, HTML)), "These lanes carry no steps: racelab run --timeline") {
		t.Error("an untraced trial's page does not say how to get the marks")
	}
	if got := len(laneNumber.FindAllString(svgs[0], -1)); got != 10 {
		t.Errorf("%d lanes, want 10", got)
	}
}

func wellFormed(t *testing.T, svg string) {
	t.Helper()
	dec := xml.NewDecoder(strings.NewReader(svg))
	dec.Strict = true
	for {
		if _, err := dec.Token(); err != nil {
			if !errors.Is(err, io.EOF) {
				t.Fatalf("figure is not well-formed: %v\n%s", err, svg)
			}
			return
		}
	}
}

var axisTick = regexp.MustCompile(`text-anchor="middle" class="muted">([^<]*)</text>`)

// TestExplainHTMLOneAxis: the race and its fix are drawn on one time axis
// (the same ticks), so the fix's shorter burst shows as shorter; a replay
// of another kind (six-become-four's six downloads in a row) keeps its own.
func TestExplainHTMLOneAxis(t *testing.T) {
	ticks := func(svg string) string {
		var out []string
		for _, m := range axisTick.FindAllStringSubmatch(svg, -1) {
			out = append(out, m[1])
		}
		return strings.Join(out, " ")
	}
	for _, tc := range []struct {
		story     string
		race, fix int // which figures are the race and its fix
		own       int // a figure with an axis of its own, or -1
	}{
		{"ten-hits-one-view", 0, 1, -1},
		{"six-become-four", 0, 2, 1},
	} {
		e := replayed(t, tc.story)
		svgs := strings.Split(explainPage(t, e), "<svg ")[1:]
		race, fix := ticks(svgs[tc.race]), ticks(svgs[tc.fix])
		if race == "" || race != fix {
			t.Errorf("%s: the race's axis %q and the fix's %q differ", tc.story, race, fix)
		}
		if tc.own >= 0 && ticks(svgs[tc.own]) == race {
			t.Errorf("%s: figure %d is drawn on the burst's axis %q", tc.story, tc.own+1, race)
		}
	}
}
