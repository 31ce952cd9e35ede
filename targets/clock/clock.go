package clock

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"
)

// Clock is where a simulated store reads the time and waits out its
// latencies. Real and *Virtual implement it.
type Clock interface {
	// Now is the current instant.
	Now() time.Time
	// Sleep waits d, or until ctx is done, in which case it returns
	// ctx.Err().
	Sleep(ctx context.Context, d time.Duration) error
}

// Errors the package answers with, besides a done context's.
var (
	// ErrClosed is returned by Send on a closed Chan, and by Recv on a
	// closed Chan once its buffered values are taken.
	ErrClosed = errors.New("clock: channel closed")
	// ErrDeadlock ends a virtual Run whose participants are all blocked
	// with no wake-up pending: nothing could ever make them runnable.
	ErrDeadlock = errors.New("clock: deadlock")
)

// scheduler is a Clock that can also start participants: Real and *Virtual.
type scheduler interface {
	Clock
	Run(ctx context.Context, n int, f func(ctx context.Context, i int)) error
	Go(f func())
}

var (
	_ scheduler = Real{}
	_ scheduler = (*Virtual)(nil)
)

// Run starts n participants on c, calling f(ctx, i) for i in [0, n), and
// returns when all have returned: c.Run for a *Virtual or Real, and Real's
// behaviour for any other Clock (such as a test's hand-moved clock).
func Run(ctx context.Context, c Clock, n int, f func(ctx context.Context, i int)) error {
	if s, ok := c.(scheduler); ok {
		return s.Run(ctx, n, f)
	}
	return Real{}.Run(ctx, n, f)
}

// Go starts f as a participant of c: c.Go for a *Virtual or Real, a plain
// goroutine for any other Clock.
func Go(c Clock, f func()) {
	if s, ok := c.(scheduler); ok {
		s.Go(f)
		return
	}
	go f()
}

// Real is the wall clock. Its zero value is ready to use.
type Real struct{}

// Now is time.Now.
func (Real) Now() time.Time { return time.Now() }

// Sleep waits d on a timer, giving up as soon as ctx is done. A d of zero or
// less returns at once (with ctx's error if it is done).
func (Real) Sleep(ctx context.Context, d time.Duration) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	if d <= 0 {
		return nil
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-t.C:
		return nil
	}
}

// Go runs f on a new goroutine.
func (Real) Go(f func()) { go f() }

// Run starts n goroutines, releases them together by closing one channel,
// and waits for all of them. It returns ctx.Err() if ctx is done by then; f
// is expected to honour ctx itself.
func (Real) Run(ctx context.Context, n int, f func(ctx context.Context, i int)) error {
	if n < 0 {
		return fmt.Errorf("clock: run of %d participants; want 0 or more", n)
	}
	start := make(chan struct{})
	var wg sync.WaitGroup
	for i := range n {
		wg.Go(func() {
			<-start
			f(ctx, i)
		})
	}
	close(start)
	wg.Wait()
	return ctx.Err()
}
