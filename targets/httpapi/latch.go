package httpapi

import (
	"context"
	"sync/atomic"
)

// burstLatch releases a staged burst once all n of its functions have been
// called, from the last caller, and holds every caller until then.
//
// Releasing from the last caller rather than the first keeps the history
// true: the engine stamps a request's invoke instant when its function is
// called, and the history checks assume no request takes effect before its
// invoke. Released by the first caller, a request whose goroutine was
// scheduled late would be answered before its own invoke. The wait costs
// the burst nothing: the final parts still leave together, one write after
// another from one goroutine, and the arrival spread is what the server
// sees of that.
type burstLatch struct {
	waiting  atomic.Int64
	release  func()
	released chan struct{}
	err      error // set before released is closed: the burst was called off
}

func newBurstLatch(n int, release func()) *burstLatch {
	l := &burstLatch{release: release, released: make(chan struct{})}
	l.waiting.Store(int64(n))
	return l
}

// arrive counts one caller in and returns once the burst is released, or
// with ctx's error if ctx ends first. A burst whose last caller arrives
// with ctx already ended (the run was interrupted) is called off rather
// than sent after the fact.
func (l *burstLatch) arrive(ctx context.Context) error {
	if l.waiting.Add(-1) == 0 {
		if l.err = ctx.Err(); l.err == nil {
			l.release()
		}
		close(l.released)
		return l.err
	}
	select {
	case <-l.released:
		return l.err
	case <-ctx.Done():
		return ctx.Err()
	}
}
