package racefile_test

import (
	"context"
	"encoding/json"
	"errors"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/racelab/racelab/scenarios/engine"
	"github.com/racelab/racelab/scenarios/racefile"
	"github.com/racelab/racelab/scenarios/racefile/sqlrace"
	"github.com/racelab/racelab/scenarios/results"
	"github.com/racelab/racelab/targets"
)

// The SQL races racelab ships, raced on the real databases: outcomes
// are asserted with generous bounds (scheduling varies), never times.

// shipped loads a SQL race of scenarios/races/sql.
func shipped(t *testing.T, name string) *racefile.File {
	t.Helper()
	f, err := racefile.Load(context.Background(), filepath.Join("..", "races", "sql", name+".race.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	return f
}

// sqlRun plays f on each target (NAME=URL), trials times, and returns
// the results by name; no target may fail to run.
func sqlRun(t *testing.T, f *racefile.File, trials int, tgts ...string) map[string]results.TargetResult {
	t.Helper()
	sc, err := f.ScenarioWith(nil, racefile.Options{Targets: tgts})
	if err != nil {
		t.Fatal(err)
	}
	res, err := engine.Run(context.Background(), engine.Plan{Scenario: sc, Trials: trials, Targets: tgts, Timeout: time.Minute,
		Expect: engine.OverrideRace})
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]results.TargetResult{}
	for _, tr := range res.Targets {
		if tr.Error != "" {
			t.Fatalf("%s: %s", tr.Label(), tr.Error)
		}
		out[tr.Name] = tr
	}
	return out
}

// tally counts a target's broken trials, and its refused and retried
// transactions.
type tally struct{ trials, broken, inconclusive, refused, allowed, retries int }

func tallyOf(tr results.TargetResult) tally {
	var c tally
	for _, x := range tr.Trials {
		c.trials++
		if x.Broken {
			c.broken++
		}
		if x.Inconclusive() {
			c.inconclusive++
		}
		c.refused += x.Refused
		c.allowed += x.Allowed
		c.retries += int(x.Retries)
	}
	return c
}

func level(u, lv string) string {
	sep := "?"
	if strings.Contains(u, "?") {
		sep = "&"
	}
	return u + sep + "isolation=" + lv
}

// TestLostDepositPostgres: read committed loses a deposit in most trials;
// repeatable read and serializable never do, refusing one instead; FOR
// UPDATE holds with both deposits landed; serializable with retries lands
// both, and counts the retries.
func TestLostDepositPostgres(t *testing.T) {
	d := openDatabase(t, "postgres")
	const trials = 10
	got := sqlRun(t, shipped(t, "lost-deposit"), trials,
		"rc="+level(d.url, "read-committed"), "rr="+level(d.url, "repeatable-read"), "ser="+level(d.url, "serializable"))
	if c := tallyOf(got["rc"]); c.broken < trials*7/10 {
		t.Errorf("read committed: %d of %d trials broke; want most (%+v)", c.broken, trials, c)
	}
	for _, name := range []string{"rr", "ser"} {
		c := tallyOf(got[name])
		if c.broken != 0 || c.inconclusive != 0 || c.refused == 0 {
			t.Errorf("%s: %+v; want no trial broken or inconclusive, and refusals", name, c)
		}
	}
	fixed := sqlRun(t, shipped(t, "lost-deposit-for-update"), trials, "rc="+level(d.url, "read-committed"))
	if c := tallyOf(fixed["rc"]); c.broken != 0 || c.allowed != 2*trials || c.inconclusive != 0 {
		t.Errorf("FOR UPDATE at read committed: %+v; want every deposit allowed, none broken", c)
	}
	retried := sqlRun(t, shipped(t, "lost-deposit-retry"), trials, "ser="+level(d.url, "serializable"))
	if c := tallyOf(retried["ser"]); c.broken != 0 || c.allowed != 2*trials || c.retries == 0 {
		t.Errorf("serializable with retry: %+v; want every deposit landed after retries", c)
	}
	cleaned(t, d, "racelab_accounts", "id", got["rc"], fixed["rc"])
}

// TestLostDepositMariaDB: InnoDB's repeatable read lets a deposit be
// lost; serializable does not.
func TestLostDepositMariaDB(t *testing.T) {
	weakBreaksStrongHolds(t, "mariadb", "lost-deposit", "racelab_accounts", "id", false)
}

// TestLostDepositSQLite: SQLite's transactions are serializable; the
// second writer is refused (BUSY), never lost.
func TestLostDepositSQLite(t *testing.T) {
	d := openDatabase(t, "sqlite")
	const trials = 10
	got := sqlRun(t, shipped(t, "lost-deposit"), trials, "lite="+d.url)
	if c := tallyOf(got["lite"]); c.broken != 0 || c.inconclusive != 0 || c.refused == 0 {
		t.Errorf("sqlite: %+v; want none broken and refusals", c)
	}
	cleaned(t, d, "racelab_accounts", "id", got["lite"])
}

// TestWriteSkew: two doctors go off call; snapshot isolation
// (PostgreSQL's repeatable read) lets both, serializable refuses one.
func TestWriteSkew(t *testing.T) {
	weakBreaksStrongHolds(t, "postgres", "write-skew", "racelab_doctors", "shift", true)
}

// weakBreaksStrongHolds plays the shipped race on the database at
// repeatable read, where most of 10 trials must break, and at
// serializable, where none may (and, if refusals, the database must have
// refused a transaction); then checks that cleanup: removed the trials'
// rows of table.
func weakBreaksStrongHolds(t *testing.T, kind, race, table, column string, refusals bool) {
	d := openDatabase(t, kind)
	const trials = 10
	got := sqlRun(t, shipped(t, race), trials, "rr="+level(d.url, "repeatable-read"), "ser="+level(d.url, "serializable"))
	if c := tallyOf(got["rr"]); c.broken < trials*7/10 {
		t.Errorf("repeatable read: %d of %d trials broke; want most (%+v)", c.broken, trials, c)
	}
	if c := tallyOf(got["ser"]); c.broken != 0 || c.inconclusive != 0 || refusals && c.refused == 0 {
		t.Errorf("serializable: %+v; want none broken (and refusals: %v)", c, refusals)
	}
	cleaned(t, d, table, column, got["rr"])
}

// cleaned checks that the trials' rows are gone (cleanup:).
func cleaned(t *testing.T, d *database, table, column string, trs ...results.TargetResult) {
	t.Helper()
	for _, tr := range trs {
		for _, x := range tr.Trials {
			rows, err := d.db.Read(context.Background(), "SELECT count(*) AS n FROM "+table+" WHERE "+column+" = ?", []any{x.Key}, 0)
			if err != nil {
				t.Fatal(err)
			}
			if n := rows.Rows[0]["n"]; n != int64(0) {
				t.Errorf("%s: %v rows left for %s; cleanup: should remove them", tr.Name, n, x.Key)
			}
		}
	}
}

// TestOrderBlocked replays a fixed order in which the second transaction
// updates the row the first holds: it is recorded as blocked, the order
// goes on to the first's commit, and the second then lands.
func TestOrderBlocked(t *testing.T) {
	d := openDatabase(t, "postgres")
	f := parsed(t, "blocked.race.yaml", `race: blocked
key: blk
setup:
  - sql: CREATE TABLE IF NOT EXISTS racelab_order (k varchar(64), id int, value int, PRIMARY KEY (k, id))
  - sql: INSERT INTO racelab_order (k, id, value) VALUES (?, 1, 10)
    args: [key]
burst:
  - transaction:
      - sql: UPDATE racelab_order SET value = 11 WHERE k = ? AND id = 1
        args: [key]
  - transaction:
      - sql: UPDATE racelab_order SET value = 12 WHERE k = ? AND id = 1
        args: [key]
order: [0.1, 1.1, 0.commit, 1.commit]
readback:
  - sql: SELECT value FROM racelab_order WHERE k = ?
    args: [key]
    as: after
cleanup:
  - sql: DELETE FROM racelab_order WHERE k = ?
    args: [key]
rule: after.rows[0].value == 12
`)
	got := sqlRun(t, f, 2, "rc="+level(d.url, "read-committed"))["rc"]
	for _, x := range got.Trials {
		if x.Broken || x.Inconclusive() {
			t.Fatalf("trial %d: %s %+v; want the second update last", x.Index, x.Why, x.Readback)
		}
		var second sqlrace.Answer
		if err := json.Unmarshal([]byte(x.Readback.Answers[1].Body), &second); err != nil {
			t.Fatal(err)
		}
		var whats []string
		for _, e := range second.Timeline {
			whats = append(whats, e.What)
		}
		if got := strings.Join(whats, ","); got != "blocked,wrote,committed" {
			t.Errorf("trial %d: the second transaction's timeline is %s; want blocked,wrote,committed", x.Index, got)
		}
	}
	cleaned(t, d, "racelab_order", "k", got)
}

// TestLevelRefused: a level the database lacks is a usage error naming
// the ones it has, before anything runs.
func TestLevelRefused(t *testing.T) {
	for _, c := range []struct{ url, want string }{
		{"postgres://u@127.0.0.1:5432/db?isolation=snapshot", "postgres has no such level; want one of read-uncommitted, read-committed, repeatable-read, serializable"},
		{"mysql://u@127.0.0.1:3306/db?isolation=snapshot", "mysql has no such level; want one of read-uncommitted, read-committed, repeatable-read, serializable"},
		{"sqlite:/tmp/x.db?isolation=read-committed", "sqlite has no such level; want one of serializable"},
		{"postgres://u@127.0.0.1:5432/db?isolation=eventual", "unknown level; want one of"},
	} {
		_, _, err := targets.Lookup(c.url)
		if err == nil || !strings.Contains(err.Error(), c.want) || !errors.Is(err, targets.ErrBadSpec) {
			t.Errorf("%s: %v; want a bad spec saying %q", c.url, err, c.want)
		}
	}
	for _, ok := range []string{"postgres://u@127.0.0.1:5432/db?isolation=repeatable-read", "sqlite:/tmp/x.db", "mysql://u@127.0.0.1/db?isolation=read-committed"} {
		if _, e, err := targets.Lookup(ok); err != nil || e.Name != targets.SQLStore {
			t.Errorf("%s: %v, %q; want the database target", ok, err, e.Name)
		}
	}
	if _, e, err := targets.Lookup("sqlite:naive"); err != nil || e.Name != "sqlite:naive" {
		t.Errorf("sqlite:naive: %v, %q; want the sqlite store's naive strategy still", err, e.Name)
	}
}

// TestSQLRaceBadInput: each mistake is one line at its place, a usage
// error.
func TestSQLRaceBadInput(t *testing.T) {
	const head = "race: r\nsetup:\n  - sql: CREATE TABLE IF NOT EXISTS t (id int)\n"
	tx := "burst:\n  - transaction:\n      - sql: SELECT 1\n  - transaction:\n      - sql: SELECT 2\n"
	for _, c := range []struct{ name, body, want string }{
		{"barrier false", "burst:\n  - transaction:\n      - sql: SELECT 1\n      - barrier: false\n", "barrier: want barrier: true alone"},
		{"only barriers", "burst:\n  - transaction:\n      - barrier: true\n", "has only barriers"},
		{"mixed", "burst:\n  - transaction:\n      - sql: SELECT 1\n  - request: GET /x\n", "a SQL race's burst is all transaction:s"},
		{"db in tx", "databases: [app]\nburst:\n  - transaction:\n      - sql: SELECT 1\n        db: app\n", "a transaction runs on the target"},
		{"retry", "burst:\n  - transaction:\n      - sql: SELECT 1\n    retry: -1\n", "retry: \"-1\""},
		{"order gap", "burst:\n  - transaction:\n      - sql: SELECT 1\n      - sql: SELECT 2\norder: [0.2, 0.1, 0.commit]\n", "want 0.1 next"},
		{"order past", tx + "order: [0.1, 1.2, 0.commit, 1.commit]\n", "transaction 1 has 1 statement"},
		{"order end early", "burst:\n  - transaction:\n      - sql: SELECT 1\n      - sql: SELECT 2\norder: [0.1, 0.commit]\n", "before 0.2"},
		{"order no end", tx + "order: [0.1, 1.1, 0.commit]\n", "transaction 1 never ends"},
		{"order no tx", tx + "order: [2.1]\n", "no transaction 2"},
		{"order barrier", "burst:\n  - transaction:\n      - sql: SELECT 1\n      - barrier: true\norder: [0.1, 0.commit]\n", "barrier: and order: both given"},
		{"args count", "burst:\n  - transaction:\n      - sql: SELECT ?\n", "one argument for each ?"},
		{"as taken", "burst:\n  - transaction:\n      - sql: SELECT 1\n        as: a\n      - sql: SELECT 2\n        as: a\n", "already taken"},
		{"bad allowed", "burst:\n  - transaction:\n      - sql: SELECT 1\n    allowed: status == 200\n", "allowed:"},
	} {
		_, err := racefile.Parse("r.race.yaml", []byte(head+c.body+"rule: allowed >= 0\n"))
		if err == nil || !strings.Contains(err.Error(), c.want) || !errors.Is(err, results.ErrUsage) || strings.Contains(err.Error(), "\n") {
			t.Errorf("%s: %v; want one line saying %q", c.name, err, c.want)
		}
	}
	// The HTTP race keeps its own: no sql: setup, no order:.
	for _, c := range []struct{ body, want string }{
		{"setup:\n  - sql: SELECT 1\nburst:\n  - request: GET /x\n", "a sql: setup step belongs to a SQL race"},
		{"burst:\n  - request: GET /x\norder: [0.1]\n", "order: belongs to a SQL race"},
	} {
		if _, err := racefile.Parse("r.race.yaml", []byte("race: r\n"+c.body+"rule: allowed >= 0\n")); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%v; want %q", err, c.want)
		}
	}
}

// TestTracedTimeline: a traced run (explain's replay) records each
// transaction's read, write and end as the steps of its lane.
func TestTracedTimeline(t *testing.T) {
	d := openDatabase(t, "postgres")
	tg := "ser=" + level(d.url, "serializable")
	sc, err := shipped(t, "lost-deposit").ScenarioWith(nil, racefile.Options{Targets: []string{tg}})
	if err != nil {
		t.Fatal(err)
	}
	res, err := engine.Run(context.Background(), engine.Plan{Scenario: sc, Trials: 1, Targets: []string{tg}, Timeout: time.Minute, Trace: true, Expect: engine.OverrideRace})
	if err != nil {
		t.Fatal(err)
	}
	x := res.Targets[0].Trials[0]
	var ends []string
	for _, r := range x.Requests {
		var ops []string
		for _, s := range r.Steps {
			ops = append(ops, s.Op)
		}
		got := strings.Join(ops, ",")
		if !strings.HasPrefix(got, "read,") {
			t.Errorf("request %d: steps %s; want its read first", r.Index, got)
		}
		ends = append(ends, ops[len(ops)-1])
	}
	// Serializable refuses one of the two deposits, whichever comes second.
	if strings.Join(ends, ",") != "committed,aborted" && strings.Join(ends, ",") != "aborted,committed" {
		t.Errorf("the transactions ended %v; want one committed and one aborted", ends)
	}
}

// TestTransactionErrorInconclusive: a statement that fails other than by
// the database's refusal (here a table that does not exist) is an error:
// the trial proves nothing, never "holds".
func TestTransactionErrorInconclusive(t *testing.T) {
	d := openDatabase(t, "sqlite")
	f := parsed(t, "err.race.yaml", `race: err
requests: 2
burst:
  - transaction:
      - sql: UPDATE racelab_no_such_table SET n = n + 1
rule: allowed >= 0
`)
	sc, err := f.ScenarioWith(nil, racefile.Options{Targets: []string{"lite=" + d.url}})
	if err != nil {
		t.Fatal(err)
	}
	res, err := engine.Run(context.Background(), engine.Plan{Scenario: sc, Trials: 1, Targets: []string{"lite=" + d.url}, Timeout: time.Minute, Expect: engine.OverrideRace})
	if err != nil {
		t.Fatal(err)
	}
	tr := res.Targets[0]
	// Every request failed: the engine stops the target with the first
	// error, which names the statement's failure.
	if tr.Error == "" || !strings.Contains(tr.Error, "no such table") {
		t.Fatalf("target error %q, trials %+v; want the failed statement named", tr.Error, tr.Trials)
	}
	if c := tallyOf(tr); c.broken != 0 || c.trials-c.inconclusive != 0 {
		t.Errorf("%+v; want no trial judged", c)
	}
}

// TestOneTransactionErrored: one transaction fails, the other commits:
// the trial is inconclusive, with the failure as its cause.
func TestOneTransactionErrored(t *testing.T) {
	d := openDatabase(t, "sqlite")
	f := parsed(t, "half.race.yaml", `race: half
burst:
  - transaction:
      - sql: SELECT 1 AS one
  - transaction:
      - sql: UPDATE racelab_no_such_table SET n = n + 1
rule: allowed >= 0
`)
	x := sqlRun(t, f, 1, "lite="+d.url)["lite"].Trials[0]
	if x.Broken || !x.Inconclusive() || x.Errors != 1 || x.Allowed != 1 {
		t.Errorf("trial: broken %v, inconclusive %v, %d errors, %d allowed; want inconclusive with one error and one allowed", x.Broken, x.Inconclusive(), x.Errors, x.Allowed)
	}
}

// parsed is the SQL race file src, which must parse.
func parsed(t *testing.T, name, src string) *racefile.File {
	t.Helper()
	f, err := racefile.Parse(name, []byte(src))
	if err != nil {
		t.Fatal(err)
	}
	return f
}
