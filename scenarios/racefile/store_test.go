package racefile_test

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/racelab/racelab/internal/testwait"
	"github.com/racelab/racelab/scenarios/engine"
	"github.com/racelab/racelab/scenarios/racefile"
	"github.com/racelab/racelab/scenarios/results"
	"github.com/racelab/racelab/targets"
	"github.com/racelab/racelab/targets/sqldb"
	"github.com/racelab/racelab/targets/storetest"
)

// helperArg, as the test binary's first argument, makes it a small
// command for exec: readbacks instead of running the tests: a command a
// race file may run, built with the test and nothing else.
const helperArg = "racelab-readback-helper"

func TestMain(m *testing.M) {
	if len(os.Args) > 2 && os.Args[1] == helperArg {
		os.Exit(helper(os.Args[2:]))
	}
	os.Exit(m.Run())
}

// helper is the command: "count URL TABLE USER" prints {"n": rows} for
// one user's follows; "print N" prints a JSON string of exactly N bytes.
func helper(args []string) int {
	switch args[0] {
	case "count":
		db, err := sqldb.Open(args[1])
		if err != nil {
			fmt.Fprintln(os.Stderr, err)
			return 1
		}
		defer db.Close()
		rows, err := db.Read(context.Background(), "SELECT count(*) AS n FROM "+args[2]+" WHERE user_id = ? AND follow_id = ?", []any{args[3], "them"}, 0)
		if err != nil {
			fmt.Fprintln(os.Stderr, err)
			return 1
		}
		_ = json.NewEncoder(os.Stdout).Encode(rows.Rows[0])
	case "print":
		n, _ := strconv.Atoi(args[1])
		fmt.Print(`"` + strings.Repeat("a", n-2) + `"`)
	}
	return 0
}

// database is one database the race tests read: SQLite (a file of the
// test's own), the CI PostgreSQL and the CI MariaDB.
type database struct {
	name string
	url  string
	db   *sqldb.DB
	w    *sql.DB
}

func openDatabase(t *testing.T, name string) *database {
	where := map[string][2]string{ // the environment variable, the default
		"sqlite":   {"", "sqlite:" + filepath.Join(t.TempDir(), "app.db")},
		"postgres": {"RACELAB_POSTGRES_URL", targets.DefaultPostgresURL},
		"mariadb":  {"RACELAB_MYSQL_URL", ""},
	}[name]
	u := storetest.URL(where[0], where[1])
	db := storetest.Database(t, where[0], u)
	w, err := db.Writable()
	if err != nil {
		t.Fatal(err)
	}
	return &database{name, u, db, w}
}

var tables atomic.Int64

// followsTable makes a follows table of the test's own, with a unique
// index when fixed; it is dropped when the test ends.
func (d *database) followsTable(t *testing.T, fixed bool) string {
	name := fmt.Sprintf("follows_%d_%d", time.Now().UnixNano()%1e9, tables.Add(1))
	ctx := context.Background()
	d.exec(t, "CREATE TABLE "+name+" (user_id varchar(80), follow_id varchar(80))")
	t.Cleanup(func() { _, _ = d.w.ExecContext(ctx, "DROP TABLE "+name) })
	if fixed {
		d.exec(t, "CREATE UNIQUE INDEX "+name+"_once ON "+name+" (user_id, follow_id)")
	}
	return name
}

func (d *database) exec(t *testing.T, q string, args ...any) {
	t.Helper()
	if _, err := d.w.ExecContext(context.Background(), d.db.Rebind(q), args...); err != nil {
		t.Fatalf("%s: %v", q, err)
	}
}

// followService serves POST /follows as an app whose API hides its race:
// it checks whether the user follows them, and if not inserts the row a
// window later; every answer is {"following": true}, duplicate row or
// not. Over a table with a unique index (fixed), the second insert fails
// and the service answers the same, with one row.
func followService(t *testing.T, d *database, table string) *httptest.Server {
	mux := http.NewServeMux()
	mux.HandleFunc("POST /follows", func(w http.ResponseWriter, r *http.Request) {
		var in struct{ User, Follows string }
		if json.NewDecoder(r.Body).Decode(&in) != nil || in.User == "" || in.Follows == "" {
			reply(w, 400, map[string]any{"error": "want {user, follows}"})
			return
		}
		ctx := r.Context()
		count := func() (int, error) {
			var n int
			err := d.w.QueryRowContext(ctx, d.db.Rebind("SELECT count(*) FROM "+table+" WHERE user_id = ? AND follow_id = ?"), in.User, in.Follows).Scan(&n)
			return n, err
		}
		n, err := count()
		if err != nil {
			reply(w, 500, map[string]any{"error": err.Error()})
			return
		}
		if n == 0 {
			time.Sleep(window)
			if _, err := d.w.ExecContext(ctx, d.db.Rebind("INSERT INTO "+table+" (user_id, follow_id) VALUES (?, ?)"), in.User, in.Follows); err != nil {
				// The unique index refused a second row: already following.
				if n, cerr := count(); cerr != nil || n == 0 {
					reply(w, 500, map[string]any{"error": err.Error()})
					return
				}
			}
		}
		reply(w, 200, map[string]any{"following": true})
	})
	srv := httptest.NewServer(mux)
	t.Cleanup(srv.Close)
	return srv
}

// followRace is the race file, reading the table through readback.
func followRace(t *testing.T, readback string) *racefile.File {
	t.Helper()
	src := `race: follow-once
title: following someone many times at once writes one follow row
requests: 6
key: user
databases: [app]
burst:
  - request: POST /follows
    json: {user: "{{key}}", follows: them}
    allowed: status == 200 && body.following
readback:
` + readback + `
counted: follows.rows[0].n
rule: follows.rows[0].n <= 1
`
	f, err := racefile.Parse("follow.race.yaml", []byte(src))
	if err != nil {
		t.Fatal(err)
	}
	return f
}

func sqlReadback(table string) string {
	return `  - sql: SELECT count(*) AS n FROM ` + table + ` WHERE user_id = ? AND follow_id = ?
    db: app
    args: [key, "'them'"]
    as: follows`
}

// run plays sc on the targets given, 10 trials, and returns each
// target's result.
func runRace(t *testing.T, sc *engine.Scenario, targets ...string) []results.TargetResult {
	t.Helper()
	res, err := engine.Run(context.Background(), engine.Plan{Scenario: sc, Trials: 10, Targets: targets, Timeout: time.Minute,
		Expect: engine.OverrideRace})
	if err != nil {
		t.Fatal(err)
	}
	for _, tr := range res.Targets {
		if tr.Error != "" {
			t.Fatalf("%s: %s", tr.Label(), tr.Error)
		}
	}
	return res.Targets
}

// judged checks that the naive service broke in most trials, with more
// than one row counted, and the fixed one held in every trial: a race only
// the database shows, read from it.
func judged(t *testing.T, naive, fixed results.TargetResult) {
	t.Helper()
	ns, fs := naive.Summary(), fixed.Summary()
	if ns.Broken < ns.Trials*3/4 {
		t.Errorf("naive broke in %d of %d trials; want at least %d (first error %q)", ns.Broken, ns.Trials, ns.Trials*3/4, ns.FirstError)
	}
	if fs.Broken != 0 || fs.Inconclusive != 0 || fixed.Verdict() != "holds" {
		t.Errorf("fixed: %d broken, %d inconclusive, verdict %s; want 0, 0, holds (first why %q, first error %q)",
			fs.Broken, fs.Inconclusive, fixed.Verdict(), fs.FirstWhy, fs.FirstError)
	}
	for _, tr := range naive.Trials {
		if tr.Broken && tr.Counted < 2 {
			t.Errorf("naive trial %d broke with %d rows counted; want 2 or more", tr.Index, tr.Counted)
		}
	}
	for _, tr := range fixed.Trials {
		if tr.Counted != 1 || tr.Allowed != 6 {
			t.Errorf("fixed trial %d: %d rows counted, %d allowed; want 1 and 6", tr.Index, tr.Counted, tr.Allowed)
		}
	}
}

// TestHiddenRaceBySQL: the naive service's duplicate rows, which its API
// never shows, break the rule through a sql: readback on SQLite,
// PostgreSQL and MariaDB; the fixed one (a unique index) holds. Each
// service has its own table, so each runs on its own.
func TestHiddenRaceBySQL(t *testing.T) {
	var cases []testwait.Case
	for _, name := range []string{"sqlite", "postgres", "mariadb"} {
		cases = append(cases, testwait.Case{Name: name, Test: func(t *testing.T) {
			d := openDatabase(t, name)
			var got []results.TargetResult
			for _, fixed := range []bool{false, true} {
				table := d.followsTable(t, fixed)
				sc, err := followRace(t, sqlReadback(table)).ScenarioWith(nil, racefile.Options{Databases: []string{"app=" + d.url}})
				if err != nil {
					t.Fatal(err)
				}
				got = append(got, runRace(t, sc, base(followService(t, d, table)))[0])
			}
			judged(t, got[0], got[1])
			rb := got[1].Trials[0].Readback
			if rb == nil || string(rb.Bodies["follows"]) != `{"count":1,"rows":[{"n":1}]}` {
				t.Errorf("fixed's first readback kept %v; want the row and its count as JSON", rb)
			}
		}})
	}
	testwait.SideBySide(t, cases...)
}

// TestHiddenRaceByTarget: two targets in one run, each with its own
// SQLite file given by --db TARGET.NAME=URL.
func TestHiddenRaceByTarget(t *testing.T) {
	var urls, tgts []string
	for i, fixed := range []bool{false, true} {
		d := openDatabase(t, "sqlite")
		table := "follows"
		d.exec(t, "CREATE TABLE follows (user_id varchar(80), follow_id varchar(80))")
		if fixed {
			d.exec(t, "CREATE UNIQUE INDEX follows_once ON follows (user_id, follow_id)")
		}
		label := []string{"naive", "fixed"}[i]
		urls = append(urls, label+".app="+d.url)
		tgts = append(tgts, label+"="+base(followService(t, d, table)))
	}
	sc, err := followRace(t, sqlReadback("follows")).ScenarioWith(nil, racefile.Options{Databases: urls, Targets: tgts})
	if err != nil {
		t.Fatal(err)
	}
	got := runRace(t, sc, tgts...)
	judged(t, got[0], got[1])
}

// TestHiddenRaceByExec: the same race read through an exec: readback,
// the test binary run as a command that counts the rows; each target's
// table is named after it, and {{target.name}} tells the command which.
func TestHiddenRaceByExec(t *testing.T) {
	d := openDatabase(t, "sqlite")
	prefix := d.followsTable(t, false) // a fresh name; its own table stays empty
	var tgts []string
	for i, fixed := range []bool{false, true} {
		label := []string{"naive", "fixed"}[i]
		table := prefix + "_" + label
		d.exec(t, "CREATE TABLE "+table+" (user_id varchar(80), follow_id varchar(80))")
		if fixed {
			d.exec(t, "CREATE UNIQUE INDEX "+table+"_once ON "+table+" (user_id, follow_id)")
		}
		tgts = append(tgts, label+"="+base(followService(t, d, table)))
	}
	raw := `race: follow-once
requests: 6
key: user
burst:
  - request: POST /follows
    json: {user: "{{key}}", follows: them}
    allowed: status == 200 && body.following
readback:
  - exec: ["` + os.Args[0] + `", ` + helperArg + `, count, "` + d.url + `", "` + prefix + `_{{target.name}}", "{{key}}"]
    as: follows
counted: follows.n
rule: follows.n <= 1
`
	f, err := racefile.Parse("follow-exec.race.yaml", []byte(raw))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := f.ScenarioWith(nil, racefile.Options{Targets: tgts}); err == nil || !strings.Contains(err.Error(), "--allow-exec") || !errors.Is(err, results.ErrUsage) {
		t.Fatalf("without --allow-exec: %v; want a usage error naming --allow-exec", err)
	}
	sc, err := f.ScenarioWith(nil, racefile.Options{AllowExec: true, Targets: tgts})
	if err != nil {
		t.Fatal(err)
	}
	got := runRace(t, sc, tgts...)
	judged(t, got[0], got[1])
}

// pingService answers every POST /ping with 200 and {}: a service whose
// state is all in the database the test fills.
func pingService(t *testing.T) string {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { reply(w, 200, map[string]any{}) }))
	t.Cleanup(srv.Close)
	return base(srv)
}

// oneTrial plays raw on a ping service for one trial and returns it.
func oneTrial(t *testing.T, raw string, o racefile.Options) results.Trial {
	t.Helper()
	f, err := racefile.Parse("edge.race.yaml", []byte(raw))
	if err != nil {
		t.Fatal(err)
	}
	sc, err := f.ScenarioWith(nil, o)
	if err != nil {
		t.Fatal(err)
	}
	res, err := engine.Run(context.Background(), engine.Plan{Scenario: sc, Trials: 1, Requests: 1, Targets: []string{pingService(t)}, Timeout: time.Minute})
	if err != nil {
		t.Fatal(err)
	}
	tr := res.Targets[0]
	if tr.Error != "" || len(tr.Trials) != 1 {
		t.Fatalf("%s: %d trials", tr.Error, len(tr.Trials))
	}
	return tr.Trials[0]
}

// TestRowCapEdge: a readback of 10,000 rows is judged; one of 10,001
// leaves the trial inconclusive, saying why.
func TestRowCapEdge(t *testing.T) {
	d := openDatabase(t, "sqlite")
	d.exec(t, "CREATE TABLE numbers (n integer)")
	d.exec(t, "WITH RECURSIVE s(n) AS (SELECT 0 UNION ALL SELECT n + 1 FROM s WHERE n < ?) INSERT INTO numbers SELECT n FROM s", sqldb.MaxRows)
	for _, tt := range []struct {
		rows   int
		judged bool
	}{{sqldb.MaxRows - 1, true}, {sqldb.MaxRows, true}, {sqldb.MaxRows + 1, false}} {
		raw := `race: cap
databases: [app]
burst:
  - request: POST /ping
readback:
  - sql: SELECT n FROM numbers WHERE n < ?
    args: [` + strconv.Itoa(tt.rows) + `]
    as: all
rule: all.count == ` + strconv.Itoa(tt.rows) + ` && all.rows[0].n == 0
`
		tr := oneTrial(t, raw, racefile.Options{Databases: []string{"app=" + d.url}})
		switch {
		case tt.judged && (tr.Readback.Failed() || tr.Broken):
			t.Errorf("%d rows: broken %v, %q; want it judged and held", tt.rows, tr.Broken, tr.Readback.Error)
		case !tt.judged && (!tr.Readback.Failed() || !strings.Contains(tr.Readback.Error, "more than 10000 rows")):
			t.Errorf("%d rows: %q; want the trial inconclusive, saying more than 10000 rows", tt.rows, tr.Readback.Error)
		case !tt.judged && (!strings.HasPrefix(tr.Readback.Cause, "readback all: ") || !strings.Contains(tr.Readback.Cause, "more than 10000 rows")):
			// The cause counts trials that failed alike, under the table.
			t.Errorf("%d rows: cause %q; want readback all: … more than 10000 rows", tt.rows, tr.Readback.Cause)
		}
	}
}

// TestExecOutputEdge: an exec: readback may print 1 MiB of JSON; one byte
// more leaves the trial inconclusive, saying why.
func TestExecOutputEdge(t *testing.T) {
	for _, n := range []int{racefile.MaxExecOutput - 1, racefile.MaxExecOutput, racefile.MaxExecOutput + 1} {
		raw := `race: output
burst:
  - request: POST /ping
readback:
  - exec: ["` + os.Args[0] + `", ` + helperArg + `, print, "` + strconv.Itoa(n) + `"]
    as: out
rule: size(out) == ` + strconv.Itoa(n-2) + `
`
		tr := oneTrial(t, raw, racefile.Options{AllowExec: true})
		ok := n <= racefile.MaxExecOutput
		switch {
		case ok && (tr.Readback.Failed() || tr.Broken):
			t.Errorf("%d bytes: broken %v, %q; want it judged and held", n, tr.Broken, tr.Readback.Error)
		case !ok && (!tr.Readback.Failed() || !strings.Contains(tr.Readback.Error, "more than 1048576 bytes")):
			t.Errorf("%d bytes: %q; want the trial inconclusive, saying more than 1048576 bytes", n, tr.Readback.Error)
		}
	}
}

// TestStoreOptionsRefused: each mistake on the command line is a usage
// error naming the flag, before anything is sent.
func TestStoreOptionsRefused(t *testing.T) {
	raw := `race: follow
databases: [app]
burst:
  - request: POST /ping
readback:
  - sql: SELECT 1 AS n
    as: one
rule: one.rows[0].n == 1
`
	f, err := racefile.Parse("f.race.yaml", []byte(raw))
	if err != nil {
		t.Fatal(err)
	}
	for _, tt := range []struct {
		o    racefile.Options
		want string
	}{
		{racefile.Options{Targets: []string{"http://127.0.0.1:1"}}, "give --db app=URL"},
		{racefile.Options{Targets: []string{"a=http://127.0.0.1:1", "b=http://127.0.0.1:2"}, Databases: []string{"a.app=sqlite:x.db"}}, "for target b; give --db app=URL (every target) or --db b.app=URL"},
		{racefile.Options{Databases: []string{"app=sqlite:x.db", "other=sqlite:y.db"}}, `declares no database "other"`},
		{racefile.Options{Databases: []string{"c.app=sqlite:x.db"}, Targets: []string{"a=http://127.0.0.1:1"}}, `no target "c" in this run`},
		{racefile.Options{Databases: []string{"app=postgres://u:hunter2@[::1/db"}}, "postgres://u:…@"},
		{racefile.Options{Databases: []string{"app"}}, "want NAME=URL"},
	} {
		_, err := f.ScenarioWith(nil, tt.o)
		if err == nil || !errors.Is(err, results.ErrUsage) || !strings.Contains(err.Error(), tt.want) || strings.Contains(err.Error(), "hunter2") {
			t.Errorf("%+v: %v; want a usage error saying %q", tt.o, err, tt.want)
		}
	}
	if _, err := f.ScenarioWith(nil, racefile.Options{Databases: []string{"a.app=sqlite:a.db", "b.app=sqlite:b.db"}, Targets: []string{"a=http://127.0.0.1:1", "b=http://127.0.0.1:2"}}); err != nil {
		t.Errorf("a database for each target: %v", err)
	}
}

// TestStoreStepsRefused: a sql: or exec: readback written wrong is refused
// when the file is read, at its line.
func TestStoreStepsRefused(t *testing.T) {
	head := "race: r\nburst:\n  - request: POST /ping\n"
	for _, tt := range []struct{ src, want string }{
		{head + "readback:\n  - sql: SELECT 1\n    as: x\nrule: true\n", "f.race.yaml:5:5: a sql: readback reads a database the file declares"},
		{"databases: [app]\n" + head + "readback:\n  - sql: SELECT ? AS n\n    as: x\nrule: true\n", "the query has 1 placeholder and args: gives 0"},
		{"databases: [app]\n" + head + "readback:\n  - sql: SELECT 1\n    db: other\n    as: x\nrule: true\n", "names no database of the file"},
		{"databases: [app]\n" + head + "readback:\n  - sql: SELECT ?\n    args: [nope]\n    as: x\nrule: true\n", "undeclared reference to 'nope'"},
		{"databases: [app]\n" + head + "readback:\n  - sql: SELECT 1\n    exec: [ls]\n    as: x\nrule: true\n", "sql: and exec: both given"},
		{head + "readback:\n  - exec: ls\n    as: x\nrule: true\n", "want the command and its arguments as a list"},
		{head + "readback:\n  - exec: [cat, \"{{target.port}}\"]\n    as: x\nrule: true\n", "{{target.port}} names no variable"},
		{head + "readback:\n  - exec: [cat]\nrule: true\n", "no as: here"},
		{"databases: app\n" + head + "rule: true\n", "databases: is \"app\"; want a list of names"},
	} {
		_, err := racefile.Parse("f.race.yaml", []byte(tt.src))
		if err == nil || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("%q: %v; want %q", tt.src, err, tt.want)
		}
	}
}
