package actor

import (
	"context"
	"fmt"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/racelab/racelab/targets/clock"
	"github.com/racelab/racelab/targets/story"
)

// seats is an op of a story's own, as a test story declares it.
const seats story.Op = "reserve"

// takeBurst releases n requests of op on key at once (virtual: on a
// virtual clock, deterministic; else real goroutines behind one closed
// channel) and answers what each was told and the count read back.
func takeBurst(t *testing.T, s *Store, key string, n int, limit int64) (granted []bool, counts []int64, taken int64) {
	t.Helper()
	granted, counts, errs := make([]bool, n), make([]int64, n), make([]error, n)
	take := func(ctx context.Context, i int) { granted[i], counts[i], errs[i] = s.Take(ctx, seats, key, limit) }
	if v, ok := s.Clock().(*clock.Virtual); ok {
		if err := clock.Run(t.Context(), v, n, take); err != nil {
			t.Fatal(err)
		}
	} else {
		release := make(chan struct{})
		var wg sync.WaitGroup
		for i := range n {
			wg.Go(func() {
				<-release
				take(t.Context(), i)
			})
		}
		close(release)
		wg.Wait()
	}
	for i, err := range errs {
		if err != nil {
			t.Fatalf("request %d of %d: %v", i+1, n, err)
		}
	}
	taken, err := s.Taken(t.Context(), seats, key)
	if err != nil {
		t.Fatal(err)
	}
	return granted, counts, taken
}

// TestTakeHoldsItsLimit: the object grants exactly min(n, limit) of n
// simultaneous requests, each at its own count from 1, refuses the rest
// at the limit, and counts what it granted, at limit-1, limit and
// limit+1 and well past it, on the real clock and in virtual time.
func TestTakeHoldsItsLimit(t *testing.T) {
	const limit = 3
	for _, virtual := range []bool{false, true} {
		for _, n := range []int{limit - 1, limit, limit + 1, 10} {
			t.Run(fmt.Sprintf("virtual=%t/n=%d", virtual, n), func(t *testing.T) {
				cfg := Config{}
				if virtual {
					cfg.Clock = clock.NewVirtual(epoch)
				}
				granted, counts, taken := takeBurst(t, open(t, cfg), "gala", n, limit)
				var answered []int64
				for i, g := range granted {
					switch {
					case g:
						answered = append(answered, counts[i])
					case counts[i] != limit:
						t.Errorf("request %d refused at count %d, want the limit %d", i+1, counts[i], limit)
					}
				}
				slices.Sort(answered)
				want := make([]int64, min(n, limit))
				for i := range want {
					want[i] = int64(i + 1)
				}
				if !slices.Equal(answered, want) || taken != int64(len(want)) {
					t.Errorf("granted at counts %v, read back %d; want %v and %d", answered, taken, want, len(want))
				}
			})
		}
	}
}

// TestTakeAwaitFetchLoses: awaiting outside I/O between the read and the
// write lets simultaneous requests read the same count, so four at a
// limit of three all get through and the count loses updates, the same
// way on every replay of the virtual clock.
func TestTakeAwaitFetchLoses(t *testing.T) {
	burst := func() (int, int64) {
		granted, _, taken := takeBurst(t, open(t, Config{Strategy: StrategyAwaitFetch, Clock: clock.NewVirtual(epoch)}), "gala", 4, 3)
		n := 0
		for _, g := range granted {
			if g {
				n++
			}
		}
		return n, taken
	}
	g1, t1 := burst()
	if g2, t2 := burst(); g1 != g2 || t1 != t2 {
		t.Errorf("replayed differently: granted %d then %d, counted %d then %d", g1, g2, t1, t2)
	}
	if g1 <= 3 || t1 >= int64(g1) {
		t.Errorf("await-fetch granted %d and counted %d; want more than the limit of 3, and updates lost", g1, t1)
	}
}

// TestTakeKeepsOpsApart: each op counts apart from every other op and
// from the stories' own objects on the same key, and Forget drops them
// with the rest.
func TestTakeKeepsOpsApart(t *testing.T) {
	ctx := t.Context()
	s := open(t, Config{StorageLatency: time.Microsecond})
	for range 2 {
		if _, _, err := s.Take(ctx, seats, "a", 5); err != nil {
			t.Fatal(err)
		}
	}
	if _, _, err := s.Consume(ctx, "a", 5); err != nil {
		t.Fatal(err)
	}
	for _, tt := range []struct {
		op   story.Op
		want int64
	}{{seats, 2}, {"board", 0}} {
		if got, err := s.Taken(ctx, tt.op, "a"); err != nil || got != tt.want {
			t.Errorf("Taken(%s, a) = %d, %v; want %d", tt.op, got, err, tt.want)
		}
	}
	if got, err := s.Count(ctx, "a"); err != nil || got != 1 {
		t.Errorf("Count(a) = %d, %v; want the one download, apart from the seats", got, err)
	}
	s.Forget("a")
	s.mu.Lock()
	left := len(s.objects)
	s.mu.Unlock()
	if left != 0 {
		t.Errorf("%d objects left after forgetting the key", left)
	}
}
