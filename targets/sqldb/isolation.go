package sqldb

import (
	"context"
	"database/sql"
	"database/sql/driver"
	"fmt"
	"slices"
	"strings"
)

// Isolation levels, as a URL names them (isolation=read-committed).
const (
	ReadUncommitted = "read-uncommitted"
	ReadCommitted   = "read-committed"
	RepeatableRead  = "repeatable-read"
	Snapshot        = "snapshot"
	Serializable    = "serializable"
)

// AllLevels are the levels racelab knows, weakest first.
var AllLevels = []string{ReadUncommitted, ReadCommitted, RepeatableRead, Snapshot, Serializable}

// levels are the levels each database lets a transaction ask for, its
// default first. SQLite's transactions are serializable and nothing else
// (read-uncommitted exists only for a shared cache, which racelab never
// opens); none of the three has a level named snapshot: PostgreSQL's
// repeatable read is snapshot isolation, but it is asked for by that name.
var levels = map[Kind][]string{
	PostgreSQL: {ReadCommitted, ReadUncommitted, RepeatableRead, Serializable},
	MySQL:      {RepeatableRead, ReadUncommitted, ReadCommitted, Serializable},
	SQLite:     {Serializable},
}

// Levels are the isolation levels the database has, weakest first.
func (db *DB) Levels() []string {
	out := slices.Clone(levels[db.kind])
	slices.SortFunc(out, func(a, b string) int { return slices.Index(AllLevels, a) - slices.Index(AllLevels, b) })
	return out
}

// Isolation is the level the URL asks for (isolation=), or the
// database's default when it names none. A level the database lacks is an
// error matching ErrBadURL that names the ones it has.
func (db *DB) Isolation() (string, error) {
	lv := db.Param("isolation")
	if lv == "" {
		return levels[db.kind][0], nil
	}
	lv = strings.ToLower(strings.NewReplacer("_", "-", " ", "-").Replace(lv))
	if !slices.Contains(levels[db.kind], lv) {
		known := "unknown level"
		if slices.Contains(AllLevels, lv) {
			known = string(db.kind) + " has no such level"
		}
		return "", fmt.Errorf("%w %q: isolation=%q: %s; want one of %s", ErrBadURL, db.shown, db.Param("isolation"), known, strings.Join(db.Levels(), ", "))
	}
	return lv, nil
}

// txLevel is level as database/sql asks the driver for it. SQLite's
// driver takes only the default, which is serializable there.
func (db *DB) txLevel(level string) sql.IsolationLevel {
	if db.kind == SQLite {
		return sql.LevelDefault
	}
	return map[string]sql.IsolationLevel{
		ReadUncommitted: sql.LevelReadUncommitted,
		ReadCommitted:   sql.LevelReadCommitted,
		RepeatableRead:  sql.LevelRepeatableRead,
		Serializable:    sql.LevelSerializable,
	}[level]
}

// Tx is one transaction of a SQL race, on a connection of its own.
type Tx struct {
	db   *DB
	conn *sql.Conn
	tx   *sql.Tx
}

// Begin takes a connection of its own from the writable pool and begins
// a transaction on it at the URL's level (the driver sets it: pgx in its
// BEGIN, go-sql-driver/mysql with SET TRANSACTION before START
// TRANSACTION). End gives the connection back.
func (db *DB) Begin(ctx context.Context) (*Tx, error) {
	level, err := db.Isolation()
	if err != nil {
		return nil, err
	}
	p, err := db.Writable()
	if err != nil {
		return nil, err
	}
	conn, err := p.Conn(ctx)
	if err != nil {
		return nil, db.scrub(err)
	}
	tx, err := conn.BeginTx(ctx, &sql.TxOptions{Isolation: db.txLevel(level)})
	if err != nil {
		_ = conn.Close()
		return nil, db.scrub(err)
	}
	return &Tx{db: db, conn: conn, tx: tx}, nil
}

// Query runs one statement of the transaction, args bound as parameters
// (? placeholders), and returns its rows (none for a statement without
// any), at most MaxRows.
func (t *Tx) Query(ctx context.Context, query string, args []any) (*Rows, error) {
	return t.db.query(ctx, t.tx, query, args, MaxRows)
}

// Rollback rolls the transaction back (order: N.rollback).
func (t *Tx) Rollback() error { return t.db.scrub(t.tx.Rollback()) }

// Commit commits the transaction.
func (t *Tx) Commit() error { return t.db.scrub(t.tx.Commit()) }

// End rolls back what is not committed and gives the connection back.
// A connection whose transaction could not be ended cleanly is closed
// rather than handed to the next trial.
func (t *Tx) End() {
	if err := t.tx.Rollback(); err != nil && err != sql.ErrTxDone {
		_ = t.conn.Raw(func(any) error { return errLeftInTx })
	}
	_ = t.conn.Close()
}

// errLeftInTx tells database/sql to throw the connection away.
var errLeftInTx = fmt.Errorf("racelab: connection left in a transaction: %w", driver.ErrBadConn)

// Write runs one statement outside any transaction on the writable
// pool, args bound as parameters, and returns its rows (none for a
// statement without any), at most MaxRows: a SQL race's setup and its
// cleanup.
func (db *DB) Write(ctx context.Context, query string, args []any) (*Rows, error) {
	p, err := db.Writable()
	if err != nil {
		return nil, err
	}
	return db.query(ctx, p, query, args, MaxRows)
}

// Retries is the running total of transactions racelab retried on the
// database after the database refused them (retry: in a SQL race), which
// a run reports per trial (targets.Retrier).
func (db *DB) Retries() int64 { return db.retries.Load() }

// Retried counts one retried transaction.
func (db *DB) Retried() { db.retries.Add(1) }
