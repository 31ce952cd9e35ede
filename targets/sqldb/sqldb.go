package sqldb

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"net"
	"net/url"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/go-sql-driver/mysql"
	_ "github.com/jackc/pgx/v5/stdlib" // database/sql's "pgx"
	_ "modernc.org/sqlite"             // database/sql's "sqlite"

	"github.com/racelab/racelab/targets/internal/server"
)

// Kind is a database's dialect.
type Kind string

// The databases racelab speaks to.
const (
	SQLite     Kind = "sqlite"
	PostgreSQL Kind = "postgres"
	MySQL      Kind = "mysql"
)

// MaxRows is the most rows Read returns by default: a readback is a
// count or a handful of rows, and ten thousand is far past any rule a
// person reads.
const MaxRows = 10_000

// BusyTimeout is how long a SQLite connection waits on another's lock
// before SQLite answers BUSY.
const BusyTimeout = 5 * time.Second

// URLForms says what a database URL may be, for the errors.
const URLForms = "sqlite:PATH, postgres://USER@HOST:PORT/DB or mysql://USER:PASSWORD@HOST:PORT/DB"

// ErrBadURL is matched by every error of Open about the URL itself.
var ErrBadURL = errors.New("bad database URL")

// DB is one database, named by its URL. It opens connections only when
// it is first used, and is safe for concurrent use.
type DB struct {
	kind     Kind
	shown    string // the URL, password hidden
	password string
	// path is SQLite's file; dsn the driver's name for PostgreSQL and
	// MySQL.
	path string
	dsn  string
	// Params are the URL's query settings racelab reads itself (such as
	// isolation=), kept from the driver.
	params url.Values

	mu     sync.Mutex
	reader *sql.DB
	writer *sql.DB
	// retries counts the SQL race transactions retried on it (Retries).
	retries atomic.Int64
}

// own are the query settings racelab reads and keeps from the drivers.
var own = []string{"isolation"}

// Open reads a database URL; it connects to nothing. A URL it cannot use
// is an error matching ErrBadURL, with the password hidden.
func Open(raw string) (*DB, error) {
	raw = strings.TrimSpace(raw)
	shown := Redact(raw)
	bad := func(format string, args ...any) error {
		return fmt.Errorf("%w %q: %s; want %s", ErrBadURL, shown, fmt.Sprintf(format, args...), URLForms)
	}
	if rest, ok := strings.CutPrefix(raw, "sqlite:"); ok {
		path, query, _ := strings.Cut(strings.TrimPrefix(rest, "//"), "?")
		if path == "" {
			return nil, bad("no file")
		}
		params, err := url.ParseQuery(query)
		if err != nil {
			return nil, bad("its settings: %v", err)
		}
		if err := onlyOwn(params); err != nil {
			return nil, bad("%v", err)
		}
		return &DB{kind: SQLite, shown: shown, path: path, params: params}, nil
	}
	u, err := server.ParseURL(raw)
	if err != nil {
		return nil, bad("%v", err)
	}
	if err := server.CheckAddress(u); err != nil {
		return nil, bad("%v", err)
	}
	db := &DB{shown: shown, params: url.Values{}}
	db.password, _ = u.User.Password()
	q := u.Query()
	for _, k := range own {
		if v, ok := q[k]; ok {
			db.params[k] = v
			q.Del(k)
		}
	}
	switch strings.ToLower(u.Scheme) {
	case "postgres", "postgresql":
		db.kind = PostgreSQL
		u.RawQuery = q.Encode()
		db.dsn = u.String()
	case "mysql", "mariadb":
		db.kind = MySQL
		cfg := mysql.NewConfig()
		cfg.User = u.User.Username()
		cfg.Passwd = db.password
		cfg.Net = "tcp"
		cfg.Addr = u.Host
		if u.Port() == "" {
			cfg.Addr = net.JoinHostPort(u.Hostname(), "3306")
		}
		cfg.DBName = strings.TrimPrefix(u.Path, "/")
		db.dsn = cfg.FormatDSN()
		if len(q) > 0 {
			// The driver's own settings (tls=, charset=…), as its DSN
			// takes them.
			sep := "?"
			if strings.Contains(db.dsn, "?") {
				sep = "&"
			}
			db.dsn += sep + q.Encode()
			if _, err := mysql.ParseDSN(db.dsn); err != nil {
				return nil, bad("%v", db.scrub(err))
			}
		}
	default:
		return nil, bad("scheme %q", u.Scheme)
	}
	if u.Host == "" {
		return nil, bad("no host")
	}
	return db, nil
}

// onlyOwn refuses a SQLite setting racelab does not read: the file is
// opened with racelab's own pragmas.
func onlyOwn(params url.Values) error {
	for k := range params {
		if !strings.EqualFold(k, "isolation") {
			return fmt.Errorf("setting %q; a sqlite: URL takes only isolation=", k)
		}
	}
	return nil
}

// Redact is a database URL with its password hidden, for a message. A
// sqlite: URL is a file's path, which has no password: an '@' in it is
// part of the name.
func Redact(raw string) string {
	if strings.HasPrefix(raw, "sqlite:") {
		return raw
	}
	return server.HidePassword(raw)
}

// Kind is the database's dialect.
func (db *DB) Kind() Kind { return db.kind }

// String is the URL with its password hidden.
func (db *DB) String() string { return db.shown }

// Param is a racelab setting of the URL (isolation=), "" when not given.
func (db *DB) Param(name string) string { return db.params.Get(name) }

// Close closes every connection the database opened.
func (db *DB) Close() error {
	db.mu.Lock()
	defer db.mu.Unlock()
	var errs []error
	for _, p := range []**sql.DB{&db.reader, &db.writer} {
		if *p != nil {
			errs = append(errs, (*p).Close())
			*p = nil
		}
	}
	return db.scrub(errors.Join(errs...))
}

// pool is the read-only pool (SQLite opened read-only) or the writable
// one, opened on first use.
func (db *DB) pool(readOnly bool) (*sql.DB, error) {
	db.mu.Lock()
	defer db.mu.Unlock()
	p := &db.writer
	if readOnly {
		p = &db.reader
	}
	if *p != nil {
		return *p, nil
	}
	var err error
	switch db.kind {
	case SQLite:
		*p, err = sql.Open("sqlite", sqliteDSN(db.path, readOnly))
	case PostgreSQL:
		*p, err = sql.Open("pgx", db.dsn)
	case MySQL:
		*p, err = sql.Open("mysql", db.dsn)
	}
	return *p, db.scrub(err)
}

// sqliteDSN names the file for the driver: read-only when asked (the
// file must exist, and no statement may write), waiting on locks.
func sqliteDSN(path string, readOnly bool) string {
	u := url.URL{Scheme: "file", Path: path, OmitHost: true}
	q := url.Values{"_pragma": {fmt.Sprintf("busy_timeout(%d)", BusyTimeout.Milliseconds())}}
	if readOnly {
		q.Set("mode", "ro")
		q.Add("_pragma", "query_only(1)")
	}
	return u.String() + "?" + q.Encode()
}

// Rows are what a query answered: its columns in order, and each row as
// a map of column to value.
type Rows struct {
	Columns []string
	Rows    []map[string]any
}

// TooManyRowsError is a query that answered more rows than asked for.
type TooManyRowsError struct{ Max int }

func (e *TooManyRowsError) Error() string {
	return fmt.Sprintf("more than %d rows; a readback reads a count or a few rows", e.Max)
}

// Read runs one query read-only, binding args as parameters (? in the
// query; Rebind rewrites them for PostgreSQL), and returns at most max
// rows (MaxRows when max is 0): one more is a *TooManyRowsError. ctx
// bounds it.
func (db *DB) Read(ctx context.Context, query string, args []any, max int) (*Rows, error) {
	if max <= 0 {
		max = MaxRows
	}
	p, err := db.pool(true)
	if err != nil {
		return nil, err
	}
	var q querier = p
	if db.kind != SQLite {
		// SQLite's connection is read-only itself; the servers' are
		// made so for this one query.
		tx, err := p.BeginTx(ctx, &sql.TxOptions{ReadOnly: true})
		if err != nil {
			return nil, db.scrub(err)
		}
		defer tx.Rollback()
		q = tx
	}
	return db.query(ctx, q, query, args, max)
}

// querier is what a query runs on: a pool (*sql.DB) or a transaction
// (*sql.Tx).
type querier interface {
	QueryContext(context.Context, string, ...any) (*sql.Rows, error)
}

// query runs query on q, args bound as parameters, and reads at most max
// rows: the one way Read, Write and a transaction's Query ask, so that
// each rebinds the placeholders and scrubs the password from its errors.
func (db *DB) query(ctx context.Context, q querier, query string, args []any, max int) (*Rows, error) {
	rows, err := q.QueryContext(ctx, db.Rebind(query), args...)
	if err != nil {
		return nil, db.scrub(err)
	}
	defer rows.Close()
	out, err := scan(rows, max)
	return out, db.scrub(err)
}

// scan reads rows into maps, at most max of them.
func scan(rows *sql.Rows, max int) (*Rows, error) {
	cols, err := rows.Columns()
	if err != nil {
		return nil, err
	}
	types, err := rows.ColumnTypes()
	if err != nil {
		return nil, err
	}
	out := &Rows{Columns: cols, Rows: []map[string]any{}}
	vals := make([]any, len(cols))
	ptrs := make([]any, len(cols))
	for i := range vals {
		ptrs[i] = &vals[i]
	}
	for rows.Next() {
		if len(out.Rows) == max {
			return nil, &TooManyRowsError{Max: max}
		}
		if err := rows.Scan(ptrs...); err != nil {
			return nil, err
		}
		row := make(map[string]any, len(cols))
		for i, c := range cols {
			row[c] = Value(vals[i], types[i].DatabaseTypeName())
		}
		out.Rows = append(out.Rows, row)
	}
	return out, rows.Err()
}

// scrub hides the password in a driver's error, which may repeat the URL
// or the DSN it was given.
func (db *DB) scrub(err error) error {
	if err == nil || db.password == "" {
		return err
	}
	msg := err.Error()
	clean := strings.ReplaceAll(msg, db.password, server.Hidden)
	if esc := url.QueryEscape(db.password); esc != db.password {
		clean = strings.ReplaceAll(clean, esc, server.Hidden)
	}
	if clean == msg {
		return err
	}
	return &scrubbed{msg: clean, err: err}
}

// scrubbed is a driver's error with the password taken out of its text;
// errors.As still finds the driver's own error below it, for Classify.
type scrubbed struct {
	msg string
	err error
}

func (e *scrubbed) Error() string { return e.msg }
func (e *scrubbed) Unwrap() error { return e.err }

// Writable is the database's pool for statements that write: a SQL
// race's transactions, and a test's tables. Close closes it.
func (db *DB) Writable() (*sql.DB, error) { return db.pool(false) }
