package main

import (
	"bytes"
	"context"
	"encoding/json"
	"encoding/xml"
	"flag"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/rogpeppe/go-internal/testscript"

	"github.com/racelab/racelab/internal/testwait"
	"github.com/racelab/racelab/scenarios/engine"
	"github.com/racelab/racelab/scenarios/results"
	"github.com/racelab/racelab/scenarios/scenariostest"
	"github.com/racelab/racelab/targets"
)

// TestMain lets testscript run this test binary as the racelab command, so
// scripts exercise the real main (flags, streams and exit codes) with the
// test catalog.
func TestMain(m *testing.M) {
	testscript.Main(m, map[string]func(){
		"racelab": func() { os.Exit(run(testCatalog)) },
	})
}

// testCatalog is the built-in targets plus a test-only fault: a target
// that claims to hold but runs the naive KV code, so a run against it must
// exit 3.
var testCatalog = func() *targets.Catalog {
	_, kv, err := targets.Lookup("kv")
	if err != nil {
		panic(err)
	}
	return targets.Builtin().With(targets.Entry{Name: "faulty", Guarantee: "claims to hold, races (test fault)",
		Holds: true, Embedded: true, Kind: kv.Kind, Open: kv.Open})
}()

// updateScripts rewrites the expected files inside the scripts' archives
// (cmp stdout want.txt) from what racelab prints now.
var updateScripts = flag.Bool("update-scripts", false, "rewrite the files that scripts compare output with")

// TestProcesses runs racelab as processes of its own: the CLI scripts,
// and beside them the tests whose processes wait out a lead before they
// fire (shardLead, the workflow's RACELAB_LEAD). The scripts are t.Parallel
// and take go test's -parallel slots; the lead-bound cases take none
// (sidebyside) and sleep while the scripts run, instead of after them: one
// after another, their leads were a minute and a half of the suite.
func TestProcesses(t *testing.T) {
	// The workflow cases build racelab as the workflow does (go build
	// -trimpath), three at once: on a cold build cache each compiled all
	// of it, side by side. One build first compiles it once; theirs then
	// only link.
	buildRacelab(t)
	testwait.SideBySide(t,
		testwait.Case{Name: "scripts", Test: scripts},
		testwait.Case{Name: "http scripts", Test: httpScripts},
		testwait.Case{Name: "shards merge exactly", Test: shardProcessesMergeExactly},
		testwait.Case{Name: "shards show the loss on kv", Test: shardProcessesShowTheLossOnKV},
		testwait.Case{Name: "load shards sum to the rate", Test: loadShardProcessesSumToTheRate},
		testwait.Case{Name: "verify refuses forged parts", Test: verifyRefusesForgedParts},
		testwait.Case{Name: "workflow runs on sqlite", Test: func(t *testing.T) { gitHubActionsWorkflowRuns(t, "sqlite") }},
		testwait.Case{Name: "workflow runs on kv", Test: func(t *testing.T) { gitHubActionsWorkflowRuns(t, "kv") }},
		testwait.Case{Name: "workflow stops on a failed shard", Test: gitHubActionsWorkflowStopsOnAFailedShard},
	)
}

// scripts runs the CLI scripts of testdata/script.
func scripts(t *testing.T) {
	testscript.Run(t, testscript.Params{
		Dir:           "../../testdata/script",
		UpdateScripts: *updateScripts,
		Setup:         scriptEnv,
	})
}

// scriptEnv is what every script runs racelab with. Scripts whose run
// plays a real-clock store (sqlite, a served URL) and wants its verdict
// pass --max-spread 1m: they test the command, not simultaneity (the
// bound has tests of its own, TestBurstNotSimultaneousIsInconclusive),
// and on a loaded machine one process's burst of 10 on SQLite spread 270
// to 544 ms, past the 250 ms default: inconclusive, exit 1. Scripts must not
// depend on the developer's servers or colours. And a racelab built with
// -race, as `make test` builds this binary, sleeps a second at exit by
// default (GORACE atexit_sleep_ms=1000) so that goroutines still running
// can report a race: the scripts' hundred execs slept 100 s, two thirds of
// cmd/racelab's time. racelab lets no goroutine outlive a run, so a tenth
// of that wait keeps the chance and saves the rest; a race found still
// fails its exec (exit 66). A GORACE of the caller's that sets the wait
// is kept.
func scriptEnv(e *testscript.Env) error {
	e.Setenv("NO_COLOR", "1")
	e.Setenv("RACELAB_REDIS_URL", "redis://127.0.0.1:1/0")
	e.Setenv("RACELAB_POSTGRES_URL", "postgres://racelab@127.0.0.1:1/racelab?sslmode=disable")
	if gorace := os.Getenv("GORACE"); !strings.Contains(gorace, "atexit_sleep_ms") {
		e.Setenv("GORACE", strings.TrimSpace(gorace+" atexit_sleep_ms=100"))
	}
	return nil
}

// execute runs racelab in-process and returns its exit code and streams.
// executeWant runs racelab with args and fails the test unless it exits
// with want and, when want is not exitOK, says why on one stderr line
// starting "racelab: ". It returns what racelab wrote to stdout.
func executeWant(t *testing.T, ctx context.Context, want int, args ...string) (stdout string) {
	t.Helper()
	code, stdout, stderr := execute(ctx, args...)
	if code != want {
		t.Fatalf("racelab %s: exit %d, want %d\nstderr: %s", strings.Join(args, " "), code, want, stderr)
	}
	if code != exitOK {
		lines := strings.Split(strings.TrimRight(stderr, "\n"), "\n")
		if len(lines) != 1 || !strings.HasPrefix(lines[0], "racelab: ") {
			t.Errorf("stderr = %q, want one line starting \"racelab: \"", stderr)
		}
	}
	return stdout
}

func execute(ctx context.Context, args ...string) (code int, stdout, stderr string) {
	s, out, errOut := testStreams("")
	code = Main(ctx, args, s, testCatalog)
	return code, out.String(), errOut.String()
}

// testStreams are the streams of a command under test: in is its
// standard input, and its standard output and error go to out and errOut.
func testStreams(in string) (s Streams, out, errOut *bytes.Buffer) {
	out, errOut = &bytes.Buffer{}, &bytes.Buffer{}
	return Streams{In: strings.NewReader(in), Out: out, Err: errOut}, out, errOut
}

// TestExitCodes asserts the exact exit code of each kind of outcome, and
// that every failure is said in exactly one line on stderr.
func TestExitCodes(t *testing.T) {
	cancelled, cancel := context.WithCancel(context.Background())
	cancel()
	tests := []struct {
		name string
		ctx  context.Context
		args []string
		want int
	}{
		{"help", nil, []string{}, exitOK},
		{"version", nil, []string{"version"}, exitOK},
		{"list", nil, []string{"list"}, exitOK},
		{"atomic holds", nil, []string{"run", "ten-hits-one-view", "-t", "sqlite"}, exitOK},
		{"naive breaks as expected", nil, []string{"run", "five-checkouts", "-t", "kv"}, exitOK},
		{"unreachable server", nil, []string{"run", "ten-hits-one-view", "-t", "redis", "--redis-url", "redis://127.0.0.1:1/0"}, exitFailure},
		{"unknown scenario", nil, []string{"run", "ten-hits"}, exitUsage},
		{"unknown target", nil, []string{"run", "ten-hits-one-view", "-t", "sqlit"}, exitUsage},
		{"unknown store parameter", nil, []string{"run", "ten-hits-one-view", "-t", "kv?locatons=3"}, exitUsage},
		{"bad store parameter", nil, []string{"run", "ten-hits-one-view", "-t", "kv?cache-ttl=5s"}, exitUsage},
		{"unknown flag", nil, []string{"run", "ten-hits-one-view", "--nope"}, exitUsage},
		{"bad flag value", nil, []string{"run", "ten-hits-one-view", "-n", "ten"}, exitUsage},
		{"zero requests", nil, []string{"run", "ten-hits-one-view", "-n", "0"}, exitUsage},
		{"zero trials", nil, []string{"run", "ten-hits-one-view", "--trials", "0"}, exitUsage},
		{"bad output", nil, []string{"run", "ten-hits-one-view", "-o", "xml"}, exitUsage},
		{"bad expect", nil, []string{"run", "ten-hits-one-view", "--expect", "maybe"}, exitUsage},
		{"missing scenario", nil, []string{"run"}, exitUsage},
		{"unknown command", nil, []string{"rnu"}, exitUsage},
		{"faulty atomic target", nil, []string{"run", "ten-hits-one-view", "-t", "faulty"}, exitRuleBroken},
		{"race demanded, none shown", nil, []string{"run", "five-checkouts", "-t", "sqlite", "--expect", "race"}, exitRuleBroken},
		{"interrupted", cancelled, []string{"run", "ten-hits-one-view", "-t", "sqlite"}, exitInterrupted},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ctx := tt.ctx
			if ctx == nil {
				ctx = context.Background()
			}
			executeWant(t, ctx, tt.want, tt.args...)
		})
	}
}

// TestRunJSON checks the acceptance figures through the JSON a CI job would
// read: six-become-four on the actor grants 5 of 12 in every trial, and
// five-checkouts on sqlite lets exactly one buyer through.
func TestRunJSON(t *testing.T) {
	tests := []struct {
		args                           []string
		allowed, refused, counted, len int
	}{
		{[]string{"run", "six-become-four", "-t", "actor", "-n", "12", "--trials", "10", "-o", "json"}, 5, 7, 5, 12},
		{[]string{"run", "five-checkouts", "-t", "sqlite", "--trials", "10", "-o", "json"}, 1, 4, 1, 5},
	}
	for _, tt := range tests {
		code, stdout, stderr := execute(context.Background(), tt.args...)
		if code != exitOK {
			t.Fatalf("exit %d: %s", code, stderr)
		}
		var res results.Result
		if err := json.Unmarshal([]byte(stdout), &res); err != nil {
			t.Fatalf("output is not JSON: %v\n%s", err, stdout)
		}
		if res.Schema != results.SchemaVersion || len(res.Targets) != 1 || len(res.Targets[0].Trials) != 10 {
			t.Fatalf("schema %q, %d targets; want %q and 1 target with 10 trials", res.Schema, len(res.Targets), results.SchemaVersion)
		}
		for _, tr := range res.Targets[0].Trials {
			if tr.Allowed != tt.allowed || tr.Refused != tt.refused || tr.Counted != int64(tt.counted) || len(tr.Requests) != tt.len {
				t.Errorf("%v trial %d: allowed %d refused %d counted %d requests %d; want %d %d %d %d", tt.args[1], tr.Index,
					tr.Allowed, tr.Refused, tr.Counted, len(tr.Requests), tt.allowed, tt.refused, tt.counted, tt.len)
			}
			// Virtual time releases a burst at one exact instant; the real
			// clock measures how far apart the requests really started.
			if virtual := res.Targets[0].Clock == "virtual"; virtual != (tr.ReleaseSpread == 0) {
				t.Errorf("trial %d on the %s clock: release spread %v", tr.Index, res.Targets[0].Clock, tr.ReleaseSpread)
			}
		}
	}
}

// TestRunFlags checks flag parsing apart from running, through the runF seam.
func TestRunFlags(t *testing.T) {
	var got *runOptions
	c := newRunCmd(first(testStreams("")), testCatalog, func(o *runOptions) error {
		got = o
		return nil
	})
	c.SetArgs([]string{"five-checkouts", "-t", "kv?locations=5&cold-read=40ms", "-t", "sqlite", "-n", "50", "--trials", "20", "--seed", "7", "-o", "json", "-o", "junit=r.xml", "--timeout", "3s", "-q", "--expect", "hold"})
	if err := c.Execute(); err != nil {
		t.Fatal(err)
	}
	want := runOptions{Scenario: "five-checkouts", Requests: 50, Trials: 20, firing: firing{Targets: []string{"kv?locations=5&cold-read=40ms", "sqlite"},
		Seed: 7, Outputs: outputFlags{raw: []string{"json", "junit=r.xml"}}, Timeout: 3e9, Quiet: true, Expect: []string{"hold"}}}
	if got == nil || !equalOptions(*got, want) {
		t.Errorf("options = %+v\nwant      %+v", got, want)
	}
}

func equalOptions(a, b runOptions) bool {
	return strings.Join(a.Targets, "\n") == strings.Join(b.Targets, "\n") &&
		a.Scenario == b.Scenario && a.Requests == b.Requests && a.Trials == b.Trials &&
		a.Seed == b.Seed && a.set != nil && a.set("seed") && a.set("requests") && strings.Join(a.Outputs.raw, "\n") == strings.Join(b.Outputs.raw, "\n") && a.Timeout == b.Timeout &&
		a.Quiet == b.Quiet && strings.Join(a.Expect, "\n") == strings.Join(b.Expect, "\n") &&
		*a.Servers.urls["redis-url"] == os.Getenv("RACELAB_REDIS_URL") && *a.Servers.urls["postgres-url"] == os.Getenv("RACELAB_POSTGRES_URL")
}

// fastKV is the KV simulator with small latencies, for many quick trials.
const fastKV = "kv?hot-read=100us&latency=2ms"

// TestEvidenceExitCodes asserts the exact exit codes of the evidence and
// report commands, the acceptance runs included: a store that holds passes
// 300 trials with a bound in valid JUnit, KV passes as a race expected, and
// KV made to hold exits 3 with its failing counts in the XML. The 300
// trials run on the actor, on virtual time, rather than on SQLite as in the
// README: the exit code and the bound do not depend on the store, and 300
// SQLite trials took 12 s under the race detector.
func TestEvidenceExitCodes(t *testing.T) {
	dir := t.TempDir()
	write := func(name, body string) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	_, saved, _ := execute(context.Background(), "run", "five-checkouts", "-t", "sqlite", "--trials", "2", "-o", "json")
	good := write("good.json", saved)
	bad := write("bad.json", "{not json")
	other := write("v2.json", `{"schema":"racelab/result/v2"}`)
	tests := []struct {
		name string
		args []string
		want int
		xml  []string // substrings the JUnit on stdout must hold
	}{
		{"actor bound in junit", []string{"run", "ten-hits-one-view", "-t", "actor", "--trials", "300", "-o", "junit"}, exitOK,
			[]string{`failures="0"`, "bound: 0 of 300 conclusive trials broke; at 95% confidence the rate of breaking is below 1.0%"}},
		{"kv race expected", []string{"run", "ten-hits-one-view", "-t", fastKV, "--trials", "20", "-o", "junit"}, exitOK,
			[]string{`failures="0"`, "broken in 20/20 (expected)"}},
		{"kv made to hold", []string{"run", "ten-hits-one-view", "-t", fastKV, "--trials", "20", "--expect", "hold", "-o", "junit"}, exitRuleBroken,
			[]string{`failures="1"`, `<failure message="kv: BROKEN in 20/20, expected to hold"`, "allowed: 10", "worst trial: ", "bound: 20 of 20"}},
		{"bound met", []string{"run", "five-checkouts", "-t", "sqlite", "--max-rate", "5%"}, exitOK, nil},
		{"bound out of reach", []string{"run", "five-checkouts", "--confidence", "99%", "--max-rate", "0.1%", "--max-trials", "1000"}, exitUsage, nil},
		{"max-trials alone", []string{"run", "five-checkouts", "--max-trials", "10"}, exitUsage, nil},
		{"bad percentage", []string{"run", "five-checkouts", "--max-rate", "lots"}, exitUsage, nil},
		{"percentage without its sign", []string{"run", "five-checkouts", "--max-rate", "0.5"}, exitUsage, nil},
		{"zero confidence", []string{"run", "five-checkouts", "--confidence", "0%"}, exitUsage, nil},
		{"zero max-rate", []string{"run", "five-checkouts", "--max-rate", "0%"}, exitUsage, nil},
		{"zero max-trials", []string{"run", "five-checkouts", "--max-rate", "5%", "--max-trials", "0"}, exitUsage, nil},
		{"zero history timeout", []string{"run", "five-checkouts", "--history-timeout", "0s"}, exitUsage, nil},
		{"report", []string{"report", good, "-o", "junit"}, exitOK, []string{`<testsuite name="five-checkouts"`}},
		{"report no files", []string{"report"}, exitUsage, nil},
		{"report missing file", []string{"report", filepath.Join(dir, "nope.json")}, exitUsage, nil},
		{"report a folder", []string{"report", dir}, exitUsage, nil},
		{"report bad json", []string{"report", bad}, exitFailure, nil},
		{"report other schema", []string{"report", good, other}, exitFailure, nil},
		{"report bad format", []string{"report", good, "-o", "pdf"}, exitUsage, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			stdout := executeWant(t, context.Background(), tt.want, tt.args...)
			if tt.xml == nil {
				return
			}
			var doc struct {
				XMLName xml.Name `xml:"testsuites"`
			}
			if err := xml.Unmarshal([]byte(stdout), &doc); err != nil {
				t.Fatalf("stdout is not JUnit XML: %v\n%s", err, stdout)
			}
			for _, want := range tt.xml {
				if !strings.Contains(stdout, want) {
					t.Errorf("JUnit lacks %q:\n%s", want, stdout)
				}
			}
		})
	}
}

// TestEvidenceFlags checks the evidence flags' parsing apart from running,
// and what they put in the plan.
func TestEvidenceFlags(t *testing.T) {
	var got *runOptions
	c := newRunCmd(first(testStreams("")), testCatalog, func(o *runOptions) error {
		got = o
		return nil
	})
	c.SetArgs([]string{"five-checkouts", "-t", "sqlite", "--confidence", "99%", "--max-rate", "0.5%", "--max-trials", "2000",
		"--check-history=false", "--history-timeout", "5s", "--history-html", filepath.Join(t.TempDir(), "h.html"), "--max-spread", "75ms"})
	if err := c.Execute(); err != nil {
		t.Fatal(err)
	}
	e := got.Evidence
	if e.Confidence != 0.99 || e.MaxRate != 0.005 || e.MaxTrials != 2000 || e.CheckHistory || e.HistoryTimeout != 5*time.Second || e.HistoryHTML == "" {
		t.Fatalf("evidence flags = %+v", e)
	}
	p, err := got.plan()
	if err != nil {
		t.Fatal(err)
	}
	want := engine.Evidence{Confidence: 0.99, MaxRate: 0.005, MaxTrials: 2000, SkipHistory: true, HistoryTimeout: 5 * time.Second, MaxSpread: 75 * time.Millisecond}
	if p.Evidence != want || p.Trials != results.TrialsNeeded(0.99, 0.005) {
		t.Errorf("plan evidence %+v, trials %d; want %+v, %d", p.Evidence, p.Trials, want, results.TrialsNeeded(0.99, 0.005))
	}
}

// TestWriteHistory: --history-html is written from the result, after the
// run; a result with no trial writes nothing, and a file that cannot be
// written is an error.
func TestWriteHistory(t *testing.T) {
	sc := scenariostest.Lookup(t, "ten-hits-one-view")
	p := engine.Plan{Scenario: sc, Catalog: testCatalog, Targets: []string{"kv"}, Trials: 1, Seed: 1}
	res, err := engine.Run(context.Background(), p)
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()

	path := filepath.Join(dir, "h.html")
	if err := engine.WriteHistoryFile(path, p, res); err != nil {
		t.Fatal(err)
	}
	if b, err := os.ReadFile(path); err != nil || !strings.Contains(string(b), "ten-hits-one-view on kv, trial 1") {
		t.Errorf("history page: %v, %d bytes; want kv's first trial drawn", err, len(b))
	}

	none := filepath.Join(dir, "none.html")
	empty := &results.Result{Scenario: sc.Name, Targets: []results.TargetResult{{Target: "kv", Error: "open kv: refused"}}}
	if err := engine.WriteHistoryFile(none, p, empty); err != nil {
		t.Errorf("a result with no trial: %v; want nothing written and no error", err)
	}
	if _, err := os.Stat(none); !os.IsNotExist(err) {
		t.Errorf("a result with no trial wrote %s (%v)", none, err)
	}

	if err := engine.WriteHistoryFile(dir, p, res); err == nil || !strings.HasPrefix(err.Error(), "write history: ") {
		t.Errorf("writing over a folder: %v; want an error saying what it wrote", err)
	}
}

func TestPercentageFlag(t *testing.T) {
	for _, tc := range []struct {
		in      string
		want    float64
		str     string
		wantErr bool
	}{
		{"95%", 0.95, "95%", false},
		{"0.1%", 0.001, "0.1%", false},
		{" 99.9 % ", 0.999, "99.9%", false},
		{"0.99", 0, "", true}, // 0.99% or 99%? refused, not guessed
		{"1", 0, "", true},
		{"50", 0, "", true},
		{"2", 0, "", true},
		{"lots", 0, "", true},
		{"%", 0, "", true},
	} {
		var p percentage
		err := p.Set(tc.in)
		if (err != nil) != tc.wantErr || !tc.wantErr && (float64(p) != tc.want || p.String() != tc.str) {
			t.Errorf("Set(%q) = %v (%s), %v; want %v (%s), error %v", tc.in, float64(p), p.String(), err, tc.want, tc.str, tc.wantErr)
		}
	}
}

// TestReportFlags checks report's flag parsing through its runF seam.
func TestReportFlags(t *testing.T) {
	var got *reportOptions
	c := newReportCmd(first(testStreams("")), testCatalog, func(o *reportOptions) error {
		got = o
		return nil
	})
	c.SetArgs([]string{"a.json", "-", "b.json", "-o", "html", "-o", "junit=r.xml"})
	if err := c.Execute(); err != nil {
		t.Fatal(err)
	}
	if got == nil || strings.Join(got.Files, " ") != "a.json - b.json" || strings.Join(got.Outputs.raw, " ") != "html junit=r.xml" {
		t.Errorf("report options = %+v", got)
	}
}

// first is the first of a function's results.
func first[A, B, C any](a A, _ B, _ C) A { return a }
