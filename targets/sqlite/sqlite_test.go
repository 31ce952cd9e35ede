package sqlite

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"testing"
	"time"

	"go.uber.org/goleak"

	"github.com/racelab/racelab/targets/storetest"
)

func TestMain(m *testing.M) {
	goleak.VerifyTestMain(m)
}

// A Store must keep fitting racelab's story interfaces.
var _ storetest.Local = (*Store)(nil)

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

func TestHitAtomic(t *testing.T) {
	const n = 50
	rounds := 200
	if raceDetector {
		// Every write is CPU work inside the instrumented engine, and fifty
		// writers queue for one write lock through SQLite's busy handler,
		// whose back-off sleeps leave the lock idle between them: 200
		// rounds take close to a minute on two cores. Fewer rounds still
		// race fifty goroutines, now with the detector watching, and are
		// enough to catch a strategy that loses updates: at N=50 the naive
		// one shows it in every round (10 of 10, with or without its think
		// time), so a broken atomic strategy fails in the first round.
		rounds = 10
	}
	storetest.CounterExact(t, open(t, Config{}, n), rounds, n)
}

func TestHitNaive(t *testing.T) {
	const rounds, n = 50, 10
	// Most, not all: the race depends on the scheduler, which is the point.
	storetest.CounterLoses(t, open(t, Config{Strategy: StrategyNaive}, n), rounds, n, storetest.Most)
}

// TestQuotaAndInventoryBursts runs the quota's and the inventory's bursts,
// at their stories' N, on both strategies: the atomic one gives the exact
// outcome, and the naive one loses updates in some of the rounds.
func TestQuotaAndInventoryBursts(t *testing.T) {
	const rounds = 20
	atomic, naive := Config{Strategy: StrategyAtomic}, Config{Strategy: StrategyNaive}
	tests := []struct {
		story string
		cfg   Config
		n     int
		check func(tb testing.TB, s *Store, n int)
	}{
		{"consume", atomic, storetest.QuotaN, func(tb testing.TB, s *Store, n int) { storetest.QuotaExact(tb, s, rounds, n) }},
		{"consume", naive, storetest.QuotaN, func(tb testing.TB, s *Store, n int) {
			storetest.QuotaLoses(tb, s, rounds, n, storetest.Some)
		}},
		{"checkout", atomic, storetest.InventoryN, func(tb testing.TB, s *Store, n int) { storetest.InventoryExact(tb, s, rounds, n) }},
		{"checkout", naive, storetest.InventoryN, func(tb testing.TB, s *Store, n int) {
			storetest.InventoryLoses(tb, s, rounds, n, storetest.Some)
		}},
	}
	for _, tt := range tests {
		t.Run(fmt.Sprintf("%s/%q", tt.story, tt.cfg.Strategy), func(t *testing.T) { tt.check(t, open(t, tt.cfg, tt.n), tt.n) })
	}
}

func TestQuotaDayRollover(t *testing.T) {
	// The shared day, and a second download on the later day.
	steps := append(storetest.DaySteps(), storetest.DayStep{At: "2026-03-03T04:40:00Z", Granted: true, Count: 2})
	for _, strategy := range []string{StrategyAtomic, StrategyNaive} {
		t.Run(fmt.Sprintf("%q", strategy), func(t *testing.T) {
			clock := &storetest.Clock{}
			s := open(t, Config{Strategy: strategy, Now: clock.Now, ThinkTime: -1}, 1)
			storetest.QuotaDays(t, s, clock, steps)
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
			b.SetParallelism(2) // a few goroutines per core, like a small burst
			storetest.ParallelHits(b, s, "post")
		})
	}
}

// TestLimitsAtTheEdge: every limit the store keeps grants exactly its
// limit, one request at a time, and refuses the one past it uncounted,
// for limits of 1, 2 and 5, on both strategies.
func TestLimitsAtTheEdge(t *testing.T) {
	for _, strategy := range []string{StrategyAtomic, StrategyNaive} {
		t.Run(storetest.StrategyName(strategy), func(t *testing.T) {
			storetest.LimitsAtTheEdge(t, open(t, Config{Strategy: strategy}, 1))
		})
	}
}

// TestWALStaysBounded: under writes from many connections at once, as
// serve makes them, the write-ahead log is checkpointed and truncated:
// once the writes stop, the log file shrinks to at most walLimit, where
// SQLite's own checkpoints left it growing (84 MB after 20,000 hits).
func TestWALStaysBounded(t *testing.T) {
	const writers, hits = 16, 400
	path := filepath.Join(t.TempDir(), "db.sqlite")
	s := open(t, Config{Path: path, CheckpointEvery: 50 * time.Millisecond}, writers)
	hitFromWriters(t, s, writers, hits, 50)
	wal := path + "-wal"
	var size int64
	for range 200 { // up to 10 s: the checkpointer ticks every 50 ms
		fi, err := os.Stat(wal)
		if err != nil {
			t.Fatal(err)
		}
		if size = fi.Size(); size <= walLimit {
			break
		}
		time.Sleep(50 * time.Millisecond)
	}
	if size > walLimit {
		t.Errorf("the WAL is %d bytes after %d hits, want it checkpointed down to %d at most", size, writers*hits, walLimit)
	}
	if n, err := s.Views(t.Context(), "slug-0-0"); err != nil || n != hits/50 {
		t.Errorf("views of slug-0-0 after the checkpoints = %d, %v; want %d", n, err, hits/50)
	}
}
