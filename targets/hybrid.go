package targets

import (
	"context"
	"fmt"

	"github.com/racelab/racelab/targets/actor"
	"github.com/racelab/racelab/targets/clock"
	"github.com/racelab/racelab/targets/kv"
	"github.com/racelab/racelab/targets/story"
)

// Hybrid is the hybrid store (the package doc says why): it decides in an
// object and reads the plan from KV.
type Hybrid struct {
	kv    *kv.App
	actor *actor.Store
	clock clock.Clock
}

var _ story.Plans = (*Hybrid)(nil)

// New makes a hybrid store of a KV namespace and an actor store, which
// must run on the same clock c.
func NewHybrid(app *kv.App, objects *actor.Store, c clock.Clock) *Hybrid {
	return &Hybrid{kv: app, actor: objects, clock: c}
}

// Clock is the clock both halves run on.
func (s *Hybrid) Clock() clock.Clock { return s.clock }

// Subscribe starts the plan in the object, which owns it, then publishes
// it to KV for the cheap reads.
func (s *Hybrid) Subscribe(ctx context.Context, subscriber string) error {
	if err := s.actor.Subscribe(ctx, subscriber); err != nil {
		return err
	}
	return s.kv.Subscribe(ctx, subscriber)
}

// Cancel ends the plan in the object, then publishes the cancel to KV,
// where cached reads go on saying "paid" until they expire.
func (s *Hybrid) Cancel(ctx context.Context, subscriber string) error {
	if err := s.actor.Cancel(ctx, subscriber); err != nil {
		return err
	}
	return s.kv.Cancel(ctx, subscriber)
}

// Paid reads the plan from KV, as every page does.
func (s *Hybrid) Paid(ctx context.Context, subscriber string) (bool, error) {
	return s.kv.Paid(ctx, subscriber)
}

// Download reads the plan from KV (cheap, possibly stale) and, when it
// reads paid, asks the object for the quota: exactly limit a day.
func (s *Hybrid) Download(ctx context.Context, subscriber string, limit int64) (bool, int64, error) {
	paid, err := s.kv.Paid(ctx, subscriber)
	if err != nil || !paid {
		return false, 0, err
	}
	ok, n, err := s.actor.Consume(ctx, subscriber, limit)
	if err != nil {
		return false, 0, fmt.Errorf("download for %q: %w", subscriber, err)
	}
	return ok, n, nil
}

// Downloads reads the object's count: the authoritative one.
func (s *Hybrid) Downloads(ctx context.Context, subscriber string) (int64, error) {
	return s.actor.Count(ctx, subscriber)
}

// Forget drops key from both halves.
func (s *Hybrid) Forget(key string) {
	s.kv.Forget(key)
	s.actor.Forget(key)
}

// Close stops the object half.
func (s *Hybrid) Close() error { return s.actor.Close() }
