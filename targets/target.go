package targets

import (
	"context"
	"io"

	"github.com/racelab/racelab/targets/clock"
	"github.com/racelab/racelab/targets/httpapi/burst"
)

// Preparer is implemented by stores that hold connections or goroutines and
// can set them up before a burst, so that set-up never smears the release.
type Preparer interface {
	// Prepare makes the store ready for n simultaneous requests.
	Prepare(ctx context.Context, n int) error
}

// Target is an opened store with its strategy, ready for trials.
type Target struct {
	// Spec is the spec the target was opened from.
	Spec Spec
	// Entry is the catalog entry: the target's guarantee and expectation.
	Entry Entry
	// Store plays the stories whose interfaces (package story) it
	// implements, and may implement Preparer and io.Closer.
	Store any
}

// Name is the target as the user named it, without parameters.
func (t *Target) Name() string { return t.Spec.Name() }

// Prepare readies the store for n simultaneous requests when it needs it.
func (t *Target) Prepare(ctx context.Context, n int) error {
	if p, ok := t.Store.(Preparer); ok {
		return p.Prepare(ctx, n)
	}
	return nil
}

// Close releases whatever the store holds (files, connections,
// goroutines), unless the store is shared (Entry.Shared): then its owner
// closes it.
func (t *Target) Close() error {
	if t.Entry.Shared {
		return nil
	}
	if c, ok := t.Store.(io.Closer); ok {
		return c.Close()
	}
	return nil
}

// Forgetter is implemented by the simulated stores, which hold every key
// they were ever given in memory: once a trial's key has been read back
// it is never used again, and Forget drops what the store holds for it,
// so that a run of a million trials needs no more memory than one of a
// thousand. Call it only when no request on key is in flight.
type Forgetter interface {
	Forget(key string)
}

// Cleaner is implemented by the real stores (Redis, PostgreSQL), which
// keep what a run wrote after it ends: once a trial's key has been read
// back it is never used again, and Clean deletes what the store holds for
// it, so that a finished run leaves no key or row behind (views in
// racelab_views once piled up to thousands of rows, Redis keys stayed a
// day). Call it only when no request on key is in flight.
type Cleaner interface {
	Clean(ctx context.Context, key string) error
}

// Done says a trial's key will never be used again: a simulated store
// forgets it (Forgetter), a real store deletes it (Cleaner). A delete that
// fails costs the run nothing but a leftover, which racelab clean
// removes; its error is returned for a caller that keeps count.
func Done(ctx context.Context, store any, key string) error {
	switch s := store.(type) {
	case Forgetter:
		s.Forget(key)
	case Cleaner:
		return s.Clean(ctx, key)
	}
	return nil
}

// TrialStarter is implemented by the simulated stores, whose injected
// outages are measured from the start of each trial: the engine calls
// StartTrial just before it fires a trial's requests.
type TrialStarter interface {
	StartTrial()
}

// Retrier is implemented by optimistic strategies (WATCH, SERIALIZABLE) that
// retry on conflict; racelab reports how many retries a trial needed.
type Retrier interface {
	// Retries is the running total of retries since the store was opened.
	Retries() int64
}

// Stager is implemented by targets that send each request in two parts
// (HTTP last-byte or single-packet synchronization): everything but the
// final part before the barrier, the final parts together after it. The
// requests of a burst are the story's own, made by its request function
// as on any target: each under the context of one of the gate's calls
// (burst.StageCalls), where the target stages the request rather than
// send it whole.
type Stager interface {
	// Gate readies a burst of n requests.
	Gate(n int) *burst.Gate
}

// Clocked is implemented by simulated stores, which run on a clock of their
// own: the real one, or a *clock.Virtual that makes a trial a deterministic
// discrete-event run.
type Clocked interface {
	Clock() clock.Clock
}

// WarmUpOf is how the last warm-up of a service's whole-request
// connections went (burst.Pool.WarmedUp), for a store that is a service
// and has warmed them.
func WarmUpOf(t *Target) (burst.WarmUp, bool) {
	w, ok := t.Store.(interface{ WarmedUp() burst.WarmUp })
	if !ok {
		return burst.WarmUp{}, false
	}
	wu := w.WarmedUp()
	return wu, wu.Asked > 0
}
