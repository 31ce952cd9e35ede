package main

import (
	"context"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/racelab/racelab/scenarios/results"
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
		{[]string{"report", bigResult}, exitFailure, "racelab: " + bigResult + ": 256 MiB, over the limit of 256 MiB\n"},
		{[]string{"verify", bigResult}, exitFailure, bigResult + ": 256 MiB, over the limit of 256 MiB"},
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
	}
	for _, tt := range tests {
		code, _, stderr := execute(context.Background(), tt.args...)
		if code != exitUsage || strings.Count(stderr, "\n") != 1 || !strings.Contains(stderr, tt.says) {
			t.Errorf("racelab %s: exit %d, stderr %q; want exit 2 and one line saying %q", strings.Join(tt.args, " "), code, stderr, tt.says)
		}
	}
}
