package server

import (
	"context"
	"errors"
	"math/rand/v2"
	"sync/atomic"
	"time"

	"github.com/racelab/racelab/targets/clock"
)

// ErrTooManyRetries is wrapped by the error a store answers when it gave up
// on a request whose every attempt was refused (see RetryLoop.Do). redis
// and postgres re-export it under the same name.
var ErrTooManyRetries = errors.New("too many retries")

// RetryLoop is a store's retry policy and its count of restarts. Its
// methods are safe for concurrent use; a RetryLoop must not be copied
// after first use.
type RetryLoop struct {
	// Base and Cap shape the wait before a retry: a random time up to Base
	// doubled with each attempt, at most Cap ("full jitter"), so that
	// requests that collided do not all come back at the same instant and
	// collide again.
	Base, Cap time.Duration
	// MaxAttempts bounds the tries per request; zero means no bound: a
	// refused request is retried until its context ends.
	MaxAttempts int
	// Refused says whether an attempt's error is a refusal worth another
	// try; any other error, nil included, ends the loop.
	Refused func(err error) bool

	retries atomic.Int64
}

// Retries is how many times requests started over, summed over the loop's
// life.
func (l *RetryLoop) Retries() int64 { return l.retries.Load() }

// Do runs try until it answers an error that l.Refused does not accept, and
// answers that error. It gives up after l.MaxAttempts refused attempts, when
// set, or when ctx would end before the next attempt could start, and then
// answers gaveUp(attempts, last, deadline): last is the last refusal, and
// deadline is nil when the bound was reached, the context's error when time
// ran out first.
func (l *RetryLoop) Do(ctx context.Context, try func() error, gaveUp func(attempts int, last, deadline error) error) error {
	for attempt := 1; ; attempt++ {
		err := try()
		if !l.Refused(err) {
			return err
		}
		if l.MaxAttempts > 0 && attempt >= l.MaxAttempts {
			return gaveUp(attempt, err, nil)
		}
		if werr := l.backoff(ctx, attempt); werr != nil {
			return gaveUp(attempt, err, werr)
		}
		l.retries.Add(1)
	}
}

// backoff waits before attempt+1. It answers ctx's error when ctx ends
// first, and at once when ctx would end before the wait does: a retry that
// cannot start in time is not worth waiting for.
func (l *RetryLoop) backoff(ctx context.Context, attempt int) error {
	wait := rand.N(min(l.Base<<min(attempt, 16), l.Cap)) + 1
	if deadline, ok := ctx.Deadline(); ok && time.Until(deadline) < wait {
		return context.DeadlineExceeded
	}
	return clock.Real{}.Sleep(ctx, wait)
}
