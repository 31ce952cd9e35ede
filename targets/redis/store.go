package redis

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"time"

	goredis "github.com/redis/go-redis/v9"
	"github.com/redis/go-redis/v9/maintnotifications"

	"github.com/racelab/racelab/targets/clock"
	"github.com/racelab/racelab/targets/internal/server"
)

// The strategies a Store can use, named by Config.Strategy.
const (
	StrategyAtomic = ""      // the server decides: INCR, Lua scripts
	StrategyNaive  = "naive" // GET, decide in Go, SET
	StrategyWatch  = "watch" // GET and SET inside WATCH/MULTI/EXEC, retried
)

// Strategies lists every strategy Open accepts.
var Strategies = []string{StrategyAtomic, StrategyNaive, StrategyWatch}

// Defaults for the Config fields left zero, and the lifetimes of the keys the
// store writes.
const (
	// DefaultURL is the server .ci/services starts.
	DefaultURL = "redis://127.0.0.1:56379/0"
	// DefaultPoolSize is the pool size before Prepare asks for more.
	DefaultPoolSize = 16
	// DefaultDialTimeout bounds Open's wait for a server that does not answer.
	DefaultDialTimeout = 2 * time.Second
	// BackoffBase and BackoffCap shape the watch strategy's wait before a
	// retry: a random time up to BackoffBase doubled with each attempt, at
	// most BackoffCap ("full jitter"), a few round trips on loopback.
	BackoffBase = 50 * time.Microsecond
	BackoffCap  = 5 * time.Millisecond

	// KeyPrefix starts every key the store reads or writes.
	KeyPrefix = "racelab:"
	// RecordTTL is how long a view count or an item's claims record lives
	// after its last write.
	RecordTTL = 24 * time.Hour
	// ReservationTTL is how long a claim on an item holds, as in the story's
	// checkout reservation.
	ReservationTTL = 7 * time.Minute
)

// ErrUnreachable is wrapped by the error Open returns when no server answers
// at the URL.
var ErrUnreachable = errors.New("redis unreachable")

// ErrTooManyRetries is wrapped by the error a watch-strategy request returns
// when every one of its attempts met a concurrent change. It is
// server.ErrTooManyRetries, which postgres.ErrTooManyRetries is too.
var ErrTooManyRetries = server.ErrTooManyRetries

// Config says which Redis server to use and how.
type Config = server.Config

// Store keeps the five stories in one Redis server. Its methods are safe
// for concurrent use.
type Store struct{ base server.Store[*goredis.Client] }

// Open connects to the server cfg names and checks that it answers.
func Open(ctx context.Context, cfg Config) (*Store, error) {
	base, err := server.Open(ctx, cfg, kind)
	if err != nil && strings.Contains(err.Error(), "DB index is out of range") {
		// The server answered, so it runs: the URL names a database it
		// does not have (16 unless its databases setting says otherwise).
		db := "its database"
		if opts, perr := ParseURL(cmp.Or(cfg.URL, DefaultURL)); perr == nil {
			db = fmt.Sprintf("database %d", opts.DB)
		}
		return nil, server.URLErrors("redis", cfg.URL, redact, ErrBadURL)("%s is out of range on this server (it has 16, 0 to 15, unless its databases setting says more)", db)
	}
	if err != nil {
		return nil, err
	}
	return &Store{base: base}, nil
}

// kind is how Open sets up a store on Redis.
var kind = server.Kind[*goredis.Client]{
	Name:           "redis",
	Strategies:     Strategies,
	Naive:          StrategyNaive,
	Defaults:       Config{URL: DefaultURL, PoolSize: DefaultPoolSize, DialTimeout: DefaultDialTimeout},
	ErrUnreachable: ErrUnreachable,
	BackoffBase:    BackoffBase,
	BackoffCap:     BackoffCap,
	Refused:        func(err error) bool { return errors.Is(err, goredis.TxFailedErr) },
	Addr: func(cfg Config) (string, error) {
		opts, err := options(cfg, cfg.PoolSize)
		if err != nil {
			return "", err
		}
		return opts.Addr, nil
	},
	Driver:    driver,
	Ping:      func(ctx context.Context, c *goredis.Client) error { return c.Ping(ctx).Err() },
	PingGrace: time.Second,
}

// driver is how the store's pool opens, warms and closes go-redis clients.
// Opening a client cannot fail on the server, so it has no error that
// would name it.
func driver(cfg Config, _ server.Server) server.Driver[*goredis.Client] {
	return server.Driver[*goredis.Client]{
		Open: func(_ context.Context, size int) (*goredis.Client, error) {
			opts, err := options(cfg, size)
			if err != nil {
				return nil, err
			}
			quietOnce.Do(func() { goredis.SetLogger(quiet{}) })
			return goredis.NewClient(opts), nil
		},
		// A Conn holds its own pool connection until closed.
		Take: func(ctx context.Context, c *goredis.Client) (func(), error) {
			conn := c.Conn()
			return func() { _ = conn.Close() }, conn.Ping(ctx).Err()
		},
		Close: (*goredis.Client).Close,
	}
}

// options builds go-redis options for a pool of size connections.
func options(cfg Config, size int) (*goredis.Options, error) {
	opts, err := ParseURL(cfg.URL)
	if err != nil {
		return nil, err
	}
	opts.PoolSize = size
	opts.DialTimeout = cfg.DialTimeout
	// One dial attempt: a refused connection is an answer, and Open must
	// report it at once rather than after a round of back-offs.
	opts.DialerRetries = 1
	// No silent retries: resending an INCR after a broken reply could count
	// one hit twice, which would hide the very bugs racelab looks for.
	opts.MaxRetries = -1
	opts.ContextTimeoutEnabled = true
	// Pipelines and MULTI/EXEC on the main pool, the one Prepare fills:
	// go-redis's separate pipeline pool dials on first use, which would put
	// connection set-up inside the burst.
	opts.PipelinePoolSize = -1
	opts.MaintNotificationsConfig = &maintnotifications.Config{Mode: maintnotifications.ModeDisabled}
	return opts, nil
}

// quietOnce silences go-redis's own logger, which would otherwise print a
// line to stderr for every failed dial, between racelab's progress and its
// table. The logger is global to go-redis; racelab is its only user, and
// every failure it would log reaches the caller as an error anyway.
var quietOnce sync.Once

type quiet struct{}

func (quiet) Printf(context.Context, string, ...any) {}

// Retries is how many times watch-strategy requests started over because
// another client changed their key between the read and the write, summed
// over the store's life.
func (s *Store) Retries() int64 { return s.base.Retry.Retries() }

// Prepare grows the client's pool to at least n connections and pings n of
// them at once, each on a connection of its own, so that a burst of n
// requests finds them open. It must not run alongside requests: a larger
// pool replaces the old one.
func (s *Store) Prepare(ctx context.Context, n int) error { return s.base.Pool.Prepare(ctx, n) }

// Close closes the store's connections.
func (s *Store) Close() error { return s.base.Pool.Close() }

// Clock is the clock the store runs on (Config.Clock, or the real one):
// a virtual one makes the engine drive its requests in virtual time.
func (s *Store) Clock() clock.Clock { return s.base.Clock() }

func (s *Store) redis() *goredis.Client { return s.base.Pool.Get() }

// write is the write half of a read-then-write step, queued on a pipeline.
type write func(p goredis.Pipeliner)

// readThenWrite runs step, which reads through r and decides in Go, then the
// write it returns, if any. The naive strategy does both straight on the
// client; the watch strategy does them inside WATCH key … MULTI … EXEC and
// starts over when another client changed key in between, until EXEC
// succeeds or ctx ends (or Config.MaxAttempts, when set, is reached).
func (s *Store) readThenWrite(ctx context.Context, key string, step func(r goredis.Cmdable) (write, error)) error {
	return s.readThenWriteKeys(ctx, []string{key}, step)
}

// readThenWriteKeys is readThenWrite of a step that reads several keys:
// the watch strategy watches them all, and starts over when any changed.
func (s *Store) readThenWriteKeys(ctx context.Context, keys []string, step func(r goredis.Cmdable) (write, error)) error {
	c := s.redis()
	if s.base.Config.Strategy == StrategyNaive {
		return s.readThenPipeline(ctx, c, c.Pipelined, step)
	}
	watch := func() error {
		return c.Watch(ctx, func(tx *goredis.Tx) error {
			return s.readThenPipeline(ctx, tx, tx.TxPipelined, step)
		}, keys...)
	}
	key := strings.Join(keys, " or ")
	return s.base.Retry.Do(ctx, watch, func(attempts int, _, deadline error) error {
		if deadline == nil {
			return fmt.Errorf("%w: %s changed under each of %d attempts", ErrTooManyRetries, key, attempts)
		}
		return fmt.Errorf("%w: %s changed under each of %d attempts before the request's deadline: %w",
			ErrTooManyRetries, key, attempts, deadline)
	})
}

// readThenPipeline runs step's read through r and, after the pause, the
// write step returns, if any, through pipelined: a plain pipeline (naive) or
// MULTI/EXEC (watch).
func (s *Store) readThenPipeline(ctx context.Context, r goredis.Cmdable,
	pipelined func(context.Context, func(goredis.Pipeliner) error) ([]goredis.Cmder, error),
	step func(r goredis.Cmdable) (write, error)) error {
	w, err := step(r)
	if err != nil || w == nil {
		return err
	}
	s.pause(ctx)
	_, err = pipelined(ctx, func(p goredis.Pipeliner) error { w(p); return nil })
	return err
}

// pause runs between a strategy's read and its write.
func (s *Store) pause(ctx context.Context) {
	s.base.Pause(ctx)
}
