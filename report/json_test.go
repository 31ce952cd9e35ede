package report

import (
	"bytes"
	"errors"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/racelab/racelab/scenarios"
	"github.com/racelab/racelab/scenarios/engine"
	"github.com/racelab/racelab/scenarios/results"
	"github.com/racelab/racelab/scenarios/scenariostest"
	"github.com/racelab/racelab/scenarios/shards"
)

// TestReadJSONRoundTrip reads back what RenderAll writes: one result, or a
// stream of several.
func TestReadJSONRoundTrip(t *testing.T) {
	want := []*results.Result{tenHitsOneView(), evidence(), fiveCheckoutsErrors()}
	var b bytes.Buffer
	if err := RenderAll(&b, want, JSON, Options{}); err != nil {
		t.Fatal(err)
	}
	got, err := results.ReadJSON(&b, verify)
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("read back %d results, not the %d written", len(got), len(want))
	}
}

func TestReadJSONRefuses(t *testing.T) {
	for _, tc := range []struct {
		name, in, want string
	}{
		{"empty", "", "not a racelab result: no JSON in it"},
		{"bad JSON", "{\n\"schema\": \"racelab/result/v1\",\n\"targets\": [,]\n}", "not a racelab result: bad JSON on line 3: invalid character ','"},
		{"no schema", `{"scenario": "five-checkouts"}`, `not a racelab result: document 1 has no "schema" field`},
		{"not an object", `[1, 2]`, `not a racelab result: document 1 has no "schema" field`},
		{"other schema", `{"schema": "racelab/result/v2"}`, `not a racelab result: document 1 has schema "racelab/result/v2"; this racelab reads "racelab/result/v1"`},
		{"second bad", `{"schema": "racelab/result/v1"} {"schema": 7}`, `not a racelab result: document 2 has no "schema" field`},
		{"wrong type", `{"schema": "racelab/result/v1", "requests": "ten"}`, "not a racelab result: document 1: json: cannot unmarshal string"},
		{"negative requests", forged(t, `"requests": 10`, `"requests": -5`), "not a racelab result: document 1: inconsistent result: requests: -5"},
		{"unknown scenario", forged(t, `"scenario": "ten-hits-one-view"`, `"scenario": "eleven-hits"`), `not a racelab result: document 1: inconsistent result: scenario: "eleven-hits" is not a story`},
		{"confidence above 1", forged(t, `"seed": 1,`, `"seed": 1, "confidence": 7,`), "not a racelab result: document 1: inconsistent result: confidence: 7"},
		{"no targets", `{"schema": "racelab/result/v1", "scenario": "five-checkouts", "requests": 5, "targets": []}`, "not a racelab result: document 1: inconsistent result: targets: none"},
		// kv counted 1 of 10 hits: no file may say that held.
		{"forged hold", forged(t, `"broken": true`, `"broken": false`), "not a racelab result: document 1: inconsistent result: targets[0].trials[0].broken: false; its requests and count (1) say true"},
		{"forged counts", forged(t, `"allowed": 10`, `"allowed": 9`), "not a racelab result: document 1: inconsistent result: targets[0].trials[0].allowed: 9; its requests say 10"},
		// A figure the story never records is refused as any other.
		{"forged figure", forged(t, `"broken": true`, `"broken": true, "figures": {"exposure_ns": [1]}`), "not a racelab result: document 1: inconsistent result: targets[0].trials[0].figures.exposure_ns: [1]; its requests say []"},
		{"forged bound", forged(t, `"upper": 0.95`, `"upper": 0.01`), "not a racelab result: document 1: inconsistent result: targets[1].bound: 0 of 1 trials broke, bound 0.01; the trials say 0 of 1, bound 0.95"},
		{"not strict", forged(t, `"strict": true`, `"strict": false`), "not a racelab result: document 1: inconsistent result: targets[1].strict: false for a target expected to hold"},
		{"a request too few", forged(t, `"requests": 10`, `"requests": 11`), "not a racelab result: document 1: inconsistent result: targets[0].trials[0].requests: 10 requests; the result says 11 per burst"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := results.ReadJSON(strings.NewReader(tc.in), verify)
			if err == nil || !strings.HasPrefix(err.Error(), tc.want) || !errors.Is(err, results.ErrNotResult) {
				t.Errorf("results.ReadJSON error = %v, want one starting %q and wrapping results.ErrNotResult", err, tc.want)
			}
		})
	}
}

// spaces is endless white space: valid JSON's padding, never a document.
type spaces struct{}

func (spaces) Read(p []byte) (int, error) {
	for i := range p {
		p[i] = ' '
	}
	return len(p), nil
}

// TestReadJSONLimit: endless input is refused once past the limit, not
// read until memory runs out.
func TestReadJSONLimit(t *testing.T) {
	_, err := results.ReadJSON(spaces{}, withLimits(verify, time.Second, 3<<20))
	if err == nil || !errors.Is(err, results.ErrNotResult) || !strings.Contains(err.Error(), "larger than 3 MiB") {
		t.Errorf("endless input: %v; want it refused as larger than 3 MiB", err)
	}
}

// forged is the JSON of the ten-hits-one-view fixture, with a bound, with
// the first old changed to new.
func forged(t *testing.T, old, new string) string {
	t.Helper()
	r := tenHitsOneView()
	for i := range r.Targets {
		r.Targets[i].Bound = bound(r.Targets[i].Trials, 0.95, 0)
	}
	var b bytes.Buffer
	if err := RenderAll(&b, []*results.Result{r}, JSON, Options{}); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(b.String(), old) {
		t.Fatalf("the fixture has no %s", old)
	}
	return strings.Replace(b.String(), old, new, 1)
}

// TestRenderAllTable checks that several results in the table and
// markdown formats are one report after the other.
func TestRenderAllTable(t *testing.T) {
	for _, f := range []Format{Table, Markdown} {
		var all bytes.Buffer
		if err := RenderAll(&all, []*results.Result{tenHitsOneView(), raceNotShown()}, f, Options{Say: testFlags, Saved: true}); err != nil {
			t.Fatal(err)
		}
		want := string(render(t, tenHitsOneView(), f)) + "\n" + string(render(t, raceNotShown(), f))
		if all.String() != want {
			t.Errorf("%s: RenderAll is not the reports one after the other", f)
		}
	}
	if err := RenderAll(&bytes.Buffer{}, nil, Table, Options{}); err == nil {
		t.Error("RenderAll of nothing succeeded")
	}
}

// TestReadJSONSampled reads back a result whose targets keep only a sample
// of their trials: it passes the checks, and a tally forged to hide the
// breaks the sample shows is refused.
func TestReadJSONSampled(t *testing.T) {
	sc := scenariostest.Lookup(t, "ten-hits-one-view")
	res, err := engine.Run(t.Context(), engine.Plan{Scenario: sc, Targets: []string{"kv", "actor"}, Trials: 20, Seed: 5,
		Keep: results.Keep{Trials: 4}})
	if err != nil {
		t.Fatal(err)
	}
	if res.Targets[0].Tally == nil || len(res.Targets[0].Trials) >= 20 {
		t.Fatalf("kv kept %d of 20 trials with tally %v; want a sample", len(res.Targets[0].Trials), res.Targets[0].Tally != nil)
	}
	var b bytes.Buffer
	if err := Render(&b, res, JSON, Options{}); err != nil {
		t.Fatal(err)
	}
	got, err := results.ReadJSON(bytes.NewReader(b.Bytes()), verify)
	if err != nil {
		t.Fatalf("a sampled result is refused: %v", err)
	}
	if s := got[0].Targets[0].Summary(); s.Trials != 20 || s.Broken != 20 {
		t.Errorf("kv read back as %d trials, %d broken; want 20, 20", s.Trials, s.Broken)
	}
	forged := strings.Replace(b.String(), `"broken": 20,`, `"broken": 0,`, 1)
	if forged == b.String() {
		t.Fatal("the tally has no \"broken\": 20")
	}
	if _, err := results.ReadJSON(strings.NewReader(forged), verify); err == nil || !strings.Contains(err.Error(), "tally.broken") {
		t.Errorf("a tally hiding the sample's breaks: %v; want it refused, naming tally.broken", err)
	}
}

// verify checks saved documents as racelab's commands do.
var verify = results.Verifier{Run: scenarios.Check,
	Shard: func(s *results.ShardResult) error { return shards.CheckShard(s, scenarios.Find) }}

// withLimits is v with a history recheck's time limit and a read limit of
// a test's own.
func withLimits(v results.Verifier, historyTimeout time.Duration, limit int64) results.Verifier {
	v.HistoryTimeout, v.Limit = historyTimeout, limit
	return v
}
