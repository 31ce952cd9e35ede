package redis

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/racelab/racelab/targets/storetest"
)

func strategyName(s string) string {
	if s == "" {
		return "atomic"
	}
	return s
}

// TestFixedStrategiesHold runs every story 10 times at 50 simultaneous
// requests on the strategies that must never lose an update.
//
// Ten rounds, not more: at N=50 a strategy that loses updates shows it in
// (nearly) every round, as the naive one does here in 19 or 20 of 20
// rounds of every story without any think time, so a broken strategy fails
// in the first round or two. N stays 50, past DefaultPoolSize and with
// contention enough to make the optimistic strategy retry hundreds of
// times a round; more rounds only repeated that for a minute.
func TestFixedStrategiesHold(t *testing.T) {
	const rounds, n = 10, 50
	for _, strategy := range []string{StrategyAtomic, StrategyWatch} {
		t.Run(strategyName(strategy), func(t *testing.T) {
			t.Parallel()
			s := testServer.Store(t, Config{Strategy: strategy})
			if err := s.Prepare(t.Context(), n); err != nil {
				t.Fatal(err)
			}
			storetest.Holds(t, s, rounds, n)
			t.Logf("%s: %d retries over %d rounds of each story", strategyName(strategy), s.Retries(), rounds)
		})
	}
}

// naiveThinkTime stands in for the time a deployed service spends between
// its read and its write. On loopback a round trip takes tens of
// microseconds, while under -race on a busy two-core machine the ten
// goroutines of a burst can start up to a hundred microseconds apart; with
// no pause the race then shows in fewer rounds, though still in most when
// the machine is idle.
const naiveThinkTime = 100 * time.Microsecond

// TestNaiveLosesUpdates shows the race the stories are about: a GET then a
// SET from the client loses updates in most rounds of 10 simultaneous
// requests.
func TestNaiveLosesUpdates(t *testing.T) {
	const rounds, n = 40, 10
	s := testServer.Store(t, Config{Strategy: StrategyNaive, ThinkTime: naiveThinkTime})
	if err := s.Prepare(t.Context(), 12); err != nil {
		t.Fatal(err)
	}
	storetest.LosesUpdates(t, s, rounds, n, storetest.Most)
}

// TestQuotaDayRollsOver checks, one request at a time, that the limit
// refuses the sixth download and that a new day starts from zero without
// anyone resetting the key.
func TestQuotaDayRollsOver(t *testing.T) {
	for _, strategy := range Strategies {
		t.Run(strategyName(strategy), func(t *testing.T) {
			clock := &storetest.Clock{}
			storetest.QuotaDayRollsOver(t, testServer.Store(t, Config{Strategy: strategy, Now: clock.Now}), clock)
		})
	}
}

// TestKeysStayUnderPrefixAndExpire checks that every key a strategy writes
// starts with KeyPrefix and carries an expiry.
func TestKeysStayUnderPrefixAndExpire(t *testing.T) {
	for _, strategy := range Strategies {
		t.Run(strategyName(strategy), func(t *testing.T) {
			s := testServer.Store(t, Config{Strategy: strategy})
			ctx := t.Context()
			name := storetest.Key(t, 0)
			if _, err := s.Hit(ctx, name); err != nil {
				t.Fatal(err)
			}
			if _, _, err := s.Consume(ctx, name, storetest.QuotaLimit); err != nil {
				t.Fatal(err)
			}
			if _, err := s.Checkout(ctx, name, "buyer"); err != nil {
				t.Fatal(err)
			}
			keys, err := s.redis().Keys(ctx, "*"+name+"*").Result()
			if err != nil {
				t.Fatal(err)
			}
			if len(keys) != 4 {
				t.Errorf("keys: got %q, want views, quota, claim and claims", keys)
			}
			for _, k := range keys {
				if !strings.HasPrefix(k, KeyPrefix) {
					t.Errorf("key %q lacks prefix %q", k, KeyPrefix)
				}
				ttl, err := s.redis().PTTL(ctx, k).Result()
				if err != nil {
					t.Fatal(err)
				}
				if ttl <= 0 {
					t.Errorf("key %q: got TTL %v, want one", k, ttl)
				}
			}
		})
	}
}

// TestWatchGivesUpAfterMaxAttempts changes the watched key between every
// read and write, so that every attempt fails and the request must end with
// ErrTooManyRetries after exactly MaxAttempts tries.
func TestWatchGivesUpAfterMaxAttempts(t *testing.T) {
	const attempts = 3
	s := testServer.Store(t, Config{Strategy: StrategyWatch, MaxAttempts: attempts})
	ctx := t.Context()
	slug := storetest.Key(t, 0)
	other := testServer.Store(t, Config{})
	s.betweenReadAndWrite = func(ctx context.Context) {
		if _, err := other.Hit(ctx, slug); err != nil {
			t.Error(err)
		}
	}
	_, err := s.Hit(ctx, slug)
	if !errors.Is(err, ErrTooManyRetries) {
		t.Fatalf("got error %v, want ErrTooManyRetries", err)
	}
	if got, want := s.Retries(), int64(attempts-1); got != want {
		t.Errorf("retries: got %d, want %d", got, want)
	}
	views, err := s.Views(ctx, slug)
	if err != nil {
		t.Fatal(err)
	}
	if views != attempts {
		t.Errorf("views: got %d, want %d (only the other client's hits)", views, attempts)
	}
}

// TestPrepareOpensConnections checks that Prepare leaves n open connections
// in the pool, growing it past its starting size when n asks for more.
func TestPrepareOpensConnections(t *testing.T) {
	for _, n := range []int{4, DefaultPoolSize, 50} {
		t.Run(fmt.Sprint(n), func(t *testing.T) {
			s := testServer.Store(t, Config{})
			if err := s.Prepare(t.Context(), n); err != nil {
				t.Fatal(err)
			}
			if got := int64(s.redis().PoolStats().TotalConns); got < int64(n) {
				t.Errorf("open connections: got %d, want at least %d", got, n)
			}
		})
	}
}

func TestOpenFailsFastWhenServerIsDown(t *testing.T) {
	addr := storetest.ClosedAddr(t)
	ctx, cancel := context.WithTimeout(t.Context(), 10*time.Second)
	defer cancel()
	_, err := Open(ctx, Config{URL: "redis://" + addr + "/0"})
	if err == nil {
		t.Fatal("open: got no error")
	}
	if got, want := err.Error(), "redis at "+addr+": connection refused"; got != want {
		t.Errorf("error: got %q, want %q", got, want)
	}
	if !errors.Is(err, ErrUnreachable) {
		t.Errorf("error %v does not wrap ErrUnreachable", err)
	}
}

func TestOpenRejectsUnknownStrategy(t *testing.T) {
	_, err := Open(t.Context(), Config{Strategy: "optimistic"})
	if err == nil || !strings.Contains(err.Error(), `unknown redis strategy "optimistic"`) {
		t.Errorf("got %v, want an unknown strategy error", err)
	}
}

// BenchmarkHit measures one view hit per strategy, all goroutines on one
// slug, as in the story.
func BenchmarkHit(b *testing.B) {
	for _, strategy := range Strategies {
		b.Run(strategyName(strategy), func(b *testing.B) {
			s := testServer.Store(b, Config{Strategy: strategy})
			ctx := context.Background()
			slug := storetest.Key(b, 0)
			b.RunParallel(func(pb *testing.PB) {
				for pb.Next() {
					if _, err := s.Hit(ctx, slug); err != nil {
						b.Error(err)
						return
					}
				}
			})
		})
	}
}

// TestHoldingStrategiesAnswerEveryRequest runs every story at its own N
// (10 hits, 12 downloads, 5 checkouts), 20 rounds each, on every strategy
// expected to hold, both at once, and fails if a single request errored: a
// WATCH transaction that gives up its retries while others commit proves
// nothing, and would pass a check that looks only at the requests that
// answered.
func TestHoldingStrategiesAnswerEveryRequest(t *testing.T) {
	const rounds = 20
	for _, strategy := range []string{StrategyAtomic, StrategyWatch} {
		t.Run(strategyName(strategy), func(t *testing.T) {
			t.Parallel()
			s := testServer.Store(t, Config{Strategy: strategy})
			if err := s.Prepare(t.Context(), storetest.QuotaN); err != nil {
				t.Fatal(err)
			}
			storetest.AnswersEveryRequest(t, s, rounds)
		})
	}
}

// TestWatchRetriesUntilDeadline changes the watched key under every attempt
// of one request, with no MaxAttempts: the request must keep retrying,
// counting each retry, until its context's deadline, and then say so.
func TestWatchRetriesUntilDeadline(t *testing.T) {
	const deadline = 300 * time.Millisecond
	s := testServer.Store(t, Config{Strategy: StrategyWatch})
	slug := storetest.Key(t, 0)
	other := testServer.Store(t, Config{})
	s.betweenReadAndWrite = func(ctx context.Context) {
		if _, err := other.Hit(context.WithoutCancel(ctx), slug); err != nil {
			t.Error(err)
		}
	}
	ctx, cancel := context.WithTimeout(t.Context(), deadline)
	defer cancel()
	start := time.Now()
	_, err := s.Hit(ctx, slug)
	took := time.Since(start)
	// Retrying stops at the deadline: in the wait, or before a wait that
	// would outlast it (ErrTooManyRetries), or in a command the deadline
	// cut short (whatever the driver says then, and maybe a moment
	// before ctx's own timer has fired).
	if end, _ := ctx.Deadline(); !errors.Is(err, ErrTooManyRetries) && (err == nil || time.Now().Before(end)) {
		t.Fatalf("got error %v, want the request ended by its deadline", err)
	}
	if retries := s.Retries(); retries < 5 {
		t.Errorf("retries: got %d in %v, want it to keep retrying until the deadline", retries, took)
	}
	if took < deadline-50*time.Millisecond || took > deadline+time.Second {
		t.Errorf("gave up after %v, want about %v (the deadline)", took, deadline)
	}
}
