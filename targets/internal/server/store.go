package server

import (
	"context"

	"github.com/racelab/racelab/targets/clock"
	"github.com/racelab/racelab/targets/story"
)

// Store is what a store on a real server holds besides its strategies: its
// Config with the defaults filled in, its pool of
// connections, of the driver's type P, and the loop that retries its
// optimistic strategy (WATCH, SERIALIZABLE). redis.Store and postgres.Store
// each hold one, so that the two are built alike.
type Store[P any] struct {
	Config Config
	Pool   *Pool[P]
	Retry  *RetryLoop
	// BetweenReadAndWrite, when set, runs after the read of the
	// strategies that read before they write: tests use it to change a
	// row or key at the worst moment.
	BetweenReadAndWrite func(ctx context.Context)
	// Plans is the naive strategy's cache of plan reads; nil for the
	// strategies that read the plan where they decide.
	Plans *PlanCache
}

// Clock is the clock the store runs on: Config.Clock, or the real one.
func (s *Store[P]) Clock() clock.Clock {
	if s.Config.Clock == nil {
		return clock.Real{}
	}
	return s.Config.Clock
}

// Pause runs between a strategy's read and its write: the test hook, then
// the think time on the store's clock.
func (s *Store[P]) Pause(ctx context.Context) {
	Pause(ctx, s.Clock(), s.BetweenReadAndWrite, s.Config.ThinkTime)
}

// NewPlans is the plan cache of a store of strategy: one kept for
// cfg.PlanCacheTTL (story.PlanCacheTTL when zero) on the naive strategy,
// none on the others.
func NewPlans(cfg Config, naive string) *PlanCache {
	if cfg.Strategy != naive {
		return nil
	}
	ttl := cfg.PlanCacheTTL
	if ttl == 0 {
		ttl = story.PlanCacheTTL
	}
	return NewPlanCache(ttl, cfg.Clock)
}
