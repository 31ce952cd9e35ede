package burst

import (
	"context"
	"errors"
	"fmt"
	"net"
	"sync"
	"time"
)

// A burst's connections are opened and warmed before the engine's barrier.
// A service that accepts connections and never answers must not hold a run
// there, nor may a slow one be cut off by a limit the user did not set: the
// whole warm-up of one connection (connect, TLS, the HTTP/2 settings, the
// harmless GET) shares one deadline, Config.DialTimeout, which racelab run
// sets to its --timeout; and every wait of it also ends with the caller's
// context, so that Ctrl-C is not held up either. Connections are warmed in
// parallel and the first failure calls off the others, so a silent service
// costs one DialTimeout, whatever the size of the burst.

// silentError says the service did not finish a warm-up step within the
// pool's DialTimeout. It unwraps to context.DeadlineExceeded.
type silentError struct{ wait time.Duration }

func (e *silentError) Error() string { return fmt.Sprintf("no answer within %s", e.wait) }
func (e *silentError) Unwrap() error { return context.DeadlineExceeded }

// warmContext bounds the warm-up of one connection. Its cause, once it
// expires, is a silentError naming the wait.
func (p *Pool) warmContext(ctx context.Context) (context.Context, context.CancelFunc) {
	return context.WithTimeoutCause(ctx, p.dialWait, &silentError{p.dialWait})
}

// stepErr is what a warm-up step under ctx failed with: why ctx ended when
// it did (the wait ran out, or the run was interrupted), since the I/O
// error it caused (an "i/o timeout") says less; else err itself.
func stepErr(ctx context.Context, err error) error {
	if ctx.Err() != nil {
		return context.Cause(ctx)
	}
	return err
}

// unblockOnDone makes conn's blocked reads and writes return once ctx ends,
// by moving its deadline into the past: a socket cannot be selected on, but
// its deadline can be cut. stop disarms the watch and reports whether it
// was still armed; false means the deadline was cut and conn is spent.
func unblockOnDone(ctx context.Context, conn net.Conn) (stop func() bool) {
	return context.AfterFunc(ctx, func() { _ = conn.SetDeadline(time.Unix(1, 0)) })
}

// errCalledOff is the cause given to the warm-ups still running when
// another has failed; warmAll reports the failure, never this.
var errCalledOff = errors.New("warm-up called off: another connection failed")

// warmAll runs warm(ctx, i) for every i below n, at most parallel at once,
// and returns the first failure. That failure calls off the others, and the
// warm-ups still waiting for their turn never start.
func warmAll(ctx context.Context, n, parallel int, warm func(ctx context.Context, i int) error) error {
	ctx, cancel := context.WithCancelCause(ctx)
	defer cancel(nil)
	var (
		mu    sync.Mutex
		first error
		wg    sync.WaitGroup
	)
	gate := make(chan struct{}, max(parallel, 1))
	for i := range n {
		wg.Go(func() {
			select {
			case gate <- struct{}{}:
			case <-ctx.Done():
				return
			}
			defer func() { <-gate }()
			if ctx.Err() != nil {
				return // called off while it waited for its turn
			}
			if err := warm(ctx, i); err != nil {
				mu.Lock()
				if first == nil {
					first = err
					cancel(errCalledOff)
				}
				mu.Unlock()
			}
		})
	}
	wg.Wait()
	if first == nil && ctx.Err() != nil {
		return context.Cause(ctx) // the caller's context ended before any failed
	}
	return first
}

// WarmUp is how the warm-up of a Pool's whole-request connections went
// (Prepare, for SyncNone and for loads): how many were asked for, how
// many were warmed, and how long it took. Fewer warmed than asked is no
// failure: the rest open as the requests need them.
type WarmUp struct {
	Asked, Warmed int
	Took          time.Duration
	// Stopped is why the warm-up stopped short (the first connection that
	// failed); nil when every connection was warmed.
	Stopped error
}
