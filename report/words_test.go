package report

import (
	"bytes"
	"regexp"
	"strings"
	"testing"

	"github.com/racelab/racelab/scenarios/results"
)

// renderString renders r in f with o, failing t on an error.
func renderString(t *testing.T, r *results.Result, f Format, o Options) string {
	t.Helper()
	var b bytes.Buffer
	if err := Render(&b, r, f, o); err != nil {
		t.Fatal(err)
	}
	return b.String()
}

// TestReportNamesNoFlag checks that every report's advice names fields,
// said as flags only by the Say it is given: rendered without one, no
// format prints a flag, and each advice line names its field.
func TestReportNamesNoFlag(t *testing.T) {
	flag := regexp.MustCompile(`(^|[ (])--?[a-z][a-z-]*\b`)
	for _, fx := range fixtures {
		for _, f := range []Format{Table, Markdown, JUnit} {
			out := renderString(t, fx.result(), f, Options{Saved: true})
			for _, line := range strings.Split(out, "\n") {
				if m := flag.FindString(line); m != "" && !strings.Contains(line, "---") {
					t.Errorf("%s as %s names %q with no Say: %q", fx.name, f, m, line)
				}
			}
		}
	}
	hidden := renderString(t, raceNotShown(), Table, Options{})
	if !strings.Contains(hidden, "kv: the race did not show; raise Requests or Trials") {
		t.Errorf("without Say the advice does not name its fields:\n%s", hidden)
	}
}

// TestRaiseOnlyWhatHelps checks that a race that did not show is told to
// raise what would show it: the burst's requests or the trials for a
// burst, only the trials for a script or a stream, where -n does nothing.
func TestRaiseOnlyWhatHelps(t *testing.T) {
	o := Options{Say: testFlags}
	for _, tc := range []struct {
		name string
		set  func(*results.Result)
		want string
	}{
		{"burst", func(*results.Result) {}, "kv: the race did not show; raise -n or --trials\n"},
		{"script", func(r *results.Result) { r.Script = "2 buyers, minutes apart, in virtual time" }, "kv: the race did not show; raise --trials\n"},
		{"stream", func(r *results.Result) { r.Stream = "Poisson arrivals at 6/h" }, "kv: the race did not show; raise --trials\n"},
	} {
		r := raceNotShown()
		tc.set(r)
		if out := renderString(t, r, Table, o); !strings.Contains(out, tc.want) {
			t.Errorf("%s: no %q in:\n%s", tc.name, tc.want, out)
		}
	}
}

// TestKeptSaidWhenSaved checks that the line saying how many trials keep
// their requests comes only with a result kept as JSON, and that a soft
// rule is said with its bound under a table with a SOFT RULE column.
func TestKeptSaidWhenSaved(t *testing.T) {
	const kept = "kv: 2 of 5 trials keep their requests in this result (--keep-all keeps all)"
	sampled := expectRace()
	for i := range sampled.Targets {
		tr := &sampled.Targets[i]
		all := results.TallyOf(tr.Trials)
		tr.Tally, tr.Trials = &all, tr.Trials[:2] // 2 of 5 trials kept
	}
	for _, saved := range []bool{false, true} {
		out := renderString(t, sampled, Table, Options{Say: testFlags, Saved: saved})
		if got := strings.Contains(out, kept); got != saved {
			t.Errorf("Saved %v: says what the JSON keeps: %v, want %v", saved, got, saved)
		}
	}
	r := raceNotShown()
	if out := renderString(t, r, Table, Options{}); strings.Contains(out, "soft rule") {
		t.Errorf("a story with no soft rule says one:\n%s", out)
	}
	r.Soft = "at most 6 admitted a window: the limit of 5 with a tolerance of 1"
	out := renderString(t, r, Table, Options{})
	if !strings.Contains(out, "SOFT RULE") || !strings.Contains(out, "\nsoft rule: at most 6 admitted a window: the limit of 5 with a tolerance of 1\n") {
		t.Errorf("the soft rule's bound is not said:\n%s", out)
	}
}
