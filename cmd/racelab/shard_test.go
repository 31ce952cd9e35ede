package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/racelab/racelab/scenarios/results"
)

// racelabBinary is this test binary installed as racelab on PATH by
// testscript.Main (see TestMain): a real racelab process of its own.
func racelabBinary(t *testing.T) string {
	t.Helper()
	bin, err := exec.LookPath("racelab")
	if err != nil {
		t.Fatalf("racelab is not on PATH (testscript.Main puts it there): %v", err)
	}
	return bin
}

// serveProcess runs `racelab serve --store store` as a process of its own
// and returns its base URL; the server is stopped with Ctrl-C at cleanup.
func serveProcess(t *testing.T, store string) string {
	t.Helper()
	addrFile := filepath.Join(t.TempDir(), "addr")
	cmd := exec.Command(racelabBinary(t), "serve", "--store", store, "--addr", "127.0.0.1:0", "--addr-file", addrFile, "--quiet")
	cmd.Env = append(os.Environ(), "GORACE=atexit_sleep_ms=0")
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_ = cmd.Process.Signal(syscall.SIGINT)
		if err := cmd.Wait(); err != nil {
			t.Errorf("racelab serve: %v\n%s", err, stderr.String())
		}
	})
	for deadline := time.Now().Add(30 * time.Second); time.Now().Before(deadline); time.Sleep(20 * time.Millisecond) {
		if b, err := os.ReadFile(addrFile); err == nil && len(b) > 0 {
			return "http://" + strings.TrimSpace(string(b))
		}
	}
	t.Fatalf("racelab serve wrote no address in 30s: %s", stderr.String())
	return ""
}

// shardLead is how far ahead runShards sets the shards' start: far enough
// for every process to start, connect and stage on a loaded machine, with
// TestProcesses starting a score of them at once beside the scripts. A
// shard started past it fires at once; verifyJSON's --max-spread of a
// minute judges such a burst all the same, since the merge is under test
// here, not simultaneity.
const shardLead = 10 * time.Second

// runShards runs one racelab process per shard with args plus --shard
// I/N, one run id and one start, each writing its part into a folder, and
// returns the parts' files. Every process must exit 0.
func runShards(t *testing.T, of int, runID string, args ...string) []string {
	t.Helper()
	dir := t.TempDir()
	start := time.Now().Add(shardLead).UTC().Format(time.RFC3339Nano)
	cmds := make([]*exec.Cmd, of)
	outs := make([]*bytes.Buffer, of)
	for i := range of {
		a := append(append([]string{}, args...), "--shard", fmt.Sprintf("%d/%d", i, of), "--run-id", runID,
			"--start-at", start, "--shard-dir", dir, "-q")
		cmds[i] = exec.Command(racelabBinary(t), a...)
		cmds[i].Env = append(os.Environ(), "GORACE=atexit_sleep_ms=0")
		outs[i] = &bytes.Buffer{}
		cmds[i].Stdout, cmds[i].Stderr = outs[i], outs[i]
		if err := cmds[i].Start(); err != nil {
			t.Fatal(err)
		}
	}
	var files []string
	for i, cmd := range cmds {
		if err := cmd.Wait(); err != nil {
			t.Errorf("shard %d: racelab %s: %v\n%s", i, strings.Join(cmd.Args[1:], " "), err, outs[i])
		}
		files = append(files, filepath.Join(dir, fmt.Sprintf("shard-%d-of-%d.json", i, of)))
	}
	if t.Failed() {
		t.FailNow()
	}
	return files
}

// verifyJSON merges the shards' files with `racelab verify -o json`,
// wanting exit code want, and decodes the merged result.
func verifyJSON[T any](t *testing.T, want int, files []string) T {
	t.Helper()
	// The merge is under test here, not simultaneity (evidence_test.go):
	// on a loaded machine a trial's answers can outlast the period.
	out := executeWant(t, context.Background(), want, append([]string{"verify", "-o", "json", "--max-spread", "1m"}, files...)...)
	var res T
	if err := json.Unmarshal([]byte(out), &res); err != nil {
		t.Fatalf("verify -o json: %v\n%s", err, out)
	}
	return res
}

// Four racelab processes fire 25 requests each at one `racelab serve`,
// released at one instant; the merge reads the key back and judges one
// burst of 100: on SQLite, 100 allowed and 100 counted, exit 0.
func shardProcessesMergeExactly(t *testing.T) {
	url := serveProcess(t, "sqlite")
	files := runShards(t, 4, "procs-sqlite", "run", "ten-hits-one-view", "-t", url, "-n", "100", "--trials", "3", "--period", "500ms")
	res := verifyJSON[results.Result](t, exitOK, files)
	if len(res.Targets) != 1 {
		t.Fatalf("%d targets; want 1", len(res.Targets))
	}
	s := res.Targets[0].Summary()
	if s.Trials != 3 || s.Requests.Min != 100 || s.Allowed.Min != 100 || s.Allowed.Max != 100 || s.CountedMin != 100 || s.CountedMax != 100 || s.Broken != 0 || s.Inconclusive != 0 {
		t.Errorf("merged: %d trials of %d..%d requests, allowed %d..%d, counted %d..%d, %d broken, %d inconclusive; want 3 trials of 100 allowed and counted",
			s.Trials, s.Requests.Min, s.Requests.Max, s.Allowed.Min, s.Allowed.Max, s.CountedMin, s.CountedMax, s.Broken, s.Inconclusive)
	}
	if len(s.ArrivalSpreads) != 3 || res.Sharded == nil || res.Sharded.Shards != 4 {
		t.Errorf("%d arrival spreads, sharded %+v; want 3 and 4 shards", len(s.ArrivalSpreads), res.Sharded)
	}
	// report --merge is the same merge, reading back from -t: one table.
	table := executeWant(t, context.Background(), exitOK, append([]string{"report", "--merge", "-t", url, "--max-spread", "1m"}, files...)...)
	if n := strings.Count(table, "| "+url+" "); n != 1 || !strings.Contains(table, "100 requests per burst · 3 trials") || !strings.Contains(table, "100/100/100") {
		t.Errorf("report --merge: want one row, 100 a burst, counted 100 in every trial:\n%s", table)
	}
}

// On the KV store the same four processes show the loss in one trial of
// the whole burst: the service was expected to hold, so exit 3.
func shardProcessesShowTheLossOnKV(t *testing.T) {
	url := serveProcess(t, "kv")
	files := runShards(t, 4, "procs-kv", "run", "ten-hits-one-view", "-t", url, "-n", "100")
	res := verifyJSON[results.Result](t, exitRuleBroken, files)
	s := res.Targets[0].Summary()
	if s.Trials != 1 || s.Allowed.Sum != 100 || s.Broken != 1 || s.Lost == 0 || s.Lost != 100-s.CountedSum {
		t.Errorf("kv: %d trials, %d allowed, %d counted, %d lost, %d broken; want one broken trial of 100 with the loss",
			s.Trials, s.Allowed.Sum, s.CountedSum, s.Lost, s.Broken)
	}
	// Parts of two runs are refused, whole: exit 2, one line.
	other := runShards(t, 2, "procs-kv-other", "run", "ten-hits-one-view", "-t", url, "-n", "100")
	executeWant(t, context.Background(), exitUsage, "verify", files[0], files[1], files[2], other[1])
	executeWant(t, context.Background(), exitUsage, "verify", files[0], files[1], files[2])
	// A part is not a result: report without --merge says how to merge.
	executeWant(t, context.Background(), exitUsage, "report", files[0])
}

// Four processes of one open load at 400/s for 2 s send exactly 800
// requests between them; the merge sums each key over the shards and
// reads it back: every hit counted. A request may take a minute: on a
// busy machine the open load queues at the server for seconds, and what
// this checks is the sum, not the speed.
func loadShardProcessesSumToTheRate(t *testing.T) {
	url := serveProcess(t, "actor")
	files := runShards(t, 4, "procs-load", "load", "ten-hits-one-view", "-t", url, "--rate", "400/s", "--duration", "2s", "--keys", "20", "--timeout", "1m")
	res := verifyJSON[results.LoadResult](t, exitOK, files)
	lt := res.Targets[0]
	if lt.Sent != 800 || lt.Allowed != 800 || lt.Counted != 800 || lt.Keys.Lost != 0 || lt.Latency.Count != lt.Answered || lt.Verdict() != "holds" {
		t.Errorf("merged load: sent %d, allowed %d, counted %d, lost %d, %d latencies of %d answers, %s; want 800 sent and counted",
			lt.Sent, lt.Allowed, lt.Counted, lt.Keys.Lost, lt.Latency.Count, lt.Answered, lt.Verdict())
	}
	if res.Schedule == nil || res.Schedule.Start != 400 {
		t.Errorf("merged schedule %+v; want the whole load's 400/s", res.Schedule)
	}
}

func TestShardFlagsUsage(t *testing.T) {
	past := time.Now().Add(-25 * time.Hour).UTC().Format(time.RFC3339Nano)
	tests := []struct {
		args []string
		want string
	}{
		{[]string{"run", "ten-hits-one-view", "-t", "http://127.0.0.1:1", "--run-id", "x"}, "--run-id needs --shard"},
		{[]string{"run", "ten-hits-one-view", "-t", "http://127.0.0.1:1", "--shard", "0/2"}, "--shard needs --run-id"},
		{[]string{"run", "ten-hits-one-view", "-t", "http://127.0.0.1:1", "--shard", "2/2", "--run-id", "x"}, "want 0 to 1"},
		{[]string{"run", "ten-hits-one-view", "-t", "http://127.0.0.1:1", "--shard", "0/2", "--run-id", "x", "--start-at", "noon"}, "--start-at"},
		{[]string{"run", "ten-hits-one-view", "-t", "http://127.0.0.1:1", "--shard", "0/2", "--run-id", "x", "-o", "table"}, "a shard writes its part as JSON"},
		{[]string{"run", "ten-hits-one-view", "-t", "kv", "--shard", "0/2", "--run-id", "x"}, "lives inside each racelab process"},
		{[]string{"run", "ten-hits-one-view", "-t", "http://127.0.0.1:1", "--shard", "0/20", "--run-id", "x"}, "20 shards cannot share 10 requests"},
		{[]string{"load", "ten-hits-one-view", "-t", "http://127.0.0.1:1", "--start-at", "+1s"}, "--start-at needs --shard"},
		// A start over a day past or away is taken for a typo (ahead,
		// unless --wait); a shard later than its start fires at once.
		{[]string{"run", "ten-hits-one-view", "-t", "http://127.0.0.1:1", "--shard", "0/2", "--run-id", "x", "--start-at", past, "--wait"}, "--start-at " + past + " is 25h"}, // 25h, or 25h0m1s on a slow machine
		{[]string{"load", "ten-hits-one-view", "-t", "http://127.0.0.1:1", "--shard", "0/2", "--run-id", "x", "--start-at", "+24h1s"}, "ahead, more than a day; add --wait"},
		{[]string{"run", "ten-hits-one-view", "-t", "http://127.0.0.1:1", "--shard", "0/2", "--run-id", "x", "--wait"}, "--wait needs --start-at"},
		{[]string{"run", "ten-hits-one-view", "-t", "http://127.0.0.1:1", "--wait"}, "--wait needs --shard"},
		{[]string{"load", "ten-hits-one-view", "-t", "http://127.0.0.1:1", "-c", "2", "--shard", "0/4", "--run-id", "x"}, "4 shards cannot share --concurrency 2"},
		{[]string{"report", "--merge", "x.json"}, "--merge reads every key back: add -t TARGET"},
		{[]string{"report", "-t", "http://127.0.0.1:1", "x.json"}, "only --merge does"},
		{[]string{"verify"}, "takes the shards' parts"},
	}
	for _, tt := range tests {
		code, _, stderr := execute(context.Background(), tt.args...)
		if code != exitUsage || !strings.Contains(stderr, tt.want) || strings.Count(stderr, "\n") != 1 {
			t.Errorf("racelab %s: exit %d, stderr %q; want exit 2 and one line containing %q", strings.Join(tt.args, " "), code, stderr, tt.want)
		}
	}
}
