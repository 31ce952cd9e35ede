package server

import (
	"context"
	"sync"
	"time"

	"github.com/racelab/racelab/targets/clock"
)

// PlanCache keeps each subscriber's last plan read for a TTL. A nil
// *PlanCache caches nothing: every Read asks the store, as the strategies
// that keep the plan exact do. Its methods are safe for concurrent use.
type PlanCache struct {
	ttl   time.Duration
	clock clock.Clock

	mu    sync.Mutex
	reads map[string]read
	// kept is how many reads were held after the last sweep: the map is
	// swept of expired reads when it has grown to twice that, so that a
	// long-lived server with ever new subscribers holds only live reads
	// and sweeps in amortised constant time.
	kept int
}

// read is one plan read: what it said and when it was asked.
type read struct {
	paid bool
	at   time.Time
}

// minSweep is the size below which the map is never swept: a handful of
// reads costs nothing to keep.
const minSweep = 64

// NewPlanCache is a cache of plan reads kept for ttl, measured on c (nil:
// the real clock). A ttl of zero or less keeps nothing: it answers nil.
func NewPlanCache(ttl time.Duration, c clock.Clock) *PlanCache {
	if ttl <= 0 {
		return nil
	}
	if c == nil {
		c = clock.Real{}
	}
	return &PlanCache{ttl: ttl, clock: c, reads: make(map[string]read)}
}

// TTL is how long a read is kept; zero for a nil PlanCache.
func (c *PlanCache) TTL() time.Duration {
	if c == nil {
		return 0
	}
	return c.ttl
}

// Read answers subscriber's plan: from a read asked less than the TTL ago,
// or else from load, whose answer is kept. A read is dated when it is
// asked, not when it is answered: a read that began before a cancel may
// answer "paid", and dating it earlier keeps the exposure it causes within
// the TTL. Two requests that miss at once both load, as two requests at a
// server do; the read asked last is kept. A failed load keeps nothing.
func (c *PlanCache) Read(ctx context.Context, subscriber string, load func(context.Context) (bool, error)) (bool, error) {
	if c == nil {
		return load(ctx)
	}
	now := c.clock.Now()
	c.mu.Lock()
	r, ok := c.reads[subscriber]
	c.mu.Unlock()
	if ok && now.Sub(r.at) < c.ttl {
		return r.paid, nil
	}
	// The lock is not held across the load: the store is asked over a
	// socket, and other subscribers' reads must not wait on it.
	paid, err := load(ctx)
	if err != nil {
		return false, err
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if old, ok := c.reads[subscriber]; !ok || !old.at.After(now) {
		c.reads[subscriber] = read{paid: paid, at: now}
	}
	if len(c.reads) >= max(minSweep, 2*c.kept) {
		c.sweepLocked(now)
	}
	return paid, nil
}

// sweepLocked drops the reads that have expired by now.
func (c *PlanCache) sweepLocked(now time.Time) {
	for k, r := range c.reads {
		if now.Sub(r.at) >= c.ttl {
			delete(c.reads, k)
		}
	}
	c.kept = len(c.reads)
}

// Len is how many reads the cache holds, expired ones not yet swept
// included.
func (c *PlanCache) Len() int {
	if c == nil {
		return 0
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	return len(c.reads)
}
