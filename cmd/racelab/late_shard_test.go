package main

import (
	"context"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// TestLateShardFiresAtOnce: a shard that starts after its release instant
// (a runner or a pod handed out late) is no usage error: it fires what is
// due at once, says so on stderr in one line under --quiet too, and
// writes its part, which verify merges; a burst it made late is judged
// by its spread (--max-spread), never refused.
func TestLateShardFiresAtOnce(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	db := "sqlite?path=" + filepath.Join(dir, "db.sqlite")
	parts := filepath.Join(dir, "parts")
	at := time.Now().Add(-3 * time.Second).UTC().Format(time.RFC3339Nano)
	for i := range 2 {
		args := []string{"run", "ten-hits-one-view", "-t", db, "-n", "4", "--trials", "2", "--shard", []string{"0/2", "1/2"}[i],
			"--run-id", "late", "--start-at", at, "--shard-dir", parts, "-q"}
		code, stdout, stderr := execute(ctx, args...)
		lines := strings.Split(strings.TrimRight(stderr, "\n"), "\n")
		if code != exitOK || stdout != "" || len(lines) != 1 ||
			!strings.HasPrefix(lines[0], "racelab: warning: shard "+[]string{"0", "1"}[i]+" of 2 started ") ||
			!strings.Contains(lines[0], "after its release instant "+at+"; it fires what is due at once") {
			t.Fatalf("racelab %s: exit %d, stdout %q, stderr %q; want exit 0 and one warning line saying how late", strings.Join(args, " "), code, stdout, stderr)
		}
	}
	code, stdout, stderr := execute(ctx, "verify", parts)
	if code == exitUsage || !strings.Contains(stdout, "4") {
		t.Fatalf("verify the late parts: exit %d\nstdout: %s\nstderr: %s\nwant them merged and judged", code, stdout, stderr)
	}
	if code != exitOK && !strings.Contains(stderr, "not simultaneous") {
		t.Errorf("verify the late parts: exit %d, stderr %q; want a verdict, or inconclusive for a burst not simultaneous", code, stderr)
	}
}
