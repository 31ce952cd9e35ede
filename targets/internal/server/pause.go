package server

import (
	"context"
	"time"

	"github.com/racelab/racelab/targets/clock"
)

// Pause runs between a read-then-write strategy's read and its write: hook
// first, when set (tests change a key there at the worst moment), then a
// sleep of think, which widens the window a race needs. A cancelled ctx
// cuts the sleep short; the write that follows then fails on it. The
// sleep is on c, so that in virtual time it moves the virtual clock rather
// than holding every other participant up for real.
func Pause(ctx context.Context, c clock.Clock, hook func(ctx context.Context), think time.Duration) {
	if hook != nil {
		hook(ctx)
	}
	_ = c.Sleep(ctx, think)
}
