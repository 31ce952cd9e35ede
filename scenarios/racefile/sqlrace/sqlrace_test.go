package sqlrace_test

import (
	"context"
	"fmt"
	"net/url"
	"path/filepath"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/racelab/racelab/scenarios/racefile/sqlrace"
	"github.com/racelab/racelab/targets"
	"github.com/racelab/racelab/targets/sqldb"
	"github.com/racelab/racelab/targets/storetest"
)

// open opens the database at url (which env names) with one account
// row, v = 0, under a table name of the test's own.
func open(t *testing.T, env, url string) (*sqldb.DB, string) {
	t.Helper()
	db := storetest.Database(t, env, url)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	table := fmt.Sprintf("racelab_sqlrace_%d", time.Now().UnixNano())
	for _, q := range []string{
		"CREATE TABLE " + table + " (id INTEGER PRIMARY KEY, v INTEGER NOT NULL)",
		"INSERT INTO " + table + " (id, v) VALUES (1, 0)",
	} {
		if _, err := db.Write(ctx, q, nil); err != nil {
			t.Fatal(err)
		}
	}
	t.Cleanup(func() { _, _ = db.Write(context.Background(), "DROP TABLE "+table, nil) })
	return db, table
}

func lite(t *testing.T) (*sqldb.DB, string) {
	return open(t, "", "sqlite:"+filepath.Join(t.TempDir(), "race.db"))
}

// postgres opens the CI's PostgreSQL at level.
func postgres(t *testing.T, level string) (*sqldb.DB, string) {
	u, err := url.Parse(storetest.URL("RACELAB_POSTGRES_URL", targets.DefaultPostgresURL))
	if err != nil {
		t.Fatal(err)
	}
	q := u.Query()
	q.Set("isolation", level)
	u.RawQuery = q.Encode()
	return open(t, "RACELAB_POSTGRES_URL", u.String())
}

// deposit reads the balance, waits for the other at a barrier, and
// writes what it read plus 10: the lost update of a read-then-write.
func deposit(table string, retry int) *sqlrace.Tx {
	return &sqlrace.Tx{Retry: retry, Steps: []sqlrace.Step{
		{Query: "SELECT v FROM " + table + " WHERE id = 1", As: "acct", Args: noArgs},
		{Barrier: true},
		{Query: "UPDATE " + table + " SET v = ? WHERE id = 1", Args: func(vars map[string]any) ([]any, error) {
			rows := vars["acct"].(map[string]any)["rows"].([]any)
			return []any{rows[0].(map[string]any)["v"].(int64) + 10}, nil
		}},
	}}
}

func noArgs(map[string]any) ([]any, error) { return nil, nil }

// race begins n transactions of def and releases them together.
func race(t *testing.T, db *sqldb.DB, def *sqlrace.Tx, n int, order []sqlrace.OrderStep) []sqlrace.Answer {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	runs := make([]*sqlrace.Run, n)
	for i := range runs {
		r, err := sqlrace.Begin(ctx, db, i, def, map[string]any{}, "commit")
		if err != nil {
			t.Fatal(err)
		}
		runs[i] = r
	}
	var wg sync.WaitGroup
	for _, f := range sqlrace.Release(runs, order) {
		wg.Go(func() { f(ctx) })
	}
	wg.Wait()
	out := make([]sqlrace.Answer, n)
	for i, r := range runs {
		a, err := r.Result()
		if a.Error {
			t.Fatalf("transaction %d failed: %v", i, err)
		}
		out[i] = a
	}
	return out
}

func balance(t *testing.T, db *sqldb.DB, table string) int64 {
	t.Helper()
	rows, err := db.Read(context.Background(), "SELECT v FROM "+table+" WHERE id = 1", nil, 1)
	if err != nil {
		t.Fatal(err)
	}
	return rows.Rows[0]["v"].(int64)
}

// whats lists a timeline's events.
func whats(a sqlrace.Answer) []string {
	var out []string
	for _, e := range a.Timeline {
		out = append(out, e.What)
	}
	return out
}

// TestBarrierThenRefusal: at the barrier both transactions have read;
// SQLite then lets one write and refuses the other (BUSY), so nothing is
// lost and nothing is retried.
func TestBarrierThenRefusal(t *testing.T) {
	db, table := lite(t)
	answers := race(t, db, deposit(table, 0), 2, nil)
	committed, aborted := 0, 0
	for i, a := range answers {
		if got := whats(a); len(got) == 0 || got[0] != "read" {
			t.Errorf("transaction %d: timeline %v; want its read first", i, got)
		}
		if a.Committed {
			committed++
		}
		if a.Aborted {
			aborted++
			if a.Code == "" {
				t.Errorf("transaction %d aborted without the database's code", i)
			}
		}
	}
	if committed != 1 || aborted != 1 {
		t.Fatalf("committed %d, aborted %d; want one each: %+v", committed, aborted, answers)
	}
	if got := balance(t, db, table); got != 10 {
		t.Errorf("balance %d; want 10, the one committed deposit", got)
	}
	// The barrier held: neither wrote before both had read.
	var reads, firstWrite []float64
	for _, a := range answers {
		for _, e := range a.Timeline {
			switch e.What {
			case "read":
				reads = append(reads, e.AtMS)
			case "wrote", "aborted":
				firstWrite = append(firstWrite, e.AtMS)
			}
		}
	}
	if len(reads) != 2 || len(firstWrite) == 0 || slices.Max(reads) > slices.Min(firstWrite) {
		t.Errorf("reads at %v, writes at %v; want both reads before any write", reads, firstWrite)
	}
}

// TestRetryLandsBoth: SQLite refuses the second deposit (BUSY), and so
// does PostgreSQL at serializable (40001); retried on a new transaction
// after a short wait, it reads what the first committed, and both land.
func TestRetryLandsBoth(t *testing.T) {
	for name, open := range map[string]func(*testing.T) (*sqldb.DB, string){
		"sqlite":   lite,
		"postgres": func(t *testing.T) (*sqldb.DB, string) { return postgres(t, "serializable") },
	} {
		t.Run(name, func(t *testing.T) {
			db, table := open(t)
			answers := race(t, db, deposit(table, 5), 2, nil)
			retries := 0
			for i, a := range answers {
				if !a.Committed {
					t.Errorf("transaction %d: %v; want it committed after retries", i, whats(a))
				}
				retries += a.Retries
			}
			if retries == 0 {
				t.Errorf("no retries; want the refused one tried again")
			}
			if got := balance(t, db, table); got != 20 {
				t.Errorf("balance %d; want 20, both deposits", got)
			}
			if db.Retries() != int64(retries) {
				t.Errorf("the database counted %d retries; the answers %d", db.Retries(), retries)
			}
		})
	}
}

// TestOrderBlocksOnALock: a replayed order whose second transaction
// writes a row the first holds goes on past the blocked statement; the
// blocked one finishes when the first commits, and both land at read
// committed.
func TestOrderBlocksOnALock(t *testing.T) {
	db, table := postgres(t, "read-committed")
	add := &sqlrace.Tx{Steps: []sqlrace.Step{{Query: "UPDATE " + table + " SET v = v + 10 WHERE id = 1", Args: noArgs}}}
	order := []sqlrace.OrderStep{{Tx: 0, Step: 1}, {Tx: 1, Step: 1}, {Tx: 0, End: "commit"}, {Tx: 1, End: "commit"}}
	answers := race(t, db, add, 2, order)
	if !slices.Contains(whats(answers[1]), "blocked") {
		t.Errorf("second transaction: %v; want it blocked behind the first's lock", whats(answers[1]))
	}
	for i, a := range answers {
		if !a.Committed {
			t.Errorf("transaction %d: %v; want it committed", i, whats(a))
		}
	}
	if got := balance(t, db, table); got != 20 {
		t.Errorf("balance %d; want 20", got)
	}
}
