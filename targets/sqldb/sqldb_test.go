package sqldb_test

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/racelab/racelab/targets"
	"github.com/racelab/racelab/targets/sqldb"
	"github.com/racelab/racelab/targets/storetest"
)

// MySQLEnv names the MariaDB server .ci/services starts.
const MySQLEnv = "RACELAB_MYSQL_URL"

// server is one database the tests run on: a URL, and a writable handle
// to make its tables with.
type server struct {
	name string
	url  string
	db   *sql.DB
	kind sqldb.Kind
}

// servers are SQLite (a file of the test's own), the CI PostgreSQL and
// the CI MariaDB: a server that does not answer skips its subtest, except
// under CI=true.
func servers() map[string]func(t *testing.T) *server {
	return map[string]func(t *testing.T) *server{
		"sqlite": func(t *testing.T) *server {
			path := filepath.Join(t.TempDir(), "app.db")
			db, err := sql.Open("sqlite", "file:"+path)
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { db.Close() })
			return &server{"sqlite", "sqlite:" + path, db, sqldb.SQLite}
		},
		"postgres": func(t *testing.T) *server {
			return open(t, "postgres", "RACELAB_POSTGRES_URL", targets.DefaultPostgresURL, "pgx", sqldb.PostgreSQL)
		},
		"mariadb": func(t *testing.T) *server {
			return open(t, "mariadb", MySQLEnv, "", "mysql", sqldb.MySQL)
		},
	}
}

func open(t *testing.T, name, env, def, driver string, kind sqldb.Kind) *server {
	u := storetest.URL(env, def)
	db := storetest.Database(t, env, u)
	raw, err := db.Writable()
	if err != nil {
		t.Fatal(err)
	}
	return &server{name, u, raw, kind}
}

// table makes a table of its own for the test, dropped when it ends.
func (s *server) table(t *testing.T, columns string) string {
	name := fmt.Sprintf("sqldb_%s_%d", strings.ToLower(strings.NewReplacer("/", "_", "-", "_").Replace(t.Name())), time.Now().UnixNano()%1e9)
	if len(name) > 60 {
		name = name[len(name)-60:]
		name = "t" + name[1:]
	}
	ctx := context.Background()
	if _, err := s.db.ExecContext(ctx, fmt.Sprintf("CREATE TABLE %s (%s)", name, columns)); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _, _ = s.db.ExecContext(context.Background(), "DROP TABLE "+name) })
	return name
}

func (s *server) exec(t *testing.T, q string, args ...any) {
	t.Helper()
	if s.kind == sqldb.PostgreSQL {
		q = sqldb.Dollars(q)
	}
	if _, err := s.db.ExecContext(context.Background(), q, args...); err != nil {
		t.Fatalf("%s: %v", q, err)
	}
}

func each(t *testing.T, test func(t *testing.T, s *server)) {
	for _, name := range []string{"sqlite", "postgres", "mariadb"} {
		t.Run(name, func(t *testing.T) { test(t, servers()[name](t)) })
	}
}

// TestReadKeepsTypes reads whole numbers as int64, NULL as nil and text
// as string on every database, with and without bound arguments (MySQL
// answers the two over different protocols).
func TestReadKeepsTypes(t *testing.T) {
	each(t, func(t *testing.T, s *server) {
		tbl := s.table(t, "id integer, name varchar(20), note varchar(20), big bigint, price decimal(10,2), ratio double precision")
		s.exec(t, "INSERT INTO "+tbl+" (id, name, note, big, price, ratio) VALUES (?, ?, NULL, ?, ?, ?)", 7, "ann", int64(1)<<40, "12.50", 0.25)
		db, err := sqldb.Open(s.url)
		if err != nil {
			t.Fatal(err)
		}
		defer db.Close()
		ctx := context.Background()
		for _, q := range []struct {
			sql  string
			args []any
		}{
			{"SELECT id, name, note, big, price, ratio, (SELECT count(*) FROM " + tbl + ") AS n FROM " + tbl, nil},
			{"SELECT id, name, note, big, price, ratio, (SELECT count(*) FROM " + tbl + ") AS n FROM " + tbl + " WHERE name = ? AND id = ?", []any{"ann", int64(7)}},
		} {
			rows, err := db.Read(ctx, q.sql, q.args, 0)
			if err != nil {
				t.Fatal(err)
			}
			if len(rows.Rows) != 1 {
				t.Fatalf("%s: %d rows, want 1", q.sql, len(rows.Rows))
			}
			got := rows.Rows[0]
			want := map[string]any{"id": int64(7), "name": "ann", "note": nil, "big": int64(1) << 40, "price": 12.5, "ratio": 0.25, "n": int64(1)}
			for k, w := range want {
				if got[k] != w {
					t.Errorf("%s (args %v): %s = %#v (%T), want %#v (%T)", s.name, q.args, k, got[k], got[k], w, w)
				}
			}
			if strings.Join(rows.Columns, ",") != "id,name,note,big,price,ratio,n" {
				t.Errorf("columns %v", rows.Columns)
			}
		}
	})
}

// TestReadRowCap reads 10,000 rows and refuses 10,001: the cap at its
// edge, on every database.
func TestReadRowCap(t *testing.T) {
	each(t, func(t *testing.T, s *server) {
		tbl := s.table(t, "n integer")
		// 10,001 rows in one statement each way the three take it.
		var b strings.Builder
		b.WriteString("INSERT INTO " + tbl + " (n) VALUES ")
		for i := range sqldb.MaxRows + 1 {
			if i > 0 {
				b.WriteByte(',')
			}
			fmt.Fprintf(&b, "(%d)", i)
		}
		s.exec(t, b.String())
		db, err := sqldb.Open(s.url)
		if err != nil {
			t.Fatal(err)
		}
		defer db.Close()
		ctx := context.Background()
		rows, err := db.Read(ctx, "SELECT n FROM "+tbl+" WHERE n < ?", []any{sqldb.MaxRows}, 0)
		if err != nil || len(rows.Rows) != sqldb.MaxRows {
			t.Fatalf("%d rows: %v, %v; want all of them", sqldb.MaxRows, rowsOf(rows), err)
		}
		_, err = db.Read(ctx, "SELECT n FROM "+tbl, nil, 0)
		var tooMany *sqldb.TooManyRowsError
		if !errors.As(err, &tooMany) || tooMany.Max != sqldb.MaxRows {
			t.Fatalf("%d rows: %v; want a TooManyRowsError at %d", sqldb.MaxRows+1, err, sqldb.MaxRows)
		}
	})
}

func rowsOf(r *sqldb.Rows) int {
	if r == nil {
		return -1
	}
	return len(r.Rows)
}

// TestReadIsReadOnly: a readback that tries to write is refused by the
// database, and the row stays.
func TestReadIsReadOnly(t *testing.T) {
	each(t, func(t *testing.T, s *server) {
		tbl := s.table(t, "n integer")
		s.exec(t, "INSERT INTO "+tbl+" (n) VALUES (1)")
		db, err := sqldb.Open(s.url)
		if err != nil {
			t.Fatal(err)
		}
		defer db.Close()
		ctx := context.Background()
		if _, err := db.Read(ctx, "DELETE FROM "+tbl, nil, 0); err == nil {
			t.Errorf("a DELETE through Read was not refused")
		}
		rows, err := db.Read(ctx, "SELECT count(*) AS n FROM "+tbl, nil, 0)
		if err != nil || rows.Rows[0]["n"] != int64(1) {
			t.Fatalf("after the refused DELETE: %v, %v; want the one row kept", rows, err)
		}
	})
}

// TestPasswordNeverShown: a URL's password appears in no error and not in
// String, whatever the database says.
func TestPasswordNeverShown(t *testing.T) {
	const secret = "s3cr3t-pw"
	for _, raw := range []string{
		"postgres://racelab:" + secret + "@127.0.0.1:1/racelab?sslmode=disable",
		"mysql://racelab:" + secret + "@127.0.0.1:1/racelab",
		"mysql://racelab:" + secret + "@127.0.0.1:1/racelab?bogus_setting=%zz",
		"postgres://racelab:" + secret + "@[::1:5432/x",
	} {
		db, err := sqldb.Open(raw)
		if err != nil {
			if strings.Contains(err.Error(), secret) {
				t.Errorf("Open(%q): %v shows the password", raw, err)
			}
			continue
		}
		if strings.Contains(db.String(), secret) {
			t.Errorf("String() = %q shows the password", db.String())
		}
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		_, err = db.Read(ctx, "SELECT 1", nil, 0)
		cancel()
		if err == nil || strings.Contains(err.Error(), secret) {
			t.Errorf("Read on %s: %v; want an error without the password", db, err)
		}
		db.Close()
	}
	if u := storetest.URL(MySQLEnv, ""); u != "" {
		// A real server refusing the password: the driver's own words.
		wrong := strings.Replace(u, "mysql://racelab@", "mysql://racelab:"+secret+"@", 1)
		db, err := sqldb.Open(wrong)
		if err != nil {
			t.Fatal(err)
		}
		defer db.Close()
		_, err = db.Read(context.Background(), "SELECT 1", nil, 0)
		if err == nil || strings.Contains(err.Error(), secret) {
			t.Errorf("a refused password: %v; want an error without it", err)
		}
	}
}

func TestOpenRefuses(t *testing.T) {
	for _, raw := range []string{"sqlite:", "sqlite:/x.db?cache=shared", "redis://127.0.0.1:6379", "postgres:///db", "mysql://h:99999/db", "://"} {
		if _, err := sqldb.Open(raw); !errors.Is(err, sqldb.ErrBadURL) {
			t.Errorf("Open(%q) = %v; want ErrBadURL", raw, err)
		}
	}
	db, err := sqldb.Open("postgres://u@h:5432/db?sslmode=disable&isolation=serializable")
	if err != nil || db.Param("isolation") != "serializable" || db.Kind() != sqldb.PostgreSQL {
		t.Fatalf("%v %v", db, err)
	}
}

func TestDollars(t *testing.T) {
	for in, want := range map[string]string{
		"SELECT ? , ?":                           "SELECT $1 , $2",
		"SELECT '?', \"a?\", ? -- ?\n, ?":        "SELECT '?', \"a?\", $1 -- ?\n, $2",
		"SELECT 'it''s ?', ? /* ? */ , $$?$$, ?": "SELECT 'it''s ?', $1 /* ? */ , $$?$$, $2",
		"SELECT data ?? 'k' FROM t WHERE id = ?": "SELECT data ? 'k' FROM t WHERE id = $1",
		"SELECT $tag$ ? $tag$, ?":                "SELECT $tag$ ? $tag$, $1",
		"SELECT $1x, ?":                          "SELECT $1x, $1",
		"SELECT 'unclosed ?":                     "SELECT 'unclosed ?",
	} {
		if got := sqldb.Dollars(in); got != want {
			t.Errorf("Dollars(%q) = %q, want %q", in, got, want)
		}
	}
}

// TestClassify: each database's own refusal of a transaction is Refused,
// on the real servers.
func TestClassifyDeadlock(t *testing.T) {
	each(t, func(t *testing.T, s *server) {
		if s.kind == sqldb.SQLite {
			t.Skip("SQLite has no row locks to deadlock on; its BUSY is tested in the SQL races")
		}
		tbl := s.table(t, "id integer PRIMARY KEY, n integer")
		s.exec(t, "INSERT INTO "+tbl+" (id, n) VALUES (1, 0), (2, 0)")
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		a, err := s.db.BeginTx(ctx, nil)
		if err != nil {
			t.Fatal(err)
		}
		defer a.Rollback()
		b, err := s.db.BeginTx(ctx, nil)
		if err != nil {
			t.Fatal(err)
		}
		defer b.Rollback()
		q := "UPDATE " + tbl + " SET n = n + 1 WHERE id = ?"
		if s.kind == sqldb.PostgreSQL {
			q = sqldb.Dollars(q)
		}
		if _, err := a.ExecContext(ctx, q, 1); err != nil {
			t.Fatal(err)
		}
		if _, err := b.ExecContext(ctx, q, 2); err != nil {
			t.Fatal(err)
		}
		errs := make(chan error, 2)
		go func() { _, err := a.ExecContext(ctx, q, 2); errs <- err }()
		go func() { _, err := b.ExecContext(ctx, q, 1); errs <- err }()
		var refused int
		for range 2 {
			err := <-errs
			if err == nil {
				continue
			}
			class, code := sqldb.Classify(err)
			if class != sqldb.Refused {
				t.Errorf("%v: class %v (%s); want Refused", err, class, code)
			}
			refused++
			// The loser ends; the winner goes on.
			a.Rollback()
			b.Rollback()
		}
		if refused == 0 {
			t.Fatal("no deadlock was reported")
		}
	})
}

// TestValueWidths: whole numbers of every width a driver may answer read
// as int64, one past int64 as float64, and the text of an integer column
// as its number.
func TestValueWidths(t *testing.T) {
	for _, tt := range []struct {
		in, want any
		typ      string
	}{
		{int(7), int64(7), ""}, {int8(-8), int64(-8), ""}, {int16(16), int64(16), ""}, {int32(-32), int64(-32), ""},
		{uint(1), int64(1), ""}, {uint8(255), int64(255), ""}, {uint16(16), int64(16), ""}, {uint32(32), int64(32), ""},
		{uint64(1 << 63), float64(1 << 63), ""}, {uint64(1<<63 - 1), int64(1<<63 - 1), ""},
		{float32(1.5), float64(1.5), ""}, {[]byte("42"), int64(42), "BIGINT"}, {"x", "x", "TEXT"}, {nil, nil, ""},
	} {
		if got := sqldb.Value(tt.in, tt.typ); got != tt.want {
			t.Errorf("Value(%T %v, %q) = %T %v; want %T %v", tt.in, tt.in, tt.typ, got, got, tt.want, tt.want)
		}
	}
}
