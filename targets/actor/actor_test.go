package actor

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"testing"
	"time"

	"go.uber.org/goleak"

	"github.com/racelab/racelab/targets/clock"
	"github.com/racelab/racelab/targets/storetest"
)

func TestMain(m *testing.M) {
	goleak.VerifyTestMain(m)
}

// A Store must keep fitting racelab's story interfaces.
var _ storetest.Local = (*Store)(nil)

func open(t testing.TB, cfg Config) *Store {
	t.Helper()
	s := New(cfg)
	t.Cleanup(func() { s.Close() })
	return s
}

// TestBursts runs each story's burst on both strategies: the default one
// gives its exact outcome (every hit counted, every answer distinct);
// StrategyAwaitFetch's await opens the gate between read and write, so some
// requests read a value another one is about to overwrite, and every round
// loses updates.
func TestBursts(t *testing.T) {
	holds, awaits := Config{Strategy: StrategyDefault}, Config{Strategy: StrategyAwaitFetch}
	tests := []struct {
		story string
		cfg   Config
		check func(tb testing.TB, s *Store)
	}{
		{"hit", holds, func(tb testing.TB, s *Store) { storetest.CounterExact(tb, s, 10, 50) }},
		{"hit", awaits, func(tb testing.TB, s *Store) { storetest.CounterLoses(tb, s, 5, 10, storetest.All) }},
		{"consume", holds, func(tb testing.TB, s *Store) { storetest.QuotaExact(tb, s, 1, storetest.QuotaN) }},
		{"consume", awaits, func(tb testing.TB, s *Store) { storetest.QuotaLoses(tb, s, 1, storetest.QuotaN, storetest.All) }},
		{"checkout", holds, func(tb testing.TB, s *Store) { storetest.InventoryExact(tb, s, 1, storetest.InventoryN) }},
		{"checkout", awaits, func(tb testing.TB, s *Store) {
			storetest.InventoryLoses(tb, s, 1, storetest.InventoryN, storetest.All)
		}},
	}
	for _, tt := range tests {
		t.Run(fmt.Sprintf("%s/%q", tt.story, tt.cfg.Strategy), func(t *testing.T) { tt.check(t, open(t, tt.cfg)) })
	}
}

func TestQuotaDayRollover(t *testing.T) {
	for _, strategy := range []string{StrategyDefault, StrategyAwaitFetch} {
		t.Run(fmt.Sprintf("%q", strategy), func(t *testing.T) {
			clock := &storetest.Clock{}
			s := open(t, Config{Strategy: strategy, Now: clock.Now, StorageLatency: -1, FetchLatency: -1})
			storetest.QuotaDays(t, s, clock, storetest.DaySteps())
		})
	}
}

func TestKeysAreSeparate(t *testing.T) {
	ctx := t.Context()
	s := open(t, Config{StorageLatency: -1})
	for range 3 {
		if _, err := s.Hit(ctx, "a"); err != nil {
			t.Fatal(err)
		}
	}
	tests := []struct {
		name string
		read func() (int64, error)
		want int64
	}{
		{"views of a", func() (int64, error) { return s.Views(ctx, "a") }, 3},
		{"views of b", func() (int64, error) { return s.Views(ctx, "b") }, 0},
		{"count for a", func() (int64, error) { return s.Count(ctx, "a") }, 0},
		{"claims on a", func() (int64, error) { return s.Claims(ctx, "a") }, 0},
	}
	for _, tt := range tests {
		got, err := tt.read()
		if err != nil {
			t.Fatal(err)
		}
		if got != tt.want {
			t.Errorf("%s = %d, want %d", tt.name, got, tt.want)
		}
	}
}

func TestClose(t *testing.T) {
	// Latencies far longer than the test: only Close can end the requests.
	s := New(Config{Strategy: StrategyAwaitFetch, StorageLatency: time.Hour, FetchLatency: time.Hour})
	ctx := t.Context()
	const n = 4
	errs := make([]error, n)
	var wg sync.WaitGroup
	for i := range n {
		wg.Go(func() { _, errs[i] = s.Hit(ctx, "slug") })
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	wg.Wait()
	for i, err := range errs {
		if !errors.Is(err, ErrClosed) {
			t.Errorf("hit %d in flight at Close: err = %v, want ErrClosed", i, err)
		}
	}
	if _, err := s.Views(ctx, "slug"); !errors.Is(err, ErrClosed) {
		t.Errorf("Views after Close: err = %v, want ErrClosed", err)
	}
	if err := s.Prepare(ctx, 1); !errors.Is(err, ErrClosed) {
		t.Errorf("Prepare after Close: err = %v, want ErrClosed", err)
	}
	if err := s.Close(); err != nil {
		t.Errorf("second Close: %v", err)
	}
}

func TestContextCanceled(t *testing.T) {
	s := open(t, Config{StorageLatency: time.Hour})
	ctx, cancel := context.WithCancel(t.Context())
	done := make(chan error, 1)
	go func() {
		_, err := s.Hit(ctx, "slug")
		done <- err
	}()
	cancel()
	if err := <-done; !errors.Is(err, context.Canceled) {
		t.Errorf("err = %v, want context.Canceled", err)
	}
}

func TestNewUnknownStrategy(t *testing.T) {
	defer func() {
		if recover() == nil {
			t.Error("New with an unknown strategy did not panic")
		}
	}()
	New(Config{Strategy: "optimistic"}).Close()
}

func BenchmarkHit(b *testing.B) {
	for _, strategy := range []string{StrategyDefault, StrategyAwaitFetch} {
		// No simulated latency: this measures the mailbox round trips, not
		// the sleeps.
		b.Run(fmt.Sprintf("strategy=%q", strategy), func(b *testing.B) {
			s := open(b, Config{Strategy: strategy, StorageLatency: -1, FetchLatency: -1})
			storetest.ParallelHits(b, s, "slug")
		})
	}
}

// TestForget checks that a forgotten key's objects stop and leave the
// store, on the real clock and in virtual time, and that a key used again
// after it starts from nothing.
func TestForget(t *testing.T) {
	for _, c := range []struct {
		name  string
		clock clock.Clock
	}{{"real", nil}, {"virtual", clock.NewVirtual(time.Date(2026, 11, 30, 12, 0, 0, 0, time.UTC))}} {
		t.Run(c.name, func(t *testing.T) {
			s := New(Config{Clock: c.clock, StorageLatency: time.Microsecond})
			t.Cleanup(func() { _ = s.Close() })
			ctx := context.Background()
			do := func(f func()) {
				if v, ok := c.clock.(*clock.Virtual); ok {
					if err := v.Run(ctx, 1, func(context.Context, int) { f() }); err != nil {
						t.Fatal(err)
					}
					return
				}
				f()
			}
			for i := range 50 {
				key := fmt.Sprintf("k%d", i)
				do(func() {
					if _, err := s.Hit(ctx, key); err != nil {
						t.Error(err)
					}
					if _, _, err := s.Consume(ctx, key, 5); err != nil {
						t.Error(err)
					}
				})
				s.Forget(key)
			}
			s.mu.Lock()
			left := len(s.objects)
			s.mu.Unlock()
			if left != 0 {
				t.Errorf("%d objects left after forgetting every key", left)
			}
			var n int64
			do(func() {
				var err error
				if n, err = s.Hit(ctx, "k0"); err != nil {
					t.Error(err)
				}
			})
			if n != 1 {
				t.Errorf("a forgotten key hit again answered %d views, want 1", n)
			}
		})
	}
}
