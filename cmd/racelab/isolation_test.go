package main

import (
	"context"
	"os"
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

// TestLintNotesNoCleanup: a SQL race whose setup writes rows but that
// declares no cleanup: lints clean (exit 0) with a note on stderr saying
// its rows stay; the shipped files, which clean up, get none.
func TestLintNotesNoCleanup(t *testing.T) {
	ctx := context.Background()
	shipped := filepath.Join("..", "..", "scenarios", "races", "sql", "lost-deposit.race.yaml")
	data, err := os.ReadFile(shipped)
	if err != nil {
		t.Fatal(err)
	}
	text := string(data)
	i, j := strings.Index(text, "cleanup:"), strings.Index(text, "counted:")
	if i < 0 || j < i {
		t.Fatalf("%s has no cleanup: before counted:", shipped)
	}
	bare := filepath.Join(t.TempDir(), "bare.race.yaml")
	if err := os.WriteFile(bare, []byte(text[:i]+text[j:]), 0o644); err != nil {
		t.Fatal(err)
	}
	code, _, stderr := execute(ctx, "race", "lint", bare, shipped)
	if code != exitOK || strings.Count(stderr, "note: no cleanup:") != 1 || !strings.Contains(stderr, bare+": note:") {
		t.Errorf("lint: exit %d, stderr %q; want 0 and one note, for %s", code, stderr, bare)
	}
}
