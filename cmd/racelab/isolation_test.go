package main

import (
	"context"
	"path/filepath"
	"strings"
	"testing"
)

// TestIsolationCommand measures Hermitage's table on SQLite through the
// command, and refuses what is not a database with exit 2.
func TestIsolationCommand(t *testing.T) {
	ctx := context.Background()
	out := executeWant(t, ctx, exitOK, "isolation", "-t", "lite=sqlite:"+filepath.Join(t.TempDir(), "h.db"))
	lines := strings.Split(out, "\n")
	if !strings.HasPrefix(lines[0], "TARGET") || !strings.Contains(lines[0], "G2-item") {
		t.Fatalf("header %q; want TARGET … G2-item\n%s", lines[0], out)
	}
	row := strings.Fields(lines[1])
	if len(row) < 12 || row[0] != "lite" || row[1] != "serializable" {
		t.Fatalf("row %q; want lite serializable and ten cells\n%s", lines[1], out)
	}
	if strings.Contains(lines[1], "—") || strings.Contains(lines[1], "?") {
		t.Errorf("SQLite let an anomaly through or proved nothing: %s", lines[1])
	}
	executeWant(t, ctx, exitUsage, "isolation")
	executeWant(t, ctx, exitUsage, "isolation", "-t", "web=http://127.0.0.1:1")
	executeWant(t, ctx, exitUsage, "isolation", "-t", "lite=sqlite:/tmp/x.db?isolation=read-committed")
}

// TestSQLRaceLevelRefused: run refuses a level the database lacks, naming
// those it has, before anything runs.
func TestSQLRaceLevelRefused(t *testing.T) {
	executeWant(t, context.Background(), exitUsage, "run", filepath.Join("..", "..", "scenarios", "races", "sql", "lost-deposit.race.yaml"),
		"-t", "pg=postgres://racelab@127.0.0.1:1/racelab?isolation=snapshot")
	_, _, stderr := execute(context.Background(), "run", filepath.Join("..", "..", "scenarios", "races", "sql", "lost-deposit.race.yaml"),
		"-t", "pg=postgres://racelab@127.0.0.1:1/racelab?isolation=snapshot")
	if !strings.Contains(stderr, "want one of read-uncommitted, read-committed, repeatable-read, serializable") {
		t.Errorf("stderr %q; want the levels PostgreSQL has", stderr)
	}
}
