package main

import (
	"context"
	"path/filepath"
	"strings"
	"testing"

	"github.com/racelab/racelab/targets"
	"github.com/racelab/racelab/targets/storetest"
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

// TestExplainSQLRace replays lost-deposit on PostgreSQL at read committed
// and at serializable: each lane says what the transaction read and how
// it ended, and its answer names the outcome alone (a transaction has no
// status or body to show); missing a fixed target asks for a database.
func TestExplainSQLRace(t *testing.T) {
	ctx := context.Background()
	race := filepath.Join("..", "..", "scenarios", "races", "sql", "lost-deposit.race.yaml")
	_, _, stderr := execute(ctx, "explain", race, "-t", "sqlite:"+filepath.Join(t.TempDir(), "a.db"))
	if !strings.Contains(stderr, "--fixed is missing") || !strings.Contains(stderr, "a database URL (postgres://…, mysql://… or sqlite:PATH)") {
		t.Errorf("explain without --fixed said %q; want it to ask for a database URL", stderr)
	}
	needServers(t)
	pg := storetest.URL("RACELAB_POSTGRES_URL", targets.DefaultPostgresURL)
	out := executeWant(t, ctx, exitOK, "explain", race, "-t", pg, "--fixed", pg+"&isolation=serializable")
	for _, want := range []string{`read [{"balance":100}]`, "committed", "aborted (40001)", "→ allowed at ", "→ refused at "} {
		if !strings.Contains(out, want) {
			t.Errorf("explain lacks %q:\n%s", want, out)
		}
	}
	if strings.Contains(out, "allowed 0") || strings.Contains(out, `{"committed"`) {
		t.Errorf("a transaction's answer shows a status or a body:\n%s", out)
	}
	if list := executeWant(t, ctx, exitOK, "list"); strings.Contains(list, "plays nothing") {
		t.Errorf("list says a target plays nothing:\n%s", list)
	}
}
