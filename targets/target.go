package targets

import (
	"context"
	"io"
	"time"

	"github.com/racelab/racelab/targets/clock"
)

// Counter is a store that counts views per slug (ten-hits-one-view).
type Counter interface {
	// Hit records one view of slug and answers the total it stored.
	Hit(ctx context.Context, slug string) (int64, error)
	// Views reads the total stored for slug, 0 if it has none.
	Views(ctx context.Context, slug string) (int64, error)
}

// Quota is a store that grants at most limit downloads a visitor a UTC day
// (six-become-four). A refused download must not be counted.
type Quota interface {
	// Consume asks for one download and answers whether it was granted and
	// the count the store answered with.
	Consume(ctx context.Context, visitor string, limit int64) (granted bool, count int64, err error)
	// Count reads the visitor's count for today.
	Count(ctx context.Context, visitor string) (int64, error)
}

// Inventory is a store of one-of-a-kind items (five-checkouts): every item
// has a stock of exactly one.
type Inventory interface {
	// Checkout tries to claim item for buyer and answers whether this
	// request got it.
	Checkout(ctx context.Context, item, buyer string) (bool, error)
	// Claims reads how many claims the store recorded on item.
	Claims(ctx context.Context, item string) (int64, error)
}

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
	// Store implements Counter, Quota and/or Inventory, and may implement
	// Preparer and io.Closer.
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

// Close releases whatever the store holds (files, connections, goroutines).
func (t *Target) Close() error {
	if c, ok := t.Store.(io.Closer); ok {
		return c.Close()
	}
	return nil
}

// Ability is a set of story interfaces a target implements.
type Ability uint8

// The abilities a target can have, one per story interface.
const (
	CanCount    Ability = 1 << iota // implements Counter
	CanQuota                        // implements Quota
	CanCheckout                     // implements Inventory
)

// Has reports whether a includes every ability in b.
func (a Ability) Has(b Ability) bool { return a&b == b }

// AbilitiesOf reports which story interfaces store implements.
func AbilitiesOf(store any) Ability {
	var a Ability
	if _, ok := store.(Counter); ok {
		a |= CanCount
	}
	if _, ok := store.(Quota); ok {
		a |= CanQuota
	}
	if _, ok := store.(Inventory); ok {
		a |= CanCheckout
	}
	return a
}

// Forgetter is implemented by the simulated stores, which hold every key
// they were ever given in memory: once a trial's key has been read back
// it is never used again, and Forget drops what the store holds for it,
// so that a run of a million trials needs no more memory than one of a
// thousand. Call it only when no request on key is in flight.
type Forgetter interface {
	Forget(key string)
}

// Retrier is implemented by optimistic strategies (WATCH, SERIALIZABLE) that
// retry on conflict; racelab reports how many retries a trial needed.
type Retrier interface {
	// Retries is the running total of retries since the store was opened.
	Retries() int64
}

// Op names one story's request, for targets that build requests themselves.
type Op string

// The story operations.
const (
	OpHit      Op = "hit"      // Counter.Hit
	OpDownload Op = "download" // Quota.Consume
	OpCheckout Op = "checkout" // Inventory.Checkout
)

// Reply is a staged request's answer.
type Reply struct {
	// OK is true for a counted hit, a granted download, a claimed item.
	OK bool
	// Value is the total, the count, or the claims the store answered.
	Value int64
	// Arrival is when the server says the request arrived, by its own
	// clock; zero when the server does not say.
	Arrival time.Time
	// Early says the answer came before the request's final part was
	// released: the burst was not synchronized and proves nothing.
	Early bool
}

// Stager is implemented by targets that send each request in two parts
// (HTTP last-byte or single-packet synchronization): everything but the
// final part before the barrier, the final parts together after it.
type Stager interface {
	// Stage readies n requests of op on key and returns one function per
	// request; calling it sends the final part and waits for the reply.
	// limit is the story's limit for OpDownload. Staged functions are
	// called once each, concurrently.
	Stage(ctx context.Context, op Op, key string, limit int64, n int) ([]func(context.Context) (Reply, error), error)
}

// Clocked is implemented by simulated stores, which run on a clock of their
// own: the real one, or a *clock.Virtual that makes a trial a deterministic
// discrete-event run.
type Clocked interface {
	Clock() clock.Clock
}
