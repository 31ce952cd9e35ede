package server

import (
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/racelab/racelab/targets/clock"
)

// Config says which server a store uses and how: redis.Config and
// postgres.Config are this type, since the two stores are set up alike.
type Config struct {
	// URL is the server (see the store's ParseURL); empty means the
	// store's DefaultURL.
	URL string
	// Strategy is one of the store's Strategies.
	Strategy string
	// PoolSize is the number of connections to start with; Prepare grows
	// the pool when a burst needs more. Zero means the store's
	// DefaultPoolSize.
	PoolSize int
	// Now is the clock that decides the quota's day; nil means Clock's
	// Now, or time.Now when Clock is nil too.
	Now func() time.Time
	// Clock is the clock the store waits on and dates its plan reads by:
	// its think time and its plan cache. Nil means the real clock. A
	// *clock.Virtual runs the store in virtual time (a story on the scale
	// of hours); its requests must then be made by the clock's
	// participants, one at a time.
	Clock clock.Clock
	// PlanCacheTTL is how long the naive strategy keeps a read of a
	// subscription plan in the process; zero means story.PlanCacheTTL, a
	// negative value none at all. The other strategies read the plan
	// where they decide and ignore it.
	PlanCacheTTL time.Duration
	// ThinkTime is a pause between a strategy's read and its write, to
	// widen the window a race needs.
	ThinkTime time.Duration
	// MaxAttempts bounds an optimistic strategy's tries per request (WATCH,
	// SERIALIZABLE); zero means no bound: a refused request is retried
	// until its context ends, which is what the burst engine's per-request
	// timeout is for. A fixed bound would make a strategy that holds fail
	// under its own story's contention, and the failures would read as the
	// store's. A caller whose context has no deadline should set one here.
	MaxAttempts int
	// DialTimeout bounds each connection attempt; zero means the store's
	// DefaultDialTimeout.
	DialTimeout time.Duration
}

// WithDefaults answers c with the fields left zero set from defaults (URL,
// PoolSize, DialTimeout) and Now set to time.Now, or an error when
// c.Strategy is not one of strategies, the store's list, which the error
// names after kind ("redis", "postgres").
func (c Config) WithDefaults(kind string, strategies []string, defaults Config) (Config, error) {
	if !slices.Contains(strategies, c.Strategy) {
		valid := make([]string, len(strategies))
		for i, s := range strategies {
			valid[i] = strconv.Quote(s)
		}
		return c, fmt.Errorf("unknown %s strategy %q (valid: %s)", kind, c.Strategy, strings.Join(valid, ", "))
	}
	if c.URL == "" {
		c.URL = defaults.URL
	}
	if c.PoolSize <= 0 {
		c.PoolSize = defaults.PoolSize
	}
	if c.Now == nil {
		c.Now = time.Now
		if c.Clock != nil {
			c.Now = c.Clock.Now
		}
	}
	if c.DialTimeout <= 0 {
		c.DialTimeout = defaults.DialTimeout
	}
	return c, nil
}
