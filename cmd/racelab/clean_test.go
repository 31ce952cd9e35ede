package main

import (
	"context"
	"fmt"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/racelab/racelab/targets"
	"github.com/racelab/racelab/targets/storetest"
)

// TestCleanCommand: racelab clean names each server it could not clean and
// exits 1, and a malformed URL is a usage error naming its flag. (The
// cleaning itself is checked in the store packages against the real
// servers, limited to the tests' own keys: the servers are shared.)
func TestCleanCommand(t *testing.T) {
	closed := storetest.ClosedAddr(t)
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

// TestCleanScoped: against the real Redis and PostgreSQL servers, with
// run ids of this test's own (the servers are shared). Two sharded runs
// leave their keys for verify; a clean without a scope keeps them (too
// recent: a run may still use them), --run-id removes one run's only, and
// --prefix the other's.
func TestCleanScoped(t *testing.T) {
	needServers(t)
	ctx := context.Background()
	tag := fmt.Sprintf("inputs%d", time.Now().UnixNano()%1e9)
	a, b := tag+"a", tag+"b"
	for _, id := range []string{a, b} {
		executeWant(t, ctx, exitOK, "run", "ten-hits-one-view", "-t", "redis", "-t", "postgres", "--shard", "0/1", "--run-id", id, "-n", "3", "--trials", "2", "-q")
	}
	left := func(id string) (keys, rows int64) {
		t.Helper()
		removed, err := targets.Clean(ctx, targets.Builtin(), targets.CleanScope{Within: targets.RunKey(id), Idle: time.Hour}, serverOptions()...)
		if err != nil || len(removed) != 2 || removed[0].Err != nil || removed[1].Err != nil || removed[0].Removed+removed[1].Removed != 0 {
			t.Fatalf("count %s's keys: %+v, %v", id, removed, err)
		}
		return removed[0].Kept, removed[1].Kept
	}
	if k, r := left(a); k != 2 || r != 2 {
		t.Fatalf("run %s left %d keys and %d rows; want 2 and 2 (a trial each on redis and postgres)", a, k, r)
	}
	out := executeWant(t, ctx, exitOK, "clean")
	if !strings.Contains(out, "Redis server for redis: removed ") || !strings.Contains(out, "keys not written for over 168h0m0s; kept ") {
		t.Errorf("clean without a scope: %q; want what it removed and kept", out)
	}
	if k, r := left(a); k != 2 || r != 2 {
		t.Errorf("after clean without a scope, run %s has %d keys and %d rows; want them kept (written just now)", a, k, r)
	}
	out = executeWant(t, ctx, exitOK, "clean", "--run-id", a)
	want := fmt.Sprintf("Redis server for redis: removed 2 keys of run %s\nPostgreSQL server for postgres: removed 2 rows of run %s\n", a, a)
	if out != want {
		t.Errorf("clean --run-id %s: %q; want %q", a, out, want)
	}
	if k, r := left(b); k != 2 || r != 2 {
		t.Errorf("clean --run-id %s took run %s's: %d keys and %d rows left; want 2 and 2", a, b, k, r)
	}
	out = executeWant(t, ctx, exitOK, "clean", "--prefix", "slug-"+b)
	if !strings.Contains(out, `removed 2 keys starting with "slug-`+b+`"`) || !strings.Contains(out, `removed 2 rows starting with "slug-`+b+`"`) {
		t.Errorf("clean --prefix slug-%s: %q; want 2 keys and 2 rows removed", b, out)
	}
	if k, r := left(b); k != 0 || r != 0 {
		t.Errorf("after clean --prefix, run %s has %d keys and %d rows; want none", b, k, r)
	}
	executeWant(t, ctx, exitUsage, "clean", "--run-id", "a b")
	executeWant(t, ctx, exitUsage, "clean", "--prefix", "")
}

// TestCleanSparesRecentKeys: a clean by age removes what was not written
// for longer than its bound and keeps, and counts, what was: on both real
// servers, a key written before a wait past the bound and one after.
func TestCleanSparesRecentKeys(t *testing.T) {
	needServers(t)
	ctx := context.Background()
	const idle = 3 * time.Second
	tag := fmt.Sprintf("inputsage%d", time.Now().UnixNano()%1e9)
	write := func(id string) {
		executeWant(t, ctx, exitOK, "run", "ten-hits-one-view", "-t", "redis", "-t", "postgres", "--shard", "0/1", "--run-id", id, "-n", "2", "--trials", "1", "-q")
	}
	write(tag + "old")
	time.Sleep(idle + 1500*time.Millisecond) // OBJECT IDLETIME counts whole seconds
	write(tag + "new")
	done, err := targets.Clean(ctx, targets.Builtin(), targets.CleanScope{Within: tag, Idle: idle}, serverOptions()...)
	if err != nil || len(done) != 2 {
		t.Fatalf("clean: %+v, %v", done, err)
	}
	for _, d := range done {
		if d.Err != nil || d.Removed != 1 || d.Kept != 1 {
			t.Errorf("%s: removed %d, kept %d, %v; want the old run's removed and the new one's kept", d.Server.What, d.Removed, d.Kept, d.Err)
		}
	}
	if done, err := targets.Clean(ctx, targets.Builtin(), targets.CleanScope{Within: tag}, serverOptions()...); err != nil || done[0].Removed+done[1].Removed != 2 {
		t.Errorf("clean what is left: %+v, %v; want the new run's key and row", done, err)
	}
}

// serverOptions are the real servers' URLs from the environment.
func serverOptions() []targets.Option {
	return []targets.Option{targets.WithRedisURL(os.Getenv("RACELAB_REDIS_URL")), targets.WithPostgresURL(os.Getenv("RACELAB_POSTGRES_URL"))}
}
