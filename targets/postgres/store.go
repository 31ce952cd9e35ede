package postgres

import (
	"context"
	"errors"
	"fmt"
	"net"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/racelab/racelab/targets/clock"
	"github.com/racelab/racelab/targets/internal/server"
)

// The strategies a Store can use, named by Config.Strategy.
const (
	StrategyAtomic       = ""             // one statement decides and writes
	StrategyNaive        = "naive"        // SELECT, decide in Go, write
	StrategyForUpdate    = "for-update"   // SELECT … FOR UPDATE in a transaction
	StrategySerializable = "serializable" // SERIALIZABLE transaction, retried
)

// Strategies lists every strategy Open accepts.
var Strategies = []string{StrategyAtomic, StrategyNaive, StrategyForUpdate, StrategySerializable}

// Defaults for the Config fields left zero.
const (
	// DefaultURL is the server .ci/services starts.
	DefaultURL = "postgres://racelab@127.0.0.1:55432/racelab?sslmode=disable"
	// DefaultPoolSize is the pool size before Prepare asks for more.
	DefaultPoolSize = 16
	// DefaultDialTimeout bounds Open's wait for a server that does not
	// answer.
	DefaultDialTimeout = 2 * time.Second
	// PoolConnectTimeout bounds opening a connection once Open has seen
	// the server answer (Prepare, a dropped connection replaced).
	PoolConnectTimeout = 15 * time.Second
	// BackoffBase and BackoffCap shape the serializable strategy's wait
	// before a retry: a random time up to BackoffBase doubled with each
	// attempt, at most BackoffCap ("full jitter"). The cap is a few commit
	// times on loopback: long enough for the colliding transactions to
	// commit one by one, short enough that a retry is not kept waiting
	// past its turn.
	BackoffBase = 100 * time.Microsecond
	BackoffCap  = 10 * time.Millisecond
)

// ErrUnreachable is wrapped by the error Open returns when no server answers
// at the URL.
var ErrUnreachable = errors.New("postgres unreachable")

// ErrTooManyRetries is wrapped by the error a serializable-strategy request
// returns when PostgreSQL refused to commit every one of its attempts. It is
// server.ErrTooManyRetries, which redis.ErrTooManyRetries is too.
var ErrTooManyRetries = server.ErrTooManyRetries

// Config says which PostgreSQL server to use and how.
type Config = server.Config

// Store keeps the five stories in one PostgreSQL database. Its methods are
// safe for concurrent use.
type Store struct{ base server.Store[*pgxpool.Pool] }

// Open connects to the database cfg names, checks that it answers and
// creates the store's tables when they do not exist.
func Open(ctx context.Context, cfg Config) (*Store, error) {
	base, err := server.Open(ctx, cfg, kind)
	if err != nil {
		return nil, err
	}
	return &Store{base: base}, nil
}

// kind is how Open sets up a store on PostgreSQL.
var kind = server.Kind[*pgxpool.Pool]{
	Name:           "postgres",
	Strategies:     Strategies,
	Naive:          StrategyNaive,
	Defaults:       Config{URL: DefaultURL, PoolSize: DefaultPoolSize, DialTimeout: DefaultDialTimeout},
	ErrUnreachable: ErrUnreachable,
	// pgx's words around a network error only repeat the connection
	// settings.
	BareNetErrors: true,
	BackoffBase:   BackoffBase,
	BackoffCap:    BackoffCap,
	Refused:       retryable,
	Addr: func(cfg Config) (string, error) {
		pcfg, err := poolConfig(cfg, cfg.PoolSize)
		if err != nil {
			return "", err
		}
		return address(pcfg.ConnConfig), nil
	},
	Driver: driver,
	Ping:   func(ctx context.Context, p *pgxpool.Pool) error { return p.Ping(ctx) },
	Setup:  createTables,
}

// poolConfig builds a pool configuration of size connections.
func poolConfig(cfg Config, size int) (*pgxpool.Config, error) {
	pcfg, err := ParseURL(cfg.URL)
	if err != nil {
		return nil, err
	}
	pcfg.MaxConns = int32(size)
	// Open bounds its first contact by cfg.DialTimeout through its
	// context. Once the server has answered, a connection slow to open is
	// one of many PostgreSQL is forking at once on a busy machine, not a
	// server that is down: measured, Prepare's 150 connections at once
	// under a load of 13 on two cores took more than 2 s. The requests'
	// own contexts still bound any dial inside a burst.
	pcfg.ConnConfig.ConnectTimeout = max(cfg.DialTimeout, PoolConnectTimeout)
	// One round trip per statement and no per-connection statement cache:
	// the first request on a fresh connection then costs what every later
	// one does, so a burst is not smeared by statements being prepared.
	pcfg.ConnConfig.DefaultQueryExecMode = pgx.QueryExecModeExec
	return pcfg, nil
}

// driver is how the store's pool opens, warms and closes pgx pools.
func driver(cfg Config, srv server.Server) server.Driver[*pgxpool.Pool] {
	return server.Driver[*pgxpool.Pool]{
		Open: func(ctx context.Context, size int) (*pgxpool.Pool, error) {
			pcfg, err := poolConfig(cfg, size)
			if err != nil {
				return nil, err
			}
			pool, err := pgxpool.NewWithConfig(ctx, pcfg)
			if err != nil {
				return nil, srv.Errorf("%w", err)
			}
			return pool, nil
		},
		Take: func(ctx context.Context, pool *pgxpool.Pool) (func(), error) {
			c, err := pool.Acquire(ctx)
			if err != nil {
				return nil, err
			}
			return c.Release, c.Ping(ctx)
		},
		Close: func(pool *pgxpool.Pool) error { pool.Close(); return nil },
	}
}

// address is the server as host:port, for messages.
func address(c *pgx.ConnConfig) string {
	return net.JoinHostPort(c.Host, fmt.Sprint(c.Port))
}

// schemaLock is the advisory lock that keeps two Opens from creating the
// tables at the same instant, which PostgreSQL answers with a duplicate-key
// error even under IF NOT EXISTS.
const schemaLock = 0x72616365 // "race"

// createTables creates the store's tables when they do not exist, and
// gives each, once, the touched column a trigger keeps to the instant of
// the row's last write, so that racelab clean can spare the rows of a run
// still going (CleanScoped). It never drops one.
func createTables(ctx context.Context, pool *pgxpool.Pool) error {
	return pgx.BeginFunc(ctx, pool, func(tx pgx.Tx) error {
		if _, err := tx.Exec(ctx, "SELECT pg_advisory_xact_lock($1)", int64(schemaLock)); err != nil {
			return fmt.Errorf("lock schema: %w", err)
		}
		for _, ddl := range []string{
			`CREATE TABLE IF NOT EXISTS racelab_views (
				slug  text PRIMARY KEY,
				count bigint NOT NULL
			)`,
			`CREATE TABLE IF NOT EXISTS racelab_quota (
				visitor text PRIMARY KEY,
				day     date NOT NULL,
				count   bigint NOT NULL
			)`,
			`CREATE TABLE IF NOT EXISTS racelab_items (
				item      text PRIMARY KEY,
				remaining bigint NOT NULL,
				claims    bigint NOT NULL DEFAULT 0,
				buyer     text
			)`,
			`CREATE TABLE IF NOT EXISTS racelab_limits (
				caller  text NOT NULL,
				win     bigint NOT NULL,
				count   bigint NOT NULL,
				expires timestamptz NOT NULL,
				PRIMARY KEY (caller, win)
			)`,
			`CREATE TABLE IF NOT EXISTS racelab_plans (
				subscriber text PRIMARY KEY,
				plan       text NOT NULL,
				day        date,
				count      bigint NOT NULL DEFAULT 0
			)`,
		} {
			if _, err := tx.Exec(ctx, ddl); err != nil {
				return fmt.Errorf("create tables: %w", err)
			}
		}
		return addTouched(ctx, tx)
	})
}

// addTouched adds the touched column and its trigger to the tables that
// lack them. Only then: ALTER TABLE and CREATE TRIGGER lock the table
// against every request, and a store opened during another's burst must
// not stall it.
func addTouched(ctx context.Context, tx pgx.Tx) error {
	for _, t := range tables {
		var has bool
		if err := tx.QueryRow(ctx, `SELECT EXISTS (SELECT 1 FROM pg_trigger WHERE tgname = 'racelab_touch' AND tgrelid = to_regclass($1))`, t.name).Scan(&has); err != nil {
			return fmt.Errorf("look for %s's touched column: %w", t.name, err)
		}
		if has {
			continue
		}
		for _, ddl := range []string{
			`ALTER TABLE ` + t.name + ` ADD COLUMN IF NOT EXISTS touched timestamptz NOT NULL DEFAULT now()`,
			`CREATE OR REPLACE FUNCTION racelab_touch() RETURNS trigger LANGUAGE plpgsql AS $$ BEGIN NEW.touched := now(); RETURN NEW; END $$`,
			`CREATE OR REPLACE TRIGGER racelab_touch BEFORE UPDATE ON ` + t.name + ` FOR EACH ROW EXECUTE FUNCTION racelab_touch()`,
		} {
			if _, err := tx.Exec(ctx, ddl); err != nil {
				return fmt.Errorf("add %s's touched column: %w", t.name, err)
			}
		}
	}
	return nil
}

// Retries is how many times serializable-strategy requests started over
// because PostgreSQL refused to commit them, summed over the store's life.
func (s *Store) Retries() int64 { return s.base.Retry.Retries() }

// Prepare grows the pgx pool to at least n connections, then acquires n of
// them at once and pings each, so that a burst of n requests finds them
// open. It must not run alongside requests: a larger pool replaces the old
// one.
func (s *Store) Prepare(ctx context.Context, n int) error { return s.base.Pool.Prepare(ctx, n) }

// Close closes the store's connections.
func (s *Store) Close() error { return s.base.Pool.Close() }

// Clock is the clock the store runs on (Config.Clock, or the real one):
// a virtual one makes the engine drive its requests in virtual time.
func (s *Store) Clock() clock.Clock { return s.base.Clock() }

func (s *Store) db() *pgxpool.Pool { return s.base.Pool.Get() }

// querier is what a read-then-write step runs its statements on: the pool
// itself (naive) or a transaction.
type querier interface {
	Exec(ctx context.Context, sql string, args ...any) (pgconn.CommandTag, error)
	QueryRow(ctx context.Context, sql string, args ...any) pgx.Row
}

// readThenWrite runs step, which reads, decides in Go and writes through q.
// The naive strategy runs it on the pool, statement by statement; for-update
// runs it in a READ COMMITTED transaction with lock set to " FOR UPDATE" for
// its SELECT; serializable runs it in a SERIALIZABLE transaction and starts
// over when PostgreSQL refuses to commit it, until it commits or ctx ends
// (or Config.MaxAttempts, when set, is reached).
func (s *Store) readThenWrite(ctx context.Context, step func(q querier, lock string) error) error {
	pool := s.db()
	switch s.base.Config.Strategy {
	case StrategyNaive:
		return step(pool, "")
	case StrategyForUpdate:
		return pgx.BeginTxFunc(ctx, pool, pgx.TxOptions{IsoLevel: pgx.ReadCommitted},
			func(tx pgx.Tx) error { return step(tx, " FOR UPDATE") })
	}
	serializable := func() error {
		return pgx.BeginTxFunc(ctx, pool, pgx.TxOptions{IsoLevel: pgx.Serializable},
			func(tx pgx.Tx) error { return step(tx, "") })
	}
	return s.base.Retry.Do(ctx, serializable, func(attempts int, last, deadline error) error {
		if deadline == nil {
			return fmt.Errorf("%w: refused to commit %d attempts: %w", ErrTooManyRetries, attempts, last)
		}
		return fmt.Errorf("%w: refused to commit %d attempts before the request's deadline: %w (last: %w)",
			ErrTooManyRetries, attempts, deadline, last)
	})
}

// retryable reports whether err is PostgreSQL refusing a transaction that
// may succeed if tried again: a serialization failure or a deadlock.
func retryable(err error) bool {
	var pgErr *pgconn.PgError
	return errors.As(err, &pgErr) && (pgErr.Code == "40001" || pgErr.Code == "40P01")
}

// pause runs between a strategy's read and its write.
func (s *Store) pause(ctx context.Context) {
	s.base.Pause(ctx)
}
