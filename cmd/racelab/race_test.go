package main

import (
	"context"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/racelab/racelab/targets/httpapi/server"
)

// tenHitsFile is the shipped race file of ten-hits-one-view, as the tests
// run it from this folder.
const tenHitsFile = "../../scenarios/races/ten-hits-one-view.race.yaml"

// serveContract serves a store over racelab's HTTP contract on 127.0.0.1,
// as racelab serve --store SPEC does, and returns its URL.
func serveContract(t *testing.T, spec string) string {
	t.Helper()
	srv := httptest.NewServer(server.New(openStore(t, spec)))
	t.Cleanup(srv.Close)
	return srv.URL
}

// TestExplainRaceFile: explain replays a race file's burst on the service
// given as --target (the KV store, served: it loses hits) and on the one
// given as --fixed (SQLite, served), each lane with the answer it got, the
// readback and the values the rule read, and says the file has no history
// model; the way to replay it names the file and both URLs.
func TestExplainRaceFile(t *testing.T) {
	naive, fixed := serveContract(t, "kv"), serveContract(t, "sqlite")
	out := executeWant(t, context.Background(), exitOK, "explain", tenHitsFile, "-t", naive, "--fixed", fixed)
	for _, want := range []string{
		"The race, replayed on " + naive + " (10 requests at once",
		"The same burst on " + fixed,
		"→ allowed 200 {\"slug\":",
		"read back post = {\"slug\":",
		naive + ": rule post.views == allowed",
		" broke: post.views = ",
		fixed + ": rule held: post.views = 10, allowed = 10",
		"declares no history model",
		"Replay it: racelab explain " + tenHitsFile + " -t " + naive + " --fixed " + fixed,
	} {
		if !strings.Contains(strings.Join(strings.Fields(out), " "), want) {
			t.Errorf("the explanation does not say %q:\n%s", want, out)
		}
	}
}

// TestRaceFileUsage: a race file has no line-up of its own, shards
// cannot split a burst that sends what the setup captured, and a sharded
// load keeps no answers: explain without both targets, or with one that
// is not a service, run --shard of such a burst and load --shard, and a
// curl command that from-curl cannot take as written, are each one line
// and exit 2, with nothing sent and nothing on stdout.
func TestRaceFileUsage(t *testing.T) {
	const url = "http://127.0.0.1:1"
	captured := filepath.Join(t.TempDir(), "captured.race.yaml")
	src := "race: captured\nsetup:\n  - request: POST /coupons\n    as: coupon\nburst:\n  - request: POST /coupons/{{coupon.id}}/redeem\n" +
		"readback:\n  - request: GET /coupons/{{coupon.id}}\n    as: state\nrule: state.redeemed <= 1\n"
	if err := os.WriteFile(captured, []byte(src), 0o600); err != nil {
		t.Fatal(err)
	}
	// A FIFO no one writes to is refused, never waited on.
	fifo := filepath.Join(t.TempDir(), "fifo.race.yaml")
	if err := syscall.Mkfifo(fifo, 0o600); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		args []string
		says string
	}{
		{[]string{"race", "lint", fifo}, fifo + ": not a regular file (a FIFO); want a *.race.yaml file"},
		{[]string{"run", fifo, "-t", url}, fifo + ": not a regular file (a FIFO)"},
		{[]string{"explain", tenHitsFile}, "--target is missing: ten-hits-one-view names no targets of its own, so explain needs both --target"},
		{[]string{"explain", tenHitsFile, "-t", url}, "--fixed is missing: ten-hits-one-view names no targets of its own"},
		{[]string{"explain", tenHitsFile, "--fixed", url}, "--target is missing"},
		{[]string{"explain", tenHitsFile, "-t", "kv", "--fixed", url},
			"--target kv cannot play ten-hits-one-view (it has no HTTP API: a race file plays on http:// and https:// targets); want your service's URL (http://… or https://…)"},
		{[]string{"explain", tenHitsFile, "-t", url, "--fixed", "sqlite"}, "--fixed sqlite cannot play ten-hits-one-view"},
		{[]string{"explain", tenHitsFile, "-t", "ftp://127.0.0.1:1", "--fixed", url}, `scheme "ftp" is not supported`},
		{[]string{"run", captured, "-t", url, "--shard", "0/2", "--run-id", "r1"},
			"captured: its burst sends what its setup captured (coupon), which only the shard that runs the setup knows, so --shard cannot split its trials over processes; run or load it without --shard"},
		{[]string{"load", tenHitsFile, "-t", url, "--shard", "1/2", "--run-id", "r1"},
			tenHitsFile + " is a race file: its rule judges every answer a key got, which a sharded load's parts do not keep; run it sharded (racelab run FILE --shard), or load it without --shard"},
		// A pasted curl is read, never expanded: its words are what
		// was written, or it is refused.
		{[]string{"race", "from-curl", "curl -X POST $API/redeem"}, `race from-curl: a $ parameter in "$API/redeem": a shell would expand it; write the value itself`},
		{[]string{"race", "from-curl", "curl 'https://x.example/a"}, "race from-curl: not a command a shell can read"},
		{[]string{"race", "from-curl", "curl https://x.example/a https://x.example/b"}, "race from-curl: two URLs, https://x.example/a and https://x.example/b; want one request: paste one curl command"},
		{[]string{"race", "from-curl", "curl -X POST https://x.example/a \\"}, "race from-curl: the command ends with a backslash, so its last line is missing; paste the whole command"},
	}
	for _, tt := range tests {
		code, stdout, stderr := execute(context.Background(), tt.args...)
		if code != exitUsage || strings.Count(stderr, "\n") != 1 || !strings.Contains(stderr, tt.says) || stdout != "" {
			t.Errorf("racelab %s: exit %d, stdout %q, stderr %q; want exit %d and one line saying %q",
				strings.Join(tt.args, " "), code, stdout, stderr, exitUsage, tt.says)
		}
	}
}

// TestLoadRaceFile: racelab load takes a race file as it takes a story,
// with its thresholds, and judges the rule on each key: the served SQLite
// holds on every key it loaded.
func TestLoadRaceFile(t *testing.T) {
	fixed := serveContract(t, "sqlite")
	out := executeWant(t, context.Background(), exitOK, "load", tenHitsFile, "-t", "fixed="+fixed,
		"-c", "8", "--requests", "60", "--keys", "3", "--threshold", "errors<1%", "--threshold", "lost==0")
	for _, want := range []string{"ten-hits-one-view under load", "the rule after the load, each key read back", "| fixed  |    3 |      60 |", "holds", "fixed: threshold errors<1% met"} {
		if !strings.Contains(out, want) {
			t.Errorf("the load report does not say %q:\n%s", want, out)
		}
	}
}
