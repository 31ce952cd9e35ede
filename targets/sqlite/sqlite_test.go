package sqlite

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
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

// open opens a store for the test, ready for bursts of n, and closes it when
// the test ends.
func open(t testing.TB, cfg Config, n int) *Store {
	t.Helper()
	s, err := Open(context.Background(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := s.Close(); err != nil {
			t.Error(err)
		}
	})
	if err := s.Prepare(context.Background(), n); err != nil {
		t.Fatal(err)
	}
	return s
}

// oneTo returns 1, 2, …, n: the totals n hits must be answered with.
func oneTo(n int) []int64 {
	s := make([]int64, n)
	for i := range s {
		s[i] = int64(i + 1)
	}
	return s
}

// count reports how many of bs are true.
func count(bs []bool) int64 {
	n := int64(0)
	for _, b := range bs {
		if b {
			n++
		}
	}
	return n
}

// hitRounds fires rounds bursts of n hits at fresh slugs and returns the
// views each round left. Every request must succeed: a "database is
// locked" fails the test. When exact, every round must also have been
// answered 1..n.
func hitRounds(t *testing.T, s *Store, rounds, n int, exact bool) []int64 {
	t.Helper()
	ctx := t.Context()
	views := make([]int64, rounds)
	for round := range rounds {
		slug := fmt.Sprintf("post-%d", round)
		answers := make([]int64, n)
		errs := make([]error, n)
		burst(n, func(i int) {
			answers[i], errs[i] = s.Hit(ctx, slug)
		})
		if err := errors.Join(errs...); err != nil {
			t.Fatalf("round %d: %v", round, err)
		}
		v, err := s.Views(ctx, slug)
		if err != nil {
			t.Fatal(err)
		}
		views[round] = v
		if exact {
			slices.Sort(answers)
			if want := oneTo(n); !slices.Equal(answers, want) {
				t.Fatalf("round %d: sorted answers = %v, want %v", round, answers, want)
			}
		}
	}
	return views
}

// spread describes a sample as min/median/max.
func spread(xs []int64) string {
	s := slices.Clone(xs)
	slices.Sort(s)
	return fmt.Sprintf("min %d, median %d, max %d", s[0], s[len(s)/2], s[len(s)-1])
}

func TestHitAtomic(t *testing.T) {
	const n = 50
	rounds := 200
	if raceDetector {
		// Every write is CPU work inside the instrumented engine, and fifty
		// writers queue for one write lock through SQLite's busy handler,
		// whose back-off sleeps leave the lock idle between them: 200
		// rounds take close to a minute on two cores. Fewer rounds still
		// race fifty goroutines, now with the detector watching.
		rounds = 40
	}
	s := open(t, Config{}, n)
	views := hitRounds(t, s, rounds, n, true)
	for round, v := range views {
		if v != n {
			t.Errorf("round %d: views = %d, want %d", round, v, n)
		}
	}
}

func TestHitNaive(t *testing.T) {
	const rounds, n = 50, 10
	s := open(t, Config{Strategy: StrategyNaive}, n)
	views := hitRounds(t, s, rounds, n, false)
	lost := 0
	for _, v := range views {
		if v < n {
			lost++
		}
	}
	t.Logf("%d hits at once, %d rounds: views %s; lost hits in %d rounds", n, rounds, spread(views), lost)
	// Most, not all: the race depends on the scheduler, which is the point.
	if lost <= rounds/2 {
		t.Errorf("lost hits in %d of %d rounds, want most", lost, rounds)
	}
}

func TestConsumeBurst(t *testing.T) {
	const limit, n, rounds = 5, 12, 20
	tests := []struct {
		strategy string
		holds    bool
	}{
		{StrategyAtomic, true},
		{StrategyNaive, false},
	}
	for _, tt := range tests {
		t.Run(fmt.Sprintf("%q", tt.strategy), func(t *testing.T) {
			ctx := t.Context()
			s := open(t, Config{Strategy: tt.strategy}, n)
			broken := 0
			for round := range rounds {
				visitor := fmt.Sprintf("visitor-%d", round)
				granted := make([]bool, n)
				errs := make([]error, n)
				burst(n, func(i int) {
					granted[i], _, errs[i] = s.Consume(ctx, visitor, limit)
				})
				if err := errors.Join(errs...); err != nil {
					t.Fatalf("round %d: %v", round, err)
				}
				allowed := count(granted)
				stored, err := s.Count(ctx, visitor)
				if err != nil {
					t.Fatal(err)
				}
				if allowed > limit || stored != allowed {
					broken++
				}
				if tt.holds && (allowed != limit || stored != limit) {
					t.Errorf("round %d: granted %d, count %d; want %d and %d", round, allowed, stored, limit, limit)
				}
				if round == 0 {
					t.Logf("%d downloads at once: %d granted, %d refused, count %d", n, allowed, int64(n)-allowed, stored)
				}
			}
			if !tt.holds && broken == 0 {
				t.Errorf("the quota held in all %d rounds, want it broken in some", rounds)
			}
			t.Logf("rule broken in %d of %d rounds", broken, rounds)
		})
	}
}

func TestCheckoutBurst(t *testing.T) {
	const n, rounds = 5, 20
	tests := []struct {
		strategy string
		holds    bool
	}{
		{StrategyAtomic, true},
		{StrategyNaive, false},
	}
	for _, tt := range tests {
		t.Run(fmt.Sprintf("%q", tt.strategy), func(t *testing.T) {
			ctx := t.Context()
			s := open(t, Config{Strategy: tt.strategy}, n)
			broken := 0
			for round := range rounds {
				item := fmt.Sprintf("painting-%d", round)
				won := make([]bool, n)
				errs := make([]error, n)
				burst(n, func(i int) {
					won[i], errs[i] = s.Checkout(ctx, item, fmt.Sprintf("buyer-%d", i+1))
				})
				if err := errors.Join(errs...); err != nil {
					t.Fatalf("round %d: %v", round, err)
				}
				successes := count(won)
				claims, err := s.Claims(ctx, item)
				if err != nil {
					t.Fatal(err)
				}
				if successes > Stock || claims != successes {
					broken++
				}
				if tt.holds && (successes != Stock || claims != Stock) {
					t.Errorf("round %d: successes %d, claims %d; want %d and %d", round, successes, claims, Stock, Stock)
				}
				if round == 0 {
					t.Logf("%d checkouts at once: %d succeeded, %d claims recorded", n, successes, claims)
				}
			}
			if !tt.holds && broken == 0 {
				t.Errorf("the item was sold once in all %d rounds, want oversold in some", rounds)
			}
			t.Logf("rule broken in %d of %d rounds", broken, rounds)
		})
	}
}

// fakeClock is a settable clock safe for use from many requests at once.
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
	steps := []struct {
		at          string // RFC 3339 instant of the download
		wantGranted bool
		wantCount   int64
	}{
		{"2026-03-01T09:00:00Z", true, 1},
		{"2026-03-01T09:00:01Z", true, 2},
		{"2026-03-01T09:00:02Z", true, 3},
		{"2026-03-01T09:00:03Z", true, 4},
		{"2026-03-01T12:00:00Z", true, 5},
		{"2026-03-01T12:00:01Z", false, 5},
		{"2026-03-01T23:59:59Z", false, 5},
		// Midnight UTC: the stored day no longer matches, the count starts over.
		{"2026-03-02T00:00:00Z", true, 1},
		// A later day in another zone is still judged by its UTC date.
		{"2026-03-02T23:30:00-05:00", true, 1},
		{"2026-03-03T04:40:00Z", true, 2},
	}
	for _, strategy := range []string{StrategyAtomic, StrategyNaive} {
		t.Run(fmt.Sprintf("%q", strategy), func(t *testing.T) {
			ctx := t.Context()
			clock := &fakeClock{}
			s := open(t, Config{Strategy: strategy, Now: clock.Now, ThinkTime: -1}, 1)
			for i, st := range steps {
				at, err := time.Parse(time.RFC3339, st.at)
				if err != nil {
					t.Fatal(err)
				}
				clock.Set(at)
				granted, n, err := s.Consume(ctx, "visitor", limit)
				if err != nil {
					t.Fatal(err)
				}
				if granted != st.wantGranted || n != st.wantCount {
					t.Errorf("step %d at %s: got (%t, %d), want (%t, %d)", i, st.at, granted, n, st.wantGranted, st.wantCount)
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

func TestConsumeZeroLimit(t *testing.T) {
	for _, strategy := range []string{StrategyAtomic, StrategyNaive} {
		t.Run(fmt.Sprintf("%q", strategy), func(t *testing.T) {
			s := open(t, Config{Strategy: strategy, ThinkTime: -1}, 1)
			granted, n, err := s.Consume(t.Context(), "visitor", 0)
			if err != nil {
				t.Fatal(err)
			}
			if granted || n != 0 {
				t.Errorf("got (%t, %d), want (false, 0)", granted, n)
			}
		})
	}
}

func TestOpenPath(t *testing.T) {
	ctx := t.Context()
	// A name SQLite's URI syntax would misread if it were not escaped.
	path := filepath.Join(t.TempDir(), "odd ?#% name.db")
	for want := int64(1); want <= 2; want++ {
		s, err := Open(ctx, Config{Path: path})
		if err != nil {
			t.Fatal(err)
		}
		got, err := s.Hit(ctx, "post")
		if err != nil {
			t.Fatal(err)
		}
		if got != want {
			t.Errorf("open %d: Hit = %d, want %d (kept across opens)", want, got, want)
		}
		if err := s.Close(); err != nil {
			t.Fatal(err)
		}
		if _, err := os.Stat(path); err != nil {
			t.Fatalf("the named file after Close: %v", err)
		}
	}
}

func TestCloseRemovesTemporaryFolder(t *testing.T) {
	s, err := Open(t.Context(), Config{})
	if err != nil {
		t.Fatal(err)
	}
	dir := s.dir
	if _, err := os.Stat(dir); err != nil {
		t.Fatalf("temporary folder while open: %v", err)
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(dir); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("temporary folder after Close: err = %v, want not exist", err)
	}
	if _, err := s.Hit(t.Context(), "post"); !errors.Is(err, ErrClosed) {
		t.Errorf("Hit after Close: err = %v, want ErrClosed", err)
	}
	if err := s.Prepare(t.Context(), 1); !errors.Is(err, ErrClosed) {
		t.Errorf("Prepare after Close: err = %v, want ErrClosed", err)
	}
	if err := s.Close(); err != nil {
		t.Errorf("second Close: %v", err)
	}
}

func TestOpenUnknownStrategy(t *testing.T) {
	s, err := Open(t.Context(), Config{Strategy: "optimistic"})
	if err == nil {
		s.Close()
		t.Fatal("Open with an unknown strategy succeeded")
	}
}

func TestPrepare(t *testing.T) {
	s := open(t, Config{}, 8)
	if got := s.db.Stats().OpenConnections; got < 8 {
		t.Errorf("open connections after Prepare(8) = %d, want at least 8", got)
	}
	// A smaller burst later must not shrink the pool.
	if err := s.Prepare(t.Context(), 3); err != nil {
		t.Fatal(err)
	}
	if got := s.db.Stats().Idle; got < 8 {
		t.Errorf("idle connections after Prepare(3) = %d, want at least 8", got)
	}
}

func BenchmarkHit(b *testing.B) {
	for _, strategy := range []string{StrategyAtomic, StrategyNaive} {
		// No think time: this measures the statements, not the sleep.
		b.Run(fmt.Sprintf("strategy=%q", strategy), func(b *testing.B) {
			s := open(b, Config{Strategy: strategy, ThinkTime: -1}, 8)
			ctx := b.Context()
			b.SetParallelism(2) // a few goroutines per core, like a small burst
			b.RunParallel(func(pb *testing.PB) {
				for pb.Next() {
					if _, err := s.Hit(ctx, "post"); err != nil {
						b.Error(err)
						return
					}
				}
			})
		})
	}
}
