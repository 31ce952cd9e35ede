package main

import (
	"context"
	"net"
	"strings"
	"testing"
)

// TestCleanCommand: racelab clean names each server it could not clean and
// exits 1, and a malformed URL is a usage error naming its flag. (The
// cleaning itself is checked in the store packages against the real
// servers, limited to the tests' own keys: the servers are shared.)
func TestCleanCommand(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	closed := ln.Addr().String()
	ln.Close()
	code, _, stderr := execute(context.Background(), "clean", "--redis-url", "redis://"+closed+"/0", "--postgres-url", "postgres://racelab@"+closed+"/racelab?sslmode=disable")
	if code != exitFailure || !strings.Contains(stderr, "Redis server for redis: ") || !strings.Contains(stderr, "PostgreSQL server for postgres: ") ||
		!strings.Contains(stderr, "is it running?") {
		t.Errorf("clean with no server up: exit %d, stderr %q; want 1 naming both servers", code, stderr)
	}
	// The other server is a closed port too: the servers are shared.
	code, _, stderr = execute(context.Background(), "clean", "--redis-url", "http://127.0.0.1/0", "--postgres-url", "postgres://racelab@"+closed+"/racelab")
	if code != exitUsage || !strings.Contains(stderr, "--redis-url") || strings.Count(strings.TrimSpace(stderr), "\n") != 0 {
		t.Errorf("clean with a malformed URL: exit %d, stderr %q; want 2 and one line naming --redis-url", code, stderr)
	}
	code, _, stderr = execute(context.Background(), "clean", "extra")
	if code != exitUsage {
		t.Errorf("clean extra: exit %d, stderr %q; want 2", code, stderr)
	}
}
