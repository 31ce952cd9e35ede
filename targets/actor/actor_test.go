package actor

import (
	"context"
	"errors"
	"fmt"
	"io"
	"slices"
	"sync"
	"testing"
	"time"

	"go.uber.org/goleak"
)

func TestMain(m *testing.M) {
	goleak.VerifyTestMain(m)
}

// The story interfaces as the targets package declares them, repeated here
// because this package may not import it: a change of signature on either
// side fails to compile (here) or to adapt (there).
type (
	counter interface {
		Hit(ctx context.Context, slug string) (int64, error)
		Views(ctx context.Context, slug string) (int64, error)
	}
	quota interface {
		Consume(ctx context.Context, visitor string, limit int64) (granted bool, count int64, err error)
		Count(ctx context.Context, visitor string) (int64, error)
	}
	inventory interface {
		Checkout(ctx context.Context, item, buyer string) (bool, error)
		Claims(ctx context.Context, item string) (int64, error)
	}
	preparer interface {
		Prepare(ctx context.Context, n int) error
	}
)

var (
	_ counter   = (*Store)(nil)
	_ quota     = (*Store)(nil)
	_ inventory = (*Store)(nil)
	_ preparer  = (*Store)(nil)
	_ io.Closer = (*Store)(nil)
)

// burst runs do(i) for i in [0, n) on n goroutines released together by
// closing one channel, and returns once all of them are done. Each do must
// write only its own result slot.
func burst(n int, do func(i int)) {
	start := make(chan struct{})
	var wg sync.WaitGroup
	for i := range n {
		wg.Go(func() {
			<-start
			do(i)
		})
	}
	close(start)
	wg.Wait()
}

// oneTo returns 1, 2, …, n: the totals n hits must be answered with.
func oneTo(n int) []int64 {
	s := make([]int64, n)
	for i := range s {
		s[i] = int64(i + 1)
	}
	return s
}

func open(t testing.TB, cfg Config) *Store {
	t.Helper()
	s := New(cfg)
	t.Cleanup(func() { s.Close() })
	return s
}

func TestHitBurst(t *testing.T) {
	tests := []struct {
		strategy string
		n        int
		rounds   int
		holds    bool // every hit counted, every answer distinct
	}{
		{StrategyDefault, 50, 10, true},
		{StrategyAwaitFetch, 10, 5, false},
	}
	for _, tt := range tests {
		t.Run(fmt.Sprintf("%q", tt.strategy), func(t *testing.T) {
			ctx := t.Context()
			s := open(t, Config{Strategy: tt.strategy})
			for round := range tt.rounds {
				slug := fmt.Sprintf("post-%d", round)
				answers := make([]int64, tt.n)
				errs := make([]error, tt.n)
				burst(tt.n, func(i int) {
					answers[i], errs[i] = s.Hit(ctx, slug)
				})
				if err := errors.Join(errs...); err != nil {
					t.Fatalf("round %d: %v", round, err)
				}
				views, err := s.Views(ctx, slug)
				if err != nil {
					t.Fatal(err)
				}
				if !tt.holds {
					// The await opens the gate between read and write, so
					// some of the hits read a total another one is about to
					// overwrite.
					if views >= int64(tt.n) {
						t.Errorf("round %d: views = %d after %d hits, want fewer (lost updates)", round, views, tt.n)
					}
					t.Logf("round %d: %d hits, %d views", round, tt.n, views)
					continue
				}
				if views != int64(tt.n) {
					t.Errorf("round %d: views = %d, want %d", round, views, tt.n)
				}
				slices.Sort(answers)
				if want := oneTo(tt.n); !slices.Equal(answers, want) {
					t.Errorf("round %d: sorted answers = %v, want %v", round, answers, want)
				}
			}
		})
	}
}

func TestConsumeBurst(t *testing.T) {
	const limit, n = 5, 12
	tests := []struct {
		strategy string
		holds    bool
	}{
		{StrategyDefault, true},
		{StrategyAwaitFetch, false},
	}
	for _, tt := range tests {
		t.Run(fmt.Sprintf("%q", tt.strategy), func(t *testing.T) {
			ctx := t.Context()
			s := open(t, Config{Strategy: tt.strategy})
			granted := make([]bool, n)
			errs := make([]error, n)
			burst(n, func(i int) {
				granted[i], _, errs[i] = s.Consume(ctx, "visitor", limit)
			})
			if err := errors.Join(errs...); err != nil {
				t.Fatal(err)
			}
			allowed := int64(0)
			for _, g := range granted {
				if g {
					allowed++
				}
			}
			count, err := s.Count(ctx, "visitor")
			if err != nil {
				t.Fatal(err)
			}
			t.Logf("%d downloads at once: %d granted, %d refused, count %d", n, allowed, n-int(allowed), count)
			if !tt.holds {
				if allowed <= limit {
					t.Errorf("granted %d, want more than the limit of %d", allowed, limit)
				}
				return
			}
			if allowed != limit || count != limit {
				t.Errorf("granted %d, count %d; want %d and %d", allowed, count, limit, limit)
			}
		})
	}
}

func TestCheckoutBurst(t *testing.T) {
	const n = 5
	tests := []struct {
		strategy string
		holds    bool
	}{
		{StrategyDefault, true},
		{StrategyAwaitFetch, false},
	}
	for _, tt := range tests {
		t.Run(fmt.Sprintf("%q", tt.strategy), func(t *testing.T) {
			ctx := t.Context()
			s := open(t, Config{Strategy: tt.strategy})
			won := make([]bool, n)
			errs := make([]error, n)
			burst(n, func(i int) {
				won[i], errs[i] = s.Checkout(ctx, "painting", fmt.Sprintf("buyer-%d", i+1))
			})
			if err := errors.Join(errs...); err != nil {
				t.Fatal(err)
			}
			successes := int64(0)
			for _, w := range won {
				if w {
					successes++
				}
			}
			claims, err := s.Claims(ctx, "painting")
			if err != nil {
				t.Fatal(err)
			}
			t.Logf("%d checkouts at once: %d succeeded, %d claims recorded", n, successes, claims)
			if !tt.holds {
				if successes <= Stock {
					t.Errorf("successes = %d, want more than the stock of %d", successes, Stock)
				}
				return
			}
			if successes != Stock || claims != Stock {
				t.Errorf("successes %d, claims %d; want %d and %d", successes, claims, Stock, Stock)
			}
		})
	}
}

// fakeClock is a settable clock safe for use from many objects at once.
type fakeClock struct {
	mu sync.Mutex
	t  time.Time
}

func (c *fakeClock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.t
}

func (c *fakeClock) Set(t time.Time) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.t = t
}

func TestQuotaDayRollover(t *testing.T) {
	const limit = 5
	type step struct {
		at          string // RFC 3339 instant of the download
		wantGranted bool
		wantCount   int64
	}
	late := step{"2026-03-01T23:59:59Z", false, 5}
	steps := []step{
		{"2026-03-01T09:00:00Z", true, 1},
		{"2026-03-01T09:00:01Z", true, 2},
		{"2026-03-01T09:00:02Z", true, 3},
		{"2026-03-01T09:00:03Z", true, 4},
		{"2026-03-01T12:00:00Z", true, 5},
		{"2026-03-01T12:00:01Z", false, 5},
		late,
		// Midnight UTC: the stored day no longer matches, the count starts over.
		{"2026-03-02T00:00:00Z", true, 1},
		// A later day in another zone is still judged by its UTC date.
		{"2026-03-02T23:30:00-05:00", true, 1},
	}
	for _, strategy := range []string{StrategyDefault, StrategyAwaitFetch} {
		t.Run(fmt.Sprintf("%q", strategy), func(t *testing.T) {
			ctx := t.Context()
			clock := &fakeClock{}
			s := open(t, Config{Strategy: strategy, Now: clock.Now, StorageLatency: -1, FetchLatency: -1})
			for i, st := range steps {
				at, err := time.Parse(time.RFC3339, st.at)
				if err != nil {
					t.Fatal(err)
				}
				clock.Set(at)
				granted, count, err := s.Consume(ctx, "visitor", limit)
				if err != nil {
					t.Fatal(err)
				}
				if granted != st.wantGranted || count != st.wantCount {
					t.Errorf("step %d at %s: got (%t, %d), want (%t, %d)", i, st.at, granted, count, st.wantGranted, st.wantCount)
				}
				got, err := s.Count(ctx, "visitor")
				if err != nil {
					t.Fatal(err)
				}
				if got != st.wantCount {
					t.Errorf("step %d at %s: Count = %d, want %d", i, st.at, got, st.wantCount)
				}
			}
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
			ctx := b.Context()
			b.RunParallel(func(pb *testing.PB) {
				for pb.Next() {
					if _, err := s.Hit(ctx, "slug"); err != nil {
						b.Error(err)
						return
					}
				}
			})
		})
	}
}
