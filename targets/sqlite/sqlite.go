package sqlite

import (
	"cmp"
	"context"
	"database/sql"
	"errors"
	"fmt"
	"net/url"
	"os"
	"path/filepath"
	"sync"
	"time"

	_ "modernc.org/sqlite" // registers the "sqlite" driver

	"github.com/racelab/racelab/targets/clock"
	"github.com/racelab/racelab/targets/internal/server"
	"github.com/racelab/racelab/targets/story"
)

// The strategies a Store can follow.
const (
	// StrategyAtomic makes every request one statement that reads, decides
	// and writes at once.
	StrategyAtomic = ""
	// StrategyNaive reads with one statement and writes what Go computed
	// with another, with no transaction around them.
	StrategyNaive = "naive"
)

// Defaults for the settings a Config leaves at zero.
const (
	// DefaultThinkTime is how long the naive strategy works between its read
	// and its write. Without it a SELECT and an UPDATE on a local file are
	// so quick that a burst of ten mostly serialises by accident: measured
	// on two cores, hits were lost in only 12 of 50 bursts. With as little
	// as 100µs they were lost in all 50. Two milliseconds is modest work
	// for a real handler and leaves a margin on a busy machine.
	DefaultThinkTime = 2 * time.Millisecond
	// BusyTimeout is how long a connection waits for the write lock before
	// SQLite gives up with "database is locked". Writes take microseconds,
	// so only a stuck writer could make a request wait this long.
	BusyTimeout = 10 * time.Second
)

// Stock is how many of each item exist: every item is one of a kind.
const Stock = 1

// ErrClosed is returned by requests made to a Store that has been closed.
var ErrClosed = errors.New("sqlite store closed")

// Config sets up a Store. The zero value is the atomic strategy on a new
// database in a temporary folder.
type Config struct {
	// Path is the database file, created if missing. Empty means a new file
	// in a fresh temporary folder, racelab-sqlite-PID-RANDOM, that Close
	// removes; should the process die before Close, the next Open of a
	// temporary database removes it (ReapStale).
	Path string
	// Strategy is StrategyAtomic or StrategyNaive.
	Strategy string
	// ThinkTime is how long StrategyNaive works between its read and its
	// write. Zero means DefaultThinkTime; a negative value means none at
	// all. The atomic strategy has no such gap and ignores it.
	ThinkTime time.Duration
	// Now tells the time for the quota's UTC day; nil means Clock's Now,
	// or time.Now when Clock is nil too. It is called from many requests
	// at once, so it must be safe for concurrent use.
	Now func() time.Time
	// Clock is what the store waits on and dates its plan reads by: the
	// naive strategy's think time and plan cache. Nil means the real
	// clock. A *clock.Virtual runs the store in virtual time (a story on
	// the scale of hours); its requests must then be made by the clock's
	// participants.
	Clock clock.Clock
	// PlanCacheTTL is how long StrategyNaive keeps a read of a
	// subscription plan in the process; zero means story.PlanCacheTTL, a
	// negative value none at all. The atomic strategy reads the plan where
	// it decides and ignores it.
	PlanCacheTTL time.Duration
	// CheckpointEvery is how often the write-ahead log is checkpointed
	// and truncated; zero means DefaultCheckpointEvery.
	CheckpointEvery time.Duration
}

// Store is a SQLite database holding the stories' state, with the strategy
// its requests follow. It is safe for concurrent use; Close releases the
// connections and any temporary folder.
type Store struct {
	db    *sql.DB
	naive bool
	think time.Duration
	now   func() time.Time
	clock clock.Clock
	plans *server.PlanCache // the naive strategy's plan reads; nil on the atomic one
	dir   string            // the temporary folder to remove on Close, if any

	mu       sync.Mutex
	poolSize int // the largest n Prepare was asked for
	closed   bool

	// stopCheckpoints ends the checkpointer, which closes checkpointed.
	stopCheckpoints chan struct{}
	checkpointed    chan struct{}
}

// schema creates the stories' tables. An item row is created by its first
// claim, holding the stock it was created with.
var schema = []string{
	`CREATE TABLE IF NOT EXISTS racelab_views (
		slug  TEXT PRIMARY KEY,
		count INTEGER NOT NULL
	)`,
	`CREATE TABLE IF NOT EXISTS racelab_quota (
		visitor TEXT PRIMARY KEY,
		day     TEXT NOT NULL, -- UTC date, YYYY-MM-DD; a new day resets count
		count   INTEGER NOT NULL
	)`,
	`CREATE TABLE IF NOT EXISTS racelab_items (
		item   TEXT PRIMARY KEY,
		stock  INTEGER NOT NULL,
		claims INTEGER NOT NULL,
		buyer  TEXT NOT NULL -- the buyer of the last recorded claim
	)`,
	`CREATE TABLE IF NOT EXISTS racelab_limits (
		caller  TEXT NOT NULL,
		win     INTEGER NOT NULL, -- floor(now / window)
		count   INTEGER NOT NULL,
		expires INTEGER NOT NULL, -- Unix nanoseconds: the window's end plus its expiry
		PRIMARY KEY (caller, win)
	)`,
	`CREATE TABLE IF NOT EXISTS racelab_plans (
		subscriber TEXT PRIMARY KEY,
		plan       TEXT NOT NULL,           -- 'paid' or 'cancelled'
		day        TEXT NOT NULL DEFAULT '', -- UTC date of count; '' before the first original
		count      INTEGER NOT NULL DEFAULT 0
	)`,
}

// Open opens (or creates) the database cfg names, turns on WAL mode and
// creates the tables.
func Open(ctx context.Context, cfg Config) (*Store, error) {
	s := &Store{now: cfg.Now, think: cfg.ThinkTime, clock: cfg.Clock}
	if s.clock == nil {
		s.clock = clock.Real{}
	}
	switch cfg.Strategy {
	case StrategyAtomic:
	case StrategyNaive:
		s.naive = true
		ttl := cfg.PlanCacheTTL
		if ttl == 0 {
			ttl = story.PlanCacheTTL
		}
		s.plans = server.NewPlanCache(ttl, s.clock)
	default:
		return nil, fmt.Errorf("open sqlite: unknown strategy %q (want %q or %q)", cfg.Strategy, StrategyAtomic, StrategyNaive)
	}
	switch {
	case s.think == 0:
		s.think = DefaultThinkTime
	case s.think < 0:
		s.think = 0
	}
	if s.now == nil {
		s.now = s.clock.Now
	}

	path := cfg.Path
	if path == "" {
		// A racelab killed before Close (a second Ctrl-C, SIGKILL) leaves
		// its folder behind, about a hundred megabytes after a long run;
		// the next one to open a temporary database clears it away.
		ReapStale(os.TempDir())
		dir, err := makeTempDir()
		if err != nil {
			return nil, fmt.Errorf("open sqlite: %w", err)
		}
		s.dir = dir
		path = filepath.Join(dir, dbName)
	}
	db, err := sql.Open("sqlite", dsn(path))
	if err != nil {
		s.removeDir()
		return nil, fmt.Errorf("open sqlite %q: %w", path, err)
	}
	s.db = db
	// The first connection switches the file to WAL before any other
	// connection exists, and the tables are created on it.
	for _, stmt := range schema {
		if _, err := db.ExecContext(ctx, stmt); err != nil {
			return nil, errors.Join(fmt.Errorf("open sqlite %q: %w", path, err), s.Close())
		}
	}
	cdb, err := sql.Open("sqlite", dsnWith(path, checkpointBusy))
	if err != nil {
		return nil, errors.Join(fmt.Errorf("open sqlite %q: %w", path, err), s.Close())
	}
	cdb.SetMaxOpenConns(1)
	s.stopCheckpoints, s.checkpointed = make(chan struct{}), make(chan struct{})
	go checkpointer(cdb, cmp.Or(cfg.CheckpointEvery, DefaultCheckpointEvery), s.stopCheckpoints, s.checkpointed)
	return s, nil
}

// dsn is the driver's name for the database at path. Every connection the
// pool opens runs these pragmas, busy_timeout first. synchronous=NORMAL is
// the usual companion of WAL: a commit is durable once the WAL is synced at
// a checkpoint, which loses nothing a test cares about and keeps writes from
// waiting on the disk.
func dsn(path string) string { return dsnWith(path, BusyTimeout) }

// dsnWith is dsn with another busy timeout (the checkpointer's). The log
// file is truncated to walLimit whenever it starts over.
func dsnWith(path string, busy time.Duration) string {
	u := url.URL{Scheme: "file", Path: path, OmitHost: true}
	q := url.Values{"_pragma": {
		fmt.Sprintf("busy_timeout(%d)", busy.Milliseconds()),
		"journal_mode(WAL)",
		"synchronous(NORMAL)",
		fmt.Sprintf("journal_size_limit(%d)", walLimit),
	}}
	return u.String() + "?" + q.Encode()
}

// Prepare makes the pool hold at least n connections and opens them all
// now, so that no request in a burst of n pays for opening one.
func (s *Store) Prepare(ctx context.Context, n int) error {
	s.mu.Lock()
	if s.closed {
		s.mu.Unlock()
		return ErrClosed
	}
	if n > s.poolSize {
		s.poolSize = n
		// Open before idle: SetMaxOpenConns lowers the idle limit to fit.
		s.db.SetMaxOpenConns(n)
		s.db.SetMaxIdleConns(n)
	}
	s.mu.Unlock()

	// Holding n connections at once forces the pool to open n of them;
	// releasing them leaves them idle for the burst.
	conns := make([]*sql.Conn, 0, n)
	defer func() {
		for _, c := range conns {
			c.Close()
		}
	}()
	for range n {
		c, err := s.db.Conn(ctx)
		if err != nil {
			return fmt.Errorf("prepare %d sqlite connections: %w", n, err)
		}
		conns = append(conns, c)
		if err := c.PingContext(ctx); err != nil {
			return fmt.Errorf("prepare %d sqlite connections: %w", n, err)
		}
	}
	return nil
}

// Close closes the database and removes the temporary folder, if Open made
// one. A file the caller named is left in place. Close may be called more
// than once.
func (s *Store) Close() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed {
		return nil
	}
	s.closed = true
	if s.stopCheckpoints != nil {
		close(s.stopCheckpoints)
		<-s.checkpointed
	}
	var err error
	if cerr := s.db.Close(); cerr != nil {
		err = fmt.Errorf("close sqlite: %w", cerr)
	}
	return errors.Join(err, s.removeDir())
}

func (s *Store) removeDir() error {
	if s.dir == "" {
		return nil
	}
	if err := os.RemoveAll(s.dir); err != nil {
		return fmt.Errorf("remove sqlite folder: %w", err)
	}
	return nil
}

// pause waits out the naive strategy's think time on the store's clock,
// or until ctx ends.
func (s *Store) pause(ctx context.Context) error {
	return s.clock.Sleep(ctx, s.think)
}

// Clock is the clock the store runs on (Config.Clock, or the real one):
// a virtual one makes the engine drive its requests in virtual time.
func (s *Store) Clock() clock.Clock { return s.clock }

// today is the UTC day that a quota counts downloads in.
func (s *Store) today() string {
	return s.now().UTC().Format(time.DateOnly)
}
