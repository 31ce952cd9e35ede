package main

import (
	"cmp"
	"context"
	"net/url"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/racelab/racelab/scenarios/results"
	"github.com/racelab/racelab/targets"
	"github.com/racelab/racelab/targets/httpapi"
)

// sparse makes a file of size bytes that takes no room: enough to be
// refused by its size, cheap to make.
func sparse(t *testing.T, size int64) string {
	t.Helper()
	name := filepath.Join(t.TempDir(), "big.json")
	f, err := os.Create(name)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if err := f.Truncate(size); err != nil {
		t.Skipf("no sparse files here: %v", err)
	}
	return name
}

// TestFileFlagsBounded: a file flag's file that never ends (/dev/zero) or
// is too large is refused in one line naming the file and the limit, as
// a usage error for a flag and as a failure for a document.
func TestFileFlagsBounded(t *testing.T) {
	if _, err := os.Stat("/dev/zero"); err != nil {
		t.Skip("no /dev/zero")
	}
	bigMap := sparse(t, httpapi.MaxMappingBytes+1)
	bigResult := sparse(t, results.MaxResultBytes+1)
	tests := []struct {
		args []string
		want int
		says string
	}{
		{[]string{"run", "ten-hits-one-view", "-t", "http://127.0.0.1:1", "--http-map", "/dev/zero"}, exitUsage,
			"--http-map /dev/zero: over the limit of 1 MiB; want a mapping"},
		{[]string{"run", "ten-hits-one-view", "-t", "http://127.0.0.1:1", "--http-map", bigMap}, exitUsage,
			"--http-map " + bigMap + ": 1 MiB, over the limit of 1 MiB"},
		{[]string{"run", "ten-hits-one-view", "-t", "http://127.0.0.1:1", "--http-map", t.TempDir()}, exitUsage, "is a folder; want a mapping"},
		// Refused by its size: the file's size said is the stat's, not
		// what a read found.
		{[]string{"report", bigResult}, exitFailure, "racelab: " + bigResult + ": 32 MiB, over the limit of 32 MiB\n"}, // results.MaxResultBytes
		{[]string{"verify", bigResult}, exitFailure, bigResult + ": 32 MiB, over the limit of 32 MiB"},
		{[]string{"report", "/dev/zero"}, exitFailure, "/dev/zero"},
	}
	for _, tt := range tests {
		code, _, stderr := execute(context.Background(), tt.args...)
		lines := strings.Split(strings.TrimRight(stderr, "\n"), "\n")
		if code != tt.want || len(lines) != 1 || !strings.Contains(stderr, tt.says) {
			t.Errorf("racelab %s: exit %d, stderr %q; want exit %d and one line saying %q", strings.Join(tt.args, " "), code, stderr, tt.want, tt.says)
		}
	}
}

// TestFileFlagsInterruptible: a FIFO no one writes to keeps its reader
// waiting in open; Ctrl-C (the context cancelled) ends every command
// that reads one, with exit 130, instead of needing SIGKILL. Each command
// has a FIFO of its own: a reader the one before left waiting must not
// meet it.
func TestFileFlagsInterruptible(t *testing.T) {
	for i, args := range [][]string{
		{"run", "ten-hits-one-view", "-t", "http://127.0.0.1:1", "--http-map", "FIFO"},
		{"load", "ten-hits-one-view", "-t", "http://127.0.0.1:1", "--http-map", "FIFO", "--requests", "1"},
		{"explain", "ten-hits-one-view", "--target", "http://127.0.0.1:1", "--http-map", "FIFO"},
		{"report", "FIFO"},
		{"verify", "FIFO"},
		// race lint and run refuse a FIFO as a race file before they
		// open it (TestRaceFileUsage): nothing waits.
	} {
		fifo := filepath.Join(t.TempDir(), "fifo.race.yaml")
		if err := syscall.Mkfifo(fifo, 0o600); err != nil {
			t.Skipf("no FIFOs here: %v", err)
		}
		args[slices.Index(args, "FIFO")] = fifo
		ctx, cancel := context.WithCancel(context.Background())
		time.AfterFunc(50*time.Millisecond, cancel)
		done := make(chan [2]any, 1)
		go func() {
			code, _, stderr := execute(ctx, args...)
			done <- [2]any{code, stderr}
		}()
		select {
		case got := <-done:
			if got[0] != exitInterrupted || !strings.Contains(got[1].(string), fifo) {
				t.Errorf("racelab %s, interrupted: exit %v, stderr %q; want exit %d naming the file", strings.Join(args, " "), got[0], got[1], exitInterrupted)
			}
		case <-time.After(30 * time.Second): // a hang, not a speed
			t.Fatalf("racelab %s (%d) did not stop when interrupted", strings.Join(args, " "), i)
		}
		cancel()
	}
}

// TestOddInputs: inputs racelab once took silently, or said as the wrong
// kind of failure, are usage errors in one line.
func TestOddInputs(t *testing.T) {
	tests := []struct {
		args []string
		says string
	}{
		{[]string{"run", "ten-hits-one-view", "-t", " kv"}, `racelab: target " kv" has spaces around it; write "kv"`},
		{[]string{"run", "ten-hits-one-view", "-t", "naive=kv "}, `has spaces around it`},
		{[]string{"run", "stale-plan", "--via", "extension", "--clock", "real", "-t", "kv"}, "racelab: a trial takes 36h1m30s on the real clock; play it in virtual time, without --clock real"},
		{[]string{"run", "ten-hits-one-view", "-t", "redis", "--redis-url", "redis://:::"}, `--redis-url (or RACELAB_REDIS_URL) "redis://:::" is not usable: host "::": write an IPv6 address in brackets`},
		// Two stages of 292 years wrapped below zero and read as none.
		{[]string{"load", "ten-hits-one-view", "-t", "kv", "--stages", "9223372036s:10/s,9223372036s:10/s"}, "racelab: --stages add up past the longest duration racelab counts (about 292 years); want at most 168h0m0s in all"},
		{[]string{"run", "ten-hits-one-view", "-t", "http://127.0.0.1:1", "--shard", "0/2", "--run-id", "x", "--start-at", "+0s"}, `racelab: --start-at "+0s": want +DURATION above 0 such as +30s`},
		{[]string{"run", "ten-hits-one-view", "-t", "http://127.0.0.1:1", "--shard", "0/2", "--run-id", "x", "--start-at", ""}, "racelab: --start-at '': want an RFC 3339 instant"},
		{[]string{"run", "ten-hits-one-view", "-t", "kv", "-t", "kv"}, "racelab: -t kv given twice; give each target once, or name the copies to run it twice (-t a=kv -t b=kv)"},
		{[]string{"run", "ten-hits-one-view", "-t", "http://127.0.0.1:1", "--http-call", "hit=TELEPORT /x/{slug}"}, `method "TELEPORT" is not one racelab sends; want one of GET, HEAD, POST, PUT, PATCH, DELETE, OPTIONS`},
		{[]string{"run", "ten-hits-one-view", "-t", "kv", "--background", ""}, "racelab: --background '': want a rate above 0 such as 200/s"},
		{[]string{"run", "ten-hits-one-view", "-t", "kv", "--clock", "real", "--background", "10/s", "--background-keys", "0"}, "racelab: --background-keys 0: want 1 to 1000000"},
		{[]string{"load", "ten-hits-one-view", "-t", "kv", "-n", "10", "--threshold", "p(95)=<200"}, `racelab: --threshold "p(95)=<200": "=<" is not a comparison: <, <=, >, >=, == or !=`},
		{[]string{"load", "ten-hits-one-view", "-t", "kv", "-n", "10", "--threshold", "count>1.5"}, `racelab: --threshold "count>1.5": count counts requests, a whole number, not 1.5`},
	}
	for _, tt := range tests {
		code, _, stderr := execute(context.Background(), tt.args...)
		if code != exitUsage || strings.Count(stderr, "\n") != 1 || !strings.Contains(stderr, tt.says) {
			t.Errorf("racelab %s: exit %d, stderr %q; want exit 2 and one line saying %q", strings.Join(tt.args, " "), code, stderr, tt.says)
		}
	}
}

// TestShardDirParentMissing: --shard-dir makes its own folder, never the
// folders above it: a missing parent is refused before the shard fires,
// naming it, and nothing is made.
func TestShardDirParentMissing(t *testing.T) {
	missing := filepath.Join(t.TempDir(), "no-such-folder")
	dir := filepath.Join(missing, "parts")
	code, _, stderr := execute(context.Background(), "run", "ten-hits-one-view", "-t", "http://127.0.0.1:1", "--shard", "0/2", "--run-id", "x", "--shard-dir", dir)
	want := "racelab: --shard-dir " + dir + ": folder " + missing + " does not exist; create it, or name a folder inside one that does\n"
	if code != exitUsage || stderr != want {
		t.Errorf("--shard-dir under a missing folder: exit %d, stderr %q; want exit 2 and %q", code, stderr, want)
	}
	if _, err := os.Stat(missing); !os.IsNotExist(err) {
		t.Errorf("%s: %v; want it never made", missing, err)
	}
	file := filepath.Join(t.TempDir(), "a-file")
	if err := os.WriteFile(file, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	code, _, stderr = execute(context.Background(), "run", "ten-hits-one-view", "-t", "http://127.0.0.1:1", "--shard", "0/2", "--run-id", "x", "--shard-dir", file)
	if code != exitUsage || !strings.Contains(stderr, "is a file; want a folder for the parts") {
		t.Errorf("--shard-dir naming a file: exit %d, stderr %q; want exit 2 saying it is a file", code, stderr)
	}
}

// TestCleanDatabaseOutOfRange: a Redis URL naming a database the server
// does not have is the URL's fault, not a server that is down: a usage
// error naming the flag and the database, against the real server.
func TestCleanDatabaseOutOfRange(t *testing.T) {
	needServers(t)
	base := cmp.Or(os.Getenv("RACELAB_REDIS_URL"), targets.DefaultRedisURL)
	u, err := url.Parse(base)
	if err != nil {
		t.Fatal(err)
	}
	u.Path = "/99"
	code, _, stderr := execute(context.Background(), "clean", "--redis-url", u.String())
	want := "database 99 is out of range on this server"
	if code != exitUsage || strings.Count(stderr, "\n") != 1 || !strings.Contains(stderr, "--redis-url") || !strings.Contains(stderr, want) || strings.Contains(stderr, "is it running") {
		t.Errorf("clean --redis-url %s: exit %d, stderr %q; want exit 2 and one line saying %q", u, code, stderr, want)
	}
}
