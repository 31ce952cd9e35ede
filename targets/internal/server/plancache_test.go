package server

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/racelab/racelab/targets/clock"
)

var start = time.Date(2026, time.March, 14, 12, 0, 0, 0, time.UTC)

// store is a plan held behind a function that counts its loads.
type store struct {
	paid  atomic.Bool
	loads atomic.Int64
}

func (s *store) load(context.Context) (bool, error) {
	s.loads.Add(1)
	return s.paid.Load(), nil
}

// A read is answered again until it is TTL old, whatever the store says
// meanwhile, and the store is asked again from then on.
func TestReadKeptForTTL(t *testing.T) {
	const ttl = 45 * time.Second
	v := clock.NewVirtual(start)
	c := NewPlanCache(ttl, v)
	ctx := t.Context()
	var s store
	s.paid.Store(true)
	steps := []struct {
		after time.Duration // how long to move the clock before the read
		paid  bool
		loads int64
	}{
		{0, true, 1},
		{ttl - time.Nanosecond, true, 1}, // the cancel below is not seen yet
		{time.Nanosecond, false, 2},      // exactly TTL old: asked again
		{ttl / 2, false, 2},
	}
	for i, st := range steps {
		if err := v.Sleep(ctx, st.after); err != nil {
			t.Fatal(err)
		}
		if i == 1 {
			s.paid.Store(false)
		}
		paid, err := c.Read(ctx, "alice", s.load)
		if err != nil {
			t.Fatal(err)
		}
		if paid != st.paid || s.loads.Load() != st.loads {
			t.Errorf("step %d: paid %v after %d loads; want %v after %d", i, paid, s.loads.Load(), st.paid, st.loads)
		}
	}
}

// Without a TTL nothing is kept: every read asks the store.
func TestNoTTLAsksEveryTime(t *testing.T) {
	for _, ttl := range []time.Duration{0, -time.Second} {
		c := NewPlanCache(ttl, nil)
		if c != nil || c.TTL() != 0 || c.Len() != 0 {
			t.Fatalf("NewPlanCache(%v) = %v; want a nil cache", ttl, c)
		}
		var s store
		for range 3 {
			if _, err := c.Read(t.Context(), "bob", s.load); err != nil {
				t.Fatal(err)
			}
		}
		if s.loads.Load() != 3 {
			t.Errorf("ttl %v: %d loads; want 3", ttl, s.loads.Load())
		}
	}
}

// A failed read is not kept: the next one asks again.
func TestFailedReadNotKept(t *testing.T) {
	c := NewPlanCache(time.Minute, clock.NewVirtual(start))
	boom := errors.New("boom")
	if _, err := c.Read(t.Context(), "carol", func(context.Context) (bool, error) { return true, boom }); !errors.Is(err, boom) {
		t.Fatalf("got %v; want %v", err, boom)
	}
	var s store
	if _, err := c.Read(t.Context(), "carol", s.load); err != nil || s.loads.Load() != 1 {
		t.Errorf("err %v, %d loads; want the store asked", err, s.loads.Load())
	}
}

// Many requests read many subscribers at once: each subscriber is loaded
// at least once and at most once per request that missed, what each load
// said is what every later read answers, and once all have been read no
// read asks the store again until the TTL is over.
func TestConcurrentReads(t *testing.T) {
	const subscribers, readers = 40, 8
	v := clock.NewVirtual(start)
	c := NewPlanCache(time.Minute, v)
	stores := make([]store, subscribers)
	for i := range stores {
		stores[i].paid.Store(i%2 == 0)
	}
	burst := func() {
		var wg sync.WaitGroup
		release := make(chan struct{})
		for r := range readers {
			wg.Go(func() {
				<-release
				for i := range subscribers {
					k := (i + r) % subscribers // readers start at different subscribers
					paid, err := c.Read(t.Context(), fmt.Sprint("s", k), stores[k].load)
					if err != nil || paid != (k%2 == 0) {
						t.Errorf("subscriber %d: paid %v, err %v; want %v", k, paid, err, k%2 == 0)
					}
				}
			})
		}
		close(release)
		wg.Wait()
	}
	burst()
	loads := make([]int64, subscribers)
	for i := range stores {
		loads[i] = stores[i].loads.Load()
		if loads[i] < 1 || loads[i] > readers {
			t.Errorf("subscriber %d loaded %d times; want 1 to %d", i, loads[i], readers)
		}
	}
	if c.Len() != subscribers {
		t.Errorf("cache holds %d reads; want %d", c.Len(), subscribers)
	}
	burst()
	for i := range stores {
		if got := stores[i].loads.Load(); got != loads[i] {
			t.Errorf("subscriber %d: loaded again (%d, was %d) within the TTL", i, got, loads[i])
		}
	}
	if err := v.Sleep(t.Context(), time.Minute); err != nil {
		t.Fatal(err)
	}
	burst()
	for i := range stores {
		if got := stores[i].loads.Load(); got <= loads[i] {
			t.Errorf("subscriber %d: not loaded again after the TTL", i)
		}
	}
}

// Expired reads are swept as new subscribers come: the cache does not grow
// with every subscriber a long-lived server has seen.
func TestExpiredReadsSwept(t *testing.T) {
	const n = 100
	v := clock.NewVirtual(start)
	c := NewPlanCache(time.Second, v)
	var s store
	for i := range n {
		if _, err := c.Read(t.Context(), fmt.Sprint("old", i), s.load); err != nil {
			t.Fatal(err)
		}
	}
	if err := v.Sleep(t.Context(), time.Second); err != nil {
		t.Fatal(err)
	}
	for i := range n {
		if _, err := c.Read(t.Context(), fmt.Sprint("new", i), s.load); err != nil {
			t.Fatal(err)
		}
	}
	if c.Len() > n {
		t.Errorf("cache holds %d reads after %d expired and %d new; want the expired ones swept", c.Len(), n, n)
	}
}
