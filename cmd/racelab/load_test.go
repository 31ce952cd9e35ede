package main

import (
	"context"
	"encoding/json"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/racelab/racelab/scenarios/results"
	"github.com/racelab/racelab/targets/httpapi/httpapitest"
)

// TestLoadExitCodes: a load exits as a run does, and a missed threshold
// exits 3 with the threshold named on stderr.
func TestLoadExitCodes(t *testing.T) {
	ctx := context.Background()
	base := []string{"load", "ten-hits-one-view", "-q", "--rate", "2000/s", "-n", "200", "--keys", "4", "--seed", "1"}
	out := executeWant(t, ctx, exitOK, append(base, "-t", "sqlite", "--threshold", "lost==0", "--threshold", "errors<1%")...)
	for _, want := range []string{"ANSWERED/S", "P99.9", "the rule after the load", "threshold lost==0 met (0)", "| sqlite |    4 |     200 |"} {
		if !strings.Contains(out, want) {
			t.Errorf("table lacks %q:\n%s", want, out)
		}
	}
	code, _, stderr := execute(ctx, append(base, "-t", "sqlite", "--threshold", "p50<0s")...)
	if code != exitRuleBroken || !strings.Contains(stderr, "threshold missed: sqlite: threshold p50<0s not met: p50 was") {
		t.Errorf("a missed threshold: exit %d, stderr %q", code, stderr)
	}
	// kv breaks, as it is expected to: exit 0; made to hold, exit 3.
	executeWant(t, ctx, exitOK, "load", "ten-hits-one-view", "-q", "-t", "kv", "-c", "16", "-n", "200", "--keys", "2")
	code, _, stderr = execute(ctx, "load", "ten-hits-one-view", "-q", "-t", "kv", "-c", "16", "-n", "200", "--keys", "2", "--expect", "hold")
	if code != exitRuleBroken || !strings.Contains(stderr, "not as expected: kv: the rule broke on") {
		t.Errorf("kv made to hold: exit %d, stderr %q", code, stderr)
	}
}

// TestLoadBadInput: one line naming the flag, exit 2, nothing run.
func TestLoadBadInput(t *testing.T) {
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"--rate", "fast"}, "--rate \"fast\""},
		{[]string{"--rate", "10/s", "-c", "5"}, "--rate R --max-in-flight C"},
		{[]string{"--duration", "1s", "-n", "5"}, "give one of them"},
		{[]string{"--stages", "10s"}, "--stages"},
		{[]string{"--stages", "1s:5/s", "--duration", "1s"}, "drop --duration"},
		{[]string{"--key-dist", "zipf:0.5"}, "--key-dist"},
		{[]string{"--threshold", "p99<soon"}, `--threshold "p99<soon": p99 takes a duration`},
		{[]string{"--threshold", "errors<0.01"}, "errors<1%"},
		{[]string{"--keys", "0"}, "--keys 0"},
		{[]string{"--arrivals", "poisson"}, "add --rate"},
		{[]string{"--http-version", "2"}, "http targets only"},
		{[]string{"--http-version", "3", "-t", "http://127.0.0.1:1"}, "--http-version \"3\""},
		{[]string{"-o", "yaml"}, "unknown output format"},
		{[]string{"-n", "10000000000000"}, "--requests 10000000000000: want 1 to 1000000000"},
		{[]string{"--duration", "2000h"}, "--duration 2000h0m0s: want a positive duration such as 30s, at most 168h0m0s"},
		{[]string{"--rate", "0.001/s", "-n", "1000000"}, "--requests 1000000 at 0.001/s would take longer than 168h0m0s"},
		{[]string{"--stages", ""}, "--stages: no stages; want e.g. 30s:100/s,1m:500/s"},
		{[]string{"--stages", "100h:5/s,100h:5/s"}, "--stages last 200h0m0s; want at most 168h0m0s in all"},
		{[]string{"--rate", ""}, `--rate "" is not a number of arrivals per unit`},
		{[]string{"--rate", "1e9/s"}, `--rate "1e9/s" is above 1000000/s, the most racelab paces`},
	} {
		code, stdout, stderr := execute(context.Background(), append([]string{"load", "ten-hits-one-view", "-q", "-t", "sqlite"}, tc.args...)...)
		if code != exitUsage || !strings.Contains(stderr, tc.want) || strings.Count(stderr, "\n") != 1 || stdout != "" {
			t.Errorf("%v: exit %d, stderr %q, stdout %q; want exit 2 naming %q", tc.args, code, stderr, stdout, tc.want)
		}
	}
}

// TestLoadReportRoundTrip: a saved load renders again in every format
// through `racelab report`, with the same verdict and exit code, and a
// forged one is refused.
func TestLoadReportRoundTrip(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	saved := executeWant(t, ctx, exitOK, "load", "ten-hits-one-view", "-q", "-t", "actor", "-c", "8", "-n", "300", "--keys", "3", "-o", "json", "--threshold", "rps>0")
	var res results.LoadResult
	if err := json.Unmarshal([]byte(saved), &res); err != nil || res.Schema != results.LoadSchemaVersion {
		t.Fatalf("json: %v, schema %q", err, res.Schema)
	}
	file := filepath.Join(dir, "load.json")
	if err := os.WriteFile(file, []byte(saved), 0o644); err != nil {
		t.Fatal(err)
	}
	table := executeWant(t, ctx, exitOK, "report", file)
	if !strings.Contains(table, "ten-hits-one-view under load") || !strings.Contains(table, "| actor  |    3 |     300 |") {
		t.Errorf("report table:\n%s", table)
	}
	// Two loads, not one given twice: that is one run's evidence twice,
	// refused (replay_test.go).
	other := filepath.Join(dir, "other.json")
	if err := os.WriteFile(other, []byte(executeWant(t, ctx, exitOK, "load", "ten-hits-one-view", "-q", "-t", "actor", "-c", "8", "-n", "300", "--keys", "3", "-o", "json", "--threshold", "rps>0")), 0o644); err != nil {
		t.Fatal(err)
	}
	junit := executeWant(t, ctx, exitOK, "report", file, other, "-o", "junit")
	if strings.Count(junit, "<testcase") != 4 || !strings.Contains(junit, `name="actor: rps&gt;0"`) {
		t.Errorf("junit of two loads, a rule and a threshold each:\n%s", junit)
	}
	html := executeWant(t, ctx, exitOK, "report", file, "-o", "html")
	for _, want := range []string{"<svg", "latency per second", "answers per second", "latency histogram"} {
		if !strings.Contains(html, want) {
			t.Errorf("html lacks %q", want)
		}
	}
	md := executeWant(t, ctx, exitOK, "report", file, "-o", "markdown")
	if !strings.Contains(md, "**as expected:**") {
		t.Errorf("markdown:\n%s", md)
	}
	forged := strings.Replace(saved, `"passed": true`, `"passed": false`, 1)
	if err := os.WriteFile(file, []byte(forged), 0o644); err != nil {
		t.Fatal(err)
	}
	code, _, stderr := execute(ctx, "report", file)
	if code != exitFailure || !strings.Contains(stderr, "threshold rps>0 is marked passed=false") {
		t.Errorf("forged: exit %d, stderr %q", code, stderr)
	}
}

// TestLoadNamedTargets: a load takes -t NAME=SPEC and --expect NAME=WHAT as
// a run does; the name stands for the target in the table and on stderr.
func TestLoadNamedTargets(t *testing.T) {
	ctx := context.Background()
	base := []string{"load", "ten-hits-one-view", "-q", "-t", "fast=kv", "-t", "sqlite", "-c", "16", "-n", "200", "--keys", "2"}
	out := executeWant(t, ctx, exitOK, append(base, "--expect", "fast=breaks")...)
	if !strings.Contains(out, "| fast ") {
		t.Errorf("the table does not name fast:\n%s", out)
	}
	code, _, stderr := execute(ctx, append(base, "--expect", "fast=hold")...)
	if code != exitRuleBroken || !strings.Contains(stderr, "not as expected: fast: the rule broke on") {
		t.Errorf("fast made to hold: exit %d, stderr %q", code, stderr)
	}
	code, _, stderr = execute(ctx, append(base, "--expect", "slow=hold")...)
	if code != exitUsage || !strings.Contains(stderr, `--expect slow=hold: no target "slow" in this run (targets: fast, sqlite)`) {
		t.Errorf("an expectation of no target: exit %d, stderr %q", code, stderr)
	}
}

// TestLoadCSV: -o csv writes a load's seconds and, without --samples, its
// requests one by one; a saved load renders as csv again; a run asked for
// csv is refused in one line, exit 2.
func TestLoadCSV(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	saved := filepath.Join(dir, "load.json")
	out := executeWant(t, ctx, exitOK, "load", "ten-hits-one-view", "-q", "-t", "sqlite", "--rate", "500/s", "-n", "50", "--keys", "5", "--seed", "2",
		"-o", "csv", "-o", "json="+saved)
	lines := strings.Split(strings.TrimSuffix(out, "\n"), "\n")
	if lines[0] != "target,row,second,at_ms,key,outcome,status,latency_ms,error,answered,errors,p50_ms,p99_ms,max_ms" ||
		strings.Count(out, ",request,") != 50 || !strings.Contains(out, "sqlite,second,0,") {
		t.Errorf("csv of 50 requests:\n%s", out)
	}
	if again := executeWant(t, ctx, exitOK, "report", saved, "-o", "csv"); again != out {
		t.Errorf("the saved load's csv differs:\n%s\nwant\n%s", again, out)
	}
	run := filepath.Join(dir, "run.json")
	executeWant(t, ctx, exitOK, "run", "ten-hits-one-view", "-t", "sqlite", "-o", "json="+run)
	for _, args := range [][]string{{"report", run, "-o", "csv"}, {"run", "ten-hits-one-view", "-t", "sqlite", "-o", "csv"}} {
		code, stdout, stderr := execute(ctx, args...)
		if code != exitUsage || stdout != "" || strings.Count(stderr, "\n") != 1 || !strings.Contains(stderr, "csv") {
			t.Errorf("%v: exit %d, stdout %q, stderr %q; want exit 2 in one line", args, code, stdout, stderr)
		}
	}
	// --samples bounds the requests kept: a uniform sample of them.
	out = executeWant(t, ctx, exitOK, "load", "ten-hits-one-view", "-q", "-t", "sqlite", "-c", "4", "-n", "200", "--samples", "20", "-o", "csv")
	if n := strings.Count(out, ",request,"); n != 20 {
		t.Errorf("--samples 20 of 200 requests kept %d", n)
	}
}

// TestLoadAdviceNamesTheFlag: arrivals that found every in-flight slot
// taken are said on a terminal with the flags to change, which the load
// package leaves to the command line.
func TestLoadAdviceNamesTheFlag(t *testing.T) {
	base := httpapitest.Serve(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method != http.MethodPost {
			return // readying the connection
		}
		select {
		case <-time.After(300 * time.Millisecond):
		case <-r.Context().Done():
		}
	}))
	s, _, errOut := testStreams("")
	s.ErrIsTTY = true
	Main(context.Background(), []string{"load", "ten-hits-one-view", "-t", base, "--rate", "100/s", "-n", "10",
		"--max-in-flight", "1", "--timeout", "100ms", "--keys", "2"}, s, testCatalog)
	if !regexp.MustCompile(`racelab: http://127\.0\.0\.1:\d+: \d+ arrivals found all 1 in-flight slots taken for the 100ms timeout and went unsent; raise --max-in-flight or lower --rate\n`).MatchString(errOut.String()) {
		t.Errorf("stderr lacks the advice:\n%s", errOut.String())
	}
}
