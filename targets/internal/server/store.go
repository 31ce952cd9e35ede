package server

import (
	"context"

	"github.com/racelab/racelab/targets/internal/retry"
)

// Store is what a store on a real server holds besides its strategies: its
// Config with the defaults filled in, its pool of
// connections, of the driver's type P, and the loop that retries its
// optimistic strategy (WATCH, SERIALIZABLE). redis.Store and postgres.Store
// each hold one, so that the two are built alike.
type Store[P any] struct {
	Config Config
	Pool   *Pool[P]
	Retry  *retry.Loop
	// BetweenReadAndWrite, when set, runs after the read of the
	// strategies that read before they write: tests use it to change a
	// row or key at the worst moment.
	BetweenReadAndWrite func(ctx context.Context)
}
