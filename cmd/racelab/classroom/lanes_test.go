package classroom

import (
	"encoding/xml"
	"strings"
	"testing"
	"time"

	"github.com/racelab/racelab/scenarios"
	"github.com/racelab/racelab/scenarios/results"
	"github.com/racelab/racelab/scenarios/scenariostest"
)

// TestLanes: two hits that both read nothing and both write 1, the second
// landing on the first: the lanes number every step in time order (the
// requests sent at one instant are one step), say each in words, say whose
// update the second erased, and escape what the store recorded.
func TestLanes(t *testing.T) {
	sc := scenariostest.Lookup(t, "ten-hits-one-view")
	ms := time.Millisecond
	hit := func(i int, write, lands, ret time.Duration) results.Request {
		return results.Request{Index: i, Invoke: 0, Return: ret, Outcome: results.Allowed, Value: 1, Steps: []results.Step{
			{At: ms, Op: "read", Key: "views:<post>", Note: "not found"},
			{At: write, Op: "write", Key: "views:<post>", Value: "1"},
			{At: lands, Op: "write-lands", Key: "views:<post>", Value: "1"},
		}}
	}
	trial := &results.Trial{Key: "<post>", Requests: []results.Request{hit(0, 2*ms, 30*ms, 31*ms), hit(1, 3*ms, 32*ms, 33*ms)}}
	sc.Words(trial) // as the engine records a trial
	l := drawLanes(sc, trial, "kv <naive>", results.ClockVirtual)
	want := []string{
		"0: #1 is sent; 0: #2 is sent",
		"1.0 ms: #1 reads nothing at views:<post> (not found)",
		"1.0 ms: #2 reads nothing at views:<post> (not found)",
		"2.0 ms: #1 writes 1 at views:<post>",
		"3.0 ms: #2 writes 1 at views:<post>",
		"30.0 ms: #1 has its write land: 1",
		"31.0 ms: #1 is answered: 1 view",
		"32.0 ms: #2 has its write land: 1",
		"33.0 ms: #2 is answered: 1 view; its write erased #1's update",
	}
	if strings.Join(l.steps, "\n") != strings.Join(want, "\n") {
		t.Errorf("steps:\n%s\nwant:\n%s", strings.Join(l.steps, "\n"), strings.Join(want, "\n"))
	}
	if err := xml.Unmarshal([]byte(l.svg), new(struct{})); err != nil {
		t.Fatalf("not well-formed SVG: %v\n%s", err, l.svg)
	}
	for _, s := range []string{`aria-label="kv &lt;naive&gt;: one lane per request, virtual time from the release"`,
		"✗ erased #1", `data-step="9"`, "read nothing", "write 1", "virtual time →"} {
		if !strings.Contains(l.svg, s) {
			t.Errorf("the SVG lacks %q", s)
		}
	}
	if strings.Contains(l.svg, "<post>") || strings.Contains(l.svg, `data-step="10"`) {
		t.Error("the SVG holds an unescaped key or a step beyond the last")
	}
}

// TestLanesCapped: a wide burst draws its first maxLanes lanes and says so.
func TestLanesCapped(t *testing.T) {
	sc, _ := scenarios.Lookup("ten-hits-one-view")
	trial := &results.Trial{}
	for i := range maxLanes + 5 {
		trial.Requests = append(trial.Requests, results.Request{Index: i, Invoke: time.Duration(i) * time.Microsecond, Return: time.Millisecond, Outcome: results.Allowed, Value: int64(i + 1)})
	}
	l := drawLanes(sc, trial, "sqlite", results.ClockReal)
	if len(l.steps) != 2*maxLanes || !strings.Contains(l.svg, "the first 30 of 35 requests are drawn") || !strings.Contains(l.svg, "real time →") {
		t.Errorf("%d steps; want %d, and a note that the first %d of %d are drawn", len(l.steps), 2*maxLanes, maxLanes, maxLanes+5)
	}
}

// TestLanesStepPerInstant: what one request does at one instant (KV's read
// and write, a landing and its answer) is one step, so a burst of ten on
// KV is about twenty steps, not fifty.
func TestLanesStepPerInstant(t *testing.T) {
	sc, _ := scenarios.Lookup("ten-hits-one-view")
	trial := &results.Trial{}
	for i := range 10 {
		at := time.Duration(10+i) * time.Millisecond
		lands := at + 30*time.Millisecond
		trial.Requests = append(trial.Requests, results.Request{Index: i, Return: lands, Outcome: results.Allowed, Value: 1, Steps: []results.Step{
			{At: at, Op: "read", Key: "views:p", Note: "not found"},
			{At: at, Op: "write", Key: "views:p", Value: "1"},
			{At: lands, Op: "write-lands", Key: "views:p", Value: "1"},
		}})
	}
	l := drawLanes(sc, trial, "kv", results.ClockVirtual)
	if len(l.steps) != 21 {
		t.Fatalf("%d steps for 10 requests; want 21: one to send them, then each one's read-and-write and its landing-and-answer:\n%s",
			len(l.steps), strings.Join(l.steps, "\n"))
	}
	if !strings.HasPrefix(l.steps[1], "10.0 ms: #1 reads nothing") || !strings.Contains(l.steps[1], "; 10.0 ms: #1 writes 1") {
		t.Errorf("step 2 is %q; want #1's read and write together", l.steps[1])
	}
}
