package racefile_test

import (
	"bytes"
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/racelab/racelab/internal/testwait"
	"github.com/racelab/racelab/report"
	"github.com/racelab/racelab/scenarios/engine"
	loadpkg "github.com/racelab/racelab/scenarios/load"
	"github.com/racelab/racelab/scenarios/racefile"
	"github.com/racelab/racelab/scenarios/results"
)

// loadText reads a race file written out from src, as a story.
func loadText(t testing.TB, src string) (*racefile.File, *engine.Scenario) {
	t.Helper()
	path := filepath.Join(t.TempDir(), "t.race.yaml")
	if err := os.WriteFile(path, []byte(src), 0o644); err != nil {
		t.Fatal(err)
	}
	f, err := racefile.Load(context.Background(), path)
	if err != nil {
		t.Fatal(err)
	}
	sc, err := f.Scenario(nil)
	if err != nil {
		t.Fatal(err)
	}
	return f, sc
}

// play runs sc against one target for trials trials.
func play(t testing.TB, sc *engine.Scenario, trials int, target string) *results.Result {
	t.Helper()
	res, err := engine.Run(context.Background(), engine.Plan{Scenario: sc, Trials: trials, Targets: []string{target}})
	if err != nil {
		t.Fatal(err)
	}
	if e := res.Targets[0].Error; e != "" {
		t.Fatalf("target error: %s", e)
	}
	return res
}

// table is r as the table report draws it, wide.
func table(t testing.TB, r *results.Result) string {
	t.Helper()
	var b bytes.Buffer
	if err := report.Render(&b, r, report.Table, report.Options{NoColor: true}); err != nil {
		t.Fatal(err)
	}
	return b.String()
}

// counter serves per-key counters, each POST applied under one lock (a
// serial service): answer decides what the n-th POST on a key (from 1) is
// told, and apply whether it counts, on the k-th key seen (from 0).
func counter(t testing.TB, answer func(n int) int, apply func(k, n int) bool) *httptest.Server {
	var mu sync.Mutex
	posts, counts, order := map[string]int{}, map[string]int{}, map[string]int{}
	mux := http.NewServeMux()
	mux.HandleFunc("POST /things/{key}", func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		key := r.PathValue("key")
		if _, ok := order[key]; !ok {
			order[key] = len(order)
		}
		posts[key]++
		n := posts[key]
		if apply(order[key], n) {
			counts[r.PathValue("key")]++
		}
		mu.Unlock()
		reply(w, answer(n), map[string]any{"n": n, "trial": r.Header.Get("X-Trial")})
	})
	mux.HandleFunc("GET /things/{key}", func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		n := counts[r.PathValue("key")]
		mu.Unlock()
		reply(w, 200, map[string]any{"count": n, "list": []int{}, "zero": 0})
	})
	mux.HandleFunc("GET /page/{key}", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		_, _ = w.Write([]byte("<html><body>sign in</body></html>"))
	})
	mux.HandleFunc("GET /locked/{key}", func(w http.ResponseWriter, r *http.Request) {
		reply(w, 401, map[string]any{"error": "sign in"})
	})
	srv := httptest.NewServer(mux)
	t.Cleanup(srv.Close)
	return srv
}

// TestErroredAnswersWeighedEveryWay: a serial service that applies every
// request but answers 500 to half of them is not broken (the rule holds
// if the failed ones took effect): inconclusive, and it says why. A
// coupon service that gives 10 discounts while 3 answers errored is
// broken however those 3 went.
func TestErroredAnswersWeighedEveryWay(t *testing.T) {
	const trials = 3
	testwait.SideBySide(t, testwait.Case{Name: "applies all, 500 to half", Test: func(t *testing.T) {
		_, sc := loadText(t, `race: half-500
requests: 10
burst:
  - request: POST /things/{{key}}
    allowed: status == 200
readback:
  - request: GET /things/{{key}}
    as: things
counted: things.count
rule: things.count == allowed
`)
		srv := counter(t, func(n int) int {
			if n%2 == 0 {
				return 500
			}
			return 200
		}, func(int, int) bool { return true })
		res := play(t, sc, trials, "half="+base(srv))
		tr := &res.Targets[0]
		s := tr.Summary()
		if s.Broken != 0 || s.Inconclusive != trials || tr.Verdict() == "BROKEN" {
			t.Fatalf("%d broken, %d inconclusive of %d (first why %q); want none broken, all inconclusive", s.Broken, s.Inconclusive, s.Trials, s.FirstWhy)
		}
		if got := tr.Trials[0]; got.Errors != 5 || got.Allowed != 5 || got.Counted != 10 {
			t.Fatalf("trial 1: %d errors, %d allowed, %d counted; want 5, 5, 10", got.Errors, got.Allowed, got.Counted)
		}
		if got := sc.Account(&tr.Trials[0], "half"); !strings.HasPrefix(got, "half: not judged: errored requests") {
			t.Errorf("trial 1 told as %q; want it not judged, for its errored requests", got)
		}
		out := table(t, res)
		want := "half: inconclusive: 3 of 3 trials proved nothing: errored requests (first: POST /things/{{key}} answered 500 Internal Server Error, application/json): " +
			"the rule breaks in some of the ways they could have gone, not in all (3, e.g. #1)"
		if !strings.Contains(out, want) {
			t.Errorf("the table says:\n%s\nwant the line %q", out, want)
		}
		// Markdown and JUnit say it too.
		for _, f := range []report.Format{report.Markdown, report.JUnit} {
			var b bytes.Buffer
			if err := report.Render(&b, res, f, report.Options{}); err != nil {
				t.Fatal(err)
			}
			if !strings.Contains(b.String(), "the rule breaks in some of the ways they could have gone, not in all (3, e.g. #1)") {
				t.Errorf("%s says:\n%s\nwant the cause with its count", f, b.String())
			}
		}
	}}, testwait.Case{Name: "10 discounts, 3 errored", Test: func(t *testing.T) {
		_, sc := loadText(t, `race: coupon-errors
requests: 10
burst:
  - request: POST /things/{{key}}
    allowed: status == 200
    refused: status == 409
readback:
  - request: GET /things/{{key}}
    as: account
counted: account.count
rule: allowed <= 1 && account.count == allowed
`)
		srv := counter(t, func(n int) int {
			if n <= 3 {
				return 503
			}
			return 200
		}, func(int, int) bool { return true })
		res := play(t, sc, trials, "naive="+base(srv))
		s := res.Targets[0].Summary()
		if s.Broken != trials {
			t.Fatalf("%d of %d trials broken (inconclusive %d, first error %q); want every one", s.Broken, s.Trials, s.Inconclusive, s.FirstError)
		}
		tr := res.Targets[0].Trials[0]
		if tr.Errors != 3 || tr.Counted != 10 || !strings.HasSuffix(tr.Why, "(however the 3 errored requests went)") {
			t.Errorf("trial 1: %d errors, counted %d, why %q; want 3, 10, and a why that says the errors were weighed", tr.Errors, tr.Counted, tr.Why)
		}
		// counted - allowed, in the way least damning: all 3 allowed.
		if tr.Severity != 0 {
			t.Errorf("severity %v; want 10 - 10 = 0 (every errored request taken as allowed)", tr.Severity)
		}
	}})
}

// TestInconclusiveSaysWhy: each way a trial can prove nothing keeps its
// cause, and the table says it under the target with its count and one
// trial. A rule that errors leaves the trial inconclusive, never "holds".
func TestInconclusiveSaysWhy(t *testing.T) {
	srv := counter(t, func(int) int { return 200 }, func(int, int) bool { return true })
	const head = `race: why
requests: 3
burst:
  - request: POST /things/{{key}}
    allowed: status == 200
`
	const things = `readback:
  - request: GET /things/{{key}}
    as: things
`
	cases := []struct{ name, tail, cause string }{
		{"division by zero", things + "rule: allowed / things.zero > 0\n", "rule: division by zero"},
		{"index out of range", things + "rule: things.list[3] == 1\n", "rule: index out of bounds: 3"},
		{"missing field", things + "rule: things.missing == 1\n", "rule: no such key: missing"},
		{"counted errs", things + "counted: things.missing\nrule: allowed >= 0\n", "counted: no such key: missing"},
		{"html readback", "readback:\n  - request: GET /page/{{key}}\n    as: page\nrule: allowed >= 0\n",
			"readback GET /page/…: 200 OK, text/html, not JSON"},
		{"404 readback", "readback:\n  - request: GET /nowhere/{{key}}\n    as: page\nrule: allowed >= 0\n",
			"readback GET /nowhere/…: 404 Not Found, text/plain"},
		{"401 readback", "readback:\n  - request: GET /locked/{{key}}\n    as: page\nrule: allowed >= 0\n",
			"readback GET /locked/…: 401 Unauthorized, application/json"},
	}
	var run []testwait.Case
	for _, c := range cases {
		run = append(run, testwait.Case{Name: c.name, Test: func(t *testing.T) {
			_, sc := loadText(t, head+c.tail)
			res := play(t, sc, 2, "svc="+base(srv))
			tr := &res.Targets[0]
			s := tr.Summary()
			if s.Broken != 0 || s.Inconclusive != 2 || !tr.Inconclusive() {
				t.Fatalf("%d broken, %d inconclusive of %d; want both trials inconclusive", s.Broken, s.Inconclusive, s.Trials)
			}
			if got := tr.Trials[1].Cause(); !strings.HasPrefix(got, c.cause) {
				t.Errorf("trial 2's cause %q; want %q", got, c.cause)
			}
			want := "svc: inconclusive: 2 of 2 trials proved nothing: " + c.cause
			out := table(t, res)
			if !strings.Contains(out, want) || !strings.Contains(out, " (2, e.g. #1); a verdict needs at most 10% of them") {
				t.Errorf("the table says:\n%s\nwant a line %q… (2, e.g. #1)", out, want)
			}
		}})
	}
	testwait.SideBySide(t, run...)
}

// severityRace breaks when a key holds more than one thing, as badly as
// the things it holds.
const severityRace = `race: severity
requests: 6
burst:
  - request: POST /things/{{key}}
    headers: {X-Trial: "{{trial}}"}
    allowed: status == 200
readback:
  - request: GET /things/{{key}}
    as: things
rule: things.count <= 1
severity: things.count
`

// TestWorstTrialBySeverity: a file's severity: names the worst trial in
// the WORST TRIAL column, the line under the table and a load's worst
// key; a file without counted: shows no count.
func TestWorstTrialBySeverity(t *testing.T) {
	limits := []int{2, 4, 3}
	srv := counter(t, func(int) int { return 200 }, func(k, n int) bool { return n <= limits[k%len(limits)] })
	_, sc := loadText(t, severityRace)
	res := play(t, sc, 3, "svc="+base(srv))
	s := res.Targets[0].Summary()
	if s.Broken != 3 || s.Worst.Index != 1 || s.Worst.Severity != 4 {
		t.Fatalf("%d broken, worst #%d of severity %v; want 3, #2 of 4", s.Broken, s.Worst.Index+1, s.Worst.Severity)
	}
	// {{trial}} is the trial's index in the JSON, one less than its
	// number in the table.
	for j, tr := range res.Targets[0].Trials {
		if want := fmt.Sprintf(`"trial":"%d"`, j); tr.Index != j || !strings.Contains(tr.Readback.Answers[0].Body, want) {
			t.Errorf("trial index %d answered %s; want index %d and %s", tr.Index, tr.Readback.Answers[0].Body, j, want)
		}
	}
	out := table(t, res)
	for _, want := range []string{
		"| #2: things.count = 4 |",
		"svc, trial 2: rule things.count <= 1 broke: things.count = 4 (3 of 3 trials broke)",
		"|       - | holds    |", // COUNTED, then EXPECTED
	} {
		if !strings.Contains(out, want) {
			t.Errorf("the table says:\n%s\nwant %q in it", out, want)
		}
	}

	// Under load, keys 0 and 1 of the service's order: the one that
	// counted 4 is the worst, whichever broke first.
	lsrv := counter(t, func(int) int { return 200 }, func(k, n int) bool { return n <= limits[k%2] })
	lres, err := loadpkg.Load(context.Background(), loadpkg.LoadPlan{
		Scenario: sc, Targeting: engine.Targeting{Targets: []string{"svc=" + base(lsrv)}}, Concurrency: 4, Requests: 40, Keys: 2, Seed: 1,
	})
	if err != nil {
		t.Fatal(err)
	}
	lt := &lres.Targets[0]
	if lt.Error != "" || lt.Keys.Broken != 2 || !strings.Contains(lt.WorstKey.Why, "things.count = 4") || lt.WorstKey.Severity != 4 {
		t.Errorf("load: error %q, %d keys broke, worst key %q (severity %v); want both, the one with 4", lt.Error, lt.Keys.Broken, lt.WorstKey.Why, lt.WorstKey.Severity)
	}
}

// TestForgedSeverityRefused: a saved trial's severity is judged again
// like its verdict: one raised to name another trial the worst is refused.
func TestForgedSeverityRefused(t *testing.T) {
	limits := []int{2, 4}
	srv := counter(t, func(int) int { return 200 }, func(k, n int) bool { return n <= limits[k%len(limits)] })
	f, sc := loadText(t, severityRace)
	res := play(t, sc, 2, "svc="+base(srv))
	find := func(string, *results.Settings) (*engine.Scenario, error) { return f.Scenario(nil) }
	if err := engine.CheckWith(res, find, time.Second); err != nil {
		t.Fatalf("the result as run: %v", err)
	}
	res.Targets[0].Trials[0].Severity = 9
	if err := engine.CheckWith(res, find, time.Second); err == nil || !strings.Contains(err.Error(), "severity") {
		t.Errorf("a severity raised from 2 to 9: %v; want it refused at severity", err)
	}
}

// TestSeverityAndSecretParse: severity: takes any CEL number and nothing
// else; env: takes a name or {name, secret}.
func TestSeverityAndSecretParse(t *testing.T) {
	const head = "race: p\nburst:\n  - request: POST /x/{{key}}\nrule: allowed <= 1\n"
	for _, c := range []struct{ tail, err string }{
		{"severity: allowed - 1\n", ""},
		{"severity: double(allowed) * 1.5\n", ""},
		{`severity: '"high"'` + "\n", `is string; want CEL that makes a number`},
		{"env: [RUN, {name: TOKEN, secret: true}]\n", ""},
		{"env: [{name: TOKEN, secret: yes please}]\n", `env: secret: is "yes please"; want true or false`},
		{"env: [{name: 1x}]\n", `env: "1x" is not an environment variable name`},
	} {
		f, err := racefile.Parse("p.race.yaml", []byte(head+c.tail))
		switch {
		case c.err == "" && err != nil:
			t.Errorf("%q: %v; want it read", c.tail, err)
		case c.err != "" && (err == nil || !strings.Contains(err.Error(), c.err)):
			t.Errorf("%q: %v; want an error saying %q", c.tail, err, c.err)
		case c.err == "" && strings.HasPrefix(c.tail, "env") && (len(f.Env) != 2 || len(f.Secret) != 1 || f.Secret[0] != "TOKEN"):
			t.Errorf("%q: env %v, secret %v; want RUN and TOKEN, TOKEN secret", c.tail, f.Env, f.Secret)
		}
	}
}

// TestNoReadBackWords: a file that reads nothing back is not said to be
// judged on what was read back.
func TestNoReadBackWords(t *testing.T) {
	_, sc := loadText(t, "race: p\nburst:\n  - request: POST /x/{{key}}\nrule: allowed <= 1\n")
	if strings.Contains(sc.Rule+sc.Story, "read back;") || strings.Contains(sc.Rule+sc.Story, "state read back") || !strings.Contains(sc.Rule, "judged on the burst's answers") {
		t.Errorf("rule %q, story %q; want no readback in their words", sc.Rule, sc.Story)
	}
	_, sc = loadText(t, "race: p\nburst:\n  - request: POST /x/{{key}}\nreadback:\n  - request: GET /x/{{key}}\n    as: x\nrule: allowed <= 1\n")
	if !strings.Contains(sc.Rule, "judged on the state read back") {
		t.Errorf("rule %q; want it judged on the state read back", sc.Rule)
	}
}
