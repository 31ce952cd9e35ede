package report

import (
	"bytes"
	"encoding/json"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/racelab/racelab/scenarios/results"
)

// loadFixture is a fixed, synthetic load on a service: answers by status
// code (a 503 among them), a failure of each kind, two seconds, and three
// requests kept one by one.
func loadFixture() *results.LoadResult {
	ms := func(f float64) time.Duration { return time.Duration(f * float64(time.Millisecond)) }
	t := results.LoadTarget{Target: "http://127.0.0.1:8787", Spec: "http://127.0.0.1:8787", Expect: results.ExpectHold, Strict: true,
		Elapsed: 2 * time.Second, Sending: 2 * time.Second, Sent: 200, Answered: 194, Allowed: 194, Errors: 6,
		StatusCodes: map[int]int64{200: 194, 503: 4},
		ErrorKinds: []results.ErrorCount{{Kind: "status 503", Count: 4, First: "POST /hit/a answered 503 Service Unavailable"},
			{Kind: "answer cut short", Count: 1, First: "POST /hit/b: read answer: unexpected EOF"},
			{Kind: "too many open files", Count: 1, First: "dial tcp 127.0.0.1:8787: socket: too many open files"}},
		Latency: results.Latency{Count: 194, Min: ms(0.412), Mean: ms(2.5), P50: ms(1.9), P90: ms(4.1), P99: ms(12), P999: ms(15), Max: ms(15)},
		Series: []results.Second{{At: 0, Answered: 97, Errors: 3, P50: ms(1.8), P99: ms(12), Max: ms(15)},
			{At: 1, Answered: 97, Errors: 3, P50: ms(2), P99: ms(9.5), Max: ms(10)}},
		Counted: 194, Keys: results.Tally{Trials: 4, Inconclusive: 4, Allowed: results.Span{Min: 40, Max: 60, Sum: 194}},
		WorstKey: results.KeyAccount{Key: "slug-1", Allowed: 40, Counted: 40, Why: "http://127.0.0.1:8787: 40 hits answered; 40 views stored"}}
	t.Samples = []results.LoadSample{{At: ms(5), Latency: ms(1.9), Key: 3, Outcome: results.Allowed, Status: 200},
		{At: ms(10), Key: 1, Outcome: results.Errored, Status: 503, Error: "status 503"},
		{At: ms(1005), Outcome: results.Errored, Error: "too many open files"}}
	return &results.LoadResult{Schema: results.LoadSchemaVersion, Scenario: "ten-hits-one-view", Rule: "every hit is counted",
		Model: "open", Schedule: &results.LoadSchedule{Start: 100, Stages: []results.LoadStage{{Duration: 2 * time.Second, Rate: 100}}, Spacing: "even"},
		MaxInFlight: 1000, Duration: 2 * time.Second, Keys: 4, KeyDist: "uniform", Timeout: 10 * time.Second, Seed: 7,
		Targets: []results.LoadTarget{t}}
}

// loadGoldens are the files loadFixture is rendered to, in a format at a
// width (0: in full).
var loadGoldens = []struct {
	name  string
	f     Format
	width int
}{
	{"load-service.table.golden", Table, 0},
	{"load-service.table80.golden", Table, 80},
	{"load-service.md.golden", Markdown, 0},
	{"load-service.csv.golden", CSV, 0},
}

// TestLoadGoldens locks a load's report down in the formats read as text:
// the status codes, the fastest and mean latencies, and the csv of its
// seconds and requests.
func TestLoadGoldens(t *testing.T) {
	r := loadFixture()
	if err := r.Check(); err != nil {
		t.Fatalf("the fixture contradicts itself: %v", err)
	}
	for _, tc := range loadGoldens {
		var b bytes.Buffer
		if err := RenderLoad(&b, []*results.LoadResult{r}, tc.f, Options{Width: tc.width, Say: testFlags}); err != nil {
			t.Fatal(err)
		}
		golden(t, tc.name, b.Bytes())
		if tc.width > 0 {
			fitsIn(t, b.String(), tc.width)
		}
	}
	var b bytes.Buffer
	RenderLoad(&b, []*results.LoadResult{r}, Table, Options{})
	for _, want := range []string{"|   MIN |  MEAN |", "| 412µs | 2.5ms |",
		"http://127.0.0.1:8787: status codes: 200 ×194, 503 ×4, no answer ×2\n"} {
		if !strings.Contains(strings.ReplaceAll(b.String(), " ", ""), strings.ReplaceAll(want, " ", "")) {
			t.Errorf("table lacks %q:\n%s", want, b.String())
		}
	}
}

// TestRunHasNoCSV: csv asked of a run is a usage error in one line, and
// nothing is written.
func TestRunHasNoCSV(t *testing.T) {
	var b bytes.Buffer
	err := RenderAll(&b, []*results.Result{{Scenario: "ten-hits-one-view"}}, CSV, Options{})
	if !errors.Is(err, results.ErrUsage) || strings.Contains(err.Error(), "\n") || !strings.Contains(err.Error(), "csv is a load's") || b.Len() != 0 {
		t.Errorf("csv of a run: %v, wrote %q", err, b.String())
	}
}

// TestLoadStatusCodesInEveryFormat: the answers by status code reach the
// page and the JUnit, and JSON keeps them and the requests kept one by one.
func TestLoadStatusCodesInEveryFormat(t *testing.T) {
	r := loadFixture()
	for _, f := range []Format{HTML, JUnit} {
		var b bytes.Buffer
		if err := RenderLoad(&b, []*results.LoadResult{r}, f, Options{}); err != nil {
			t.Fatal(err)
		}
		if !strings.Contains(b.String(), "status codes: 200 ×194, 503 ×4, no answer ×2") {
			t.Errorf("%s lacks the status codes", f)
		}
	}
	var b bytes.Buffer
	if err := RenderLoad(&b, []*results.LoadResult{r}, JSON, Options{}); err != nil {
		t.Fatal(err)
	}
	var back results.LoadResult
	if err := json.Unmarshal(b.Bytes(), &back); err != nil {
		t.Fatal(err)
	}
	got := back.Targets[0]
	if got.StatusCodes[503] != 4 || len(got.Samples) != 3 || got.Samples[1].Status != 503 || got.Samples[2].Error != "too many open files" {
		t.Errorf("json kept status codes %v and samples %+v", got.StatusCodes, got.Samples)
	}
}

// TestUncountedLoadShowsNoCounts: a load of a race file that declares no
// counted: shows "-" for COUNTED, LOST and OVER, in the table and the
// JUnit text, and still its allowed.
func TestUncountedLoadShowsNoCounts(t *testing.T) {
	r := loadFixture()
	r.Uncounted = true
	var b bytes.Buffer
	if err := RenderLoad(&b, []*results.LoadResult{r}, Table, Options{}); err != nil {
		t.Fatal(err)
	}
	row := ""
	for _, line := range strings.Split(b.String(), "\n") {
		if strings.Contains(line, "| 194 |") || strings.Contains(line, "|     194 |") {
			row = line
		}
	}
	cells := strings.Split(strings.ReplaceAll(row, " ", ""), "|")
	// | TARGET | KEYS | ALLOWED | REFUSED | COUNTED | LOST | OVER | EXPECTED | VERDICT |
	if len(cells) < 8 || cells[3] != "194" || cells[5] != "-" || cells[6] != "-" || cells[7] != "-" {
		t.Errorf("the rule's row is %q; want allowed 194 and - for counted, lost and over:\n%s", row, b.String())
	}
	b.Reset()
	if err := RenderLoad(&b, []*results.LoadResult{r}, JUnit, Options{}); err != nil {
		t.Fatal(err)
	}
	if strings.Contains(b.String(), "counted 194") || !strings.Contains(b.String(), "allowed 194") {
		t.Errorf("the JUnit text shows counts for an uncounted load:\n%s", b.String())
	}
}
