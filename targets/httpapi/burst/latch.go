package burst

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
	// calledOff is closed, before released, only when the burst is
	// called off; arriveThen's callers wait on it rather than on
	// released, so that a release wakes none of them.
	calledOff chan struct{}
	err       error // set before released is closed: the burst was called off
}

func newBurstLatch(n int, release func()) *burstLatch {
	l := &burstLatch{release: release, released: make(chan struct{}), calledOff: make(chan struct{})}
	l.waiting.Store(int64(n))
	return l
}

// arrive counts one caller in and returns once the burst is released, or
// with ctx's error if ctx ends first. A burst whose last caller arrives
// with ctx already ended (the run was interrupted) is called off rather
// than sent after the fact.
func (l *burstLatch) arrive(ctx context.Context) error {
	if l.last(ctx) {
		return l.err
	}
	select {
	case <-l.released:
		return l.err
	case <-ctx.Done():
		return ctx.Err()
	}
}

// arriveThen is arrive for a caller whose answer closes answered: it
// returns once the burst is released and answered is closed. sent says
// whether the burst was released; err is why the caller stopped waiting
// (the burst was called off, or ctx ended before the release or before the
// answer). A caller that is not the last waits for its answer, not for the
// release, so that the release wakes none of them: at a thousand requests,
// waking every caller at the release, only for each to wait again for its
// answer, takes CPU from the server while the burst is arriving there.
// Each caller wakes once, when its answer is in; one answered before the
// release (early) is still held until the release.
func (l *burstLatch) arriveThen(ctx context.Context, answered <-chan struct{}) (sent bool, err error) {
	if !l.last(ctx) {
		select {
		case <-answered:
		case <-l.calledOff:
		case <-ctx.Done():
		}
		select {
		case <-l.released:
		case <-ctx.Done():
			return false, ctx.Err()
		}
	}
	if l.err != nil {
		return false, l.err
	}
	select {
	case <-answered:
		return true, nil
	case <-ctx.Done():
		return true, ctx.Err()
	}
}

// last counts one caller in and, for the last of them, releases the burst
// or calls it off, and reports whether this caller was the last.
func (l *burstLatch) last(ctx context.Context) bool {
	if l.waiting.Add(-1) != 0 {
		return false
	}
	if l.err = ctx.Err(); l.err == nil {
		l.release()
	} else {
		close(l.calledOff)
	}
	close(l.released)
	return true
}
