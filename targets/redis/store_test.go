package redis

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync/atomic"
	"testing"
	"time"
)

// quotaLimit is the story's five downloads a day.
const quotaLimit = 5

// outcome is what one burst on fresh keys came to: what the requests were
// told, and what the store holds afterwards.
type outcome struct {
	Allowed  int64 // yes answers: hits counted, downloads granted, checkouts won
	Refused  int64 // no answers
	Counted  int64 // what the store holds: views, the quota count, the claims
	Distinct bool  // every answer differs from the others (the counter's totals)
}

// story is one scenario's burst, run against a store on fresh keys.
type story struct {
	name  string
	n     int
	burst func(ctx context.Context, s *Store, key string, n int) (outcome, error)
	// want is the outcome of a strategy that holds.
	want outcome
	// raced says whether an outcome shows the lost update.
	raced func(outcome) bool
}

func counterBurst(ctx context.Context, s *Store, slug string, n int) (outcome, error) {
	type answer struct {
		total int64
		err   error
	}
	answers := burst(n, func(int) answer {
		total, err := s.Hit(ctx, slug)
		return answer{total, err}
	})
	var o outcome
	seen := map[int64]bool{}
	for _, a := range answers {
		if a.err != nil {
			return o, a.err
		}
		o.Allowed++
		seen[a.total] = true
	}
	o.Distinct = len(seen) == n
	var err error
	o.Counted, err = s.Views(ctx, slug)
	return o, err
}

func quotaBurst(ctx context.Context, s *Store, visitor string, n int) (outcome, error) {
	type answer struct {
		granted bool
		err     error
	}
	answers := burst(n, func(int) answer {
		granted, _, err := s.Consume(ctx, visitor, quotaLimit)
		return answer{granted, err}
	})
	var o outcome
	for _, a := range answers {
		switch {
		case a.err != nil:
			return o, a.err
		case a.granted:
			o.Allowed++
		default:
			o.Refused++
		}
	}
	var err error
	o.Counted, err = s.Count(ctx, visitor)
	return o, err
}

func inventoryBurst(ctx context.Context, s *Store, item string, n int) (outcome, error) {
	type answer struct {
		won bool
		err error
	}
	answers := burst(n, func(i int) answer {
		won, err := s.Checkout(ctx, item, fmt.Sprintf("buyer-%d", i))
		return answer{won, err}
	})
	var o outcome
	for _, a := range answers {
		switch {
		case a.err != nil:
			return o, a.err
		case a.won:
			o.Allowed++
		default:
			o.Refused++
		}
	}
	var err error
	o.Counted, err = s.Claims(ctx, item)
	return o, err
}

// stories returns the three stories at n simultaneous requests (the quota
// also at 12, its story's figure).
func stories(n int) []story {
	return []story{
		{
			name: "counter", n: n, burst: counterBurst,
			want:  outcome{Allowed: int64(n), Counted: int64(n), Distinct: true},
			raced: func(o outcome) bool { return o.Counted < o.Allowed || !o.Distinct },
		},
		{
			name: "quota-12", n: 12, burst: quotaBurst,
			want:  outcome{Allowed: 5, Refused: 7, Counted: 5},
			raced: func(o outcome) bool { return o.Allowed > quotaLimit || o.Counted != o.Allowed },
		},
		{
			name: fmt.Sprintf("quota-%d", n), n: n, burst: quotaBurst,
			want:  outcome{Allowed: 5, Refused: int64(n) - 5, Counted: 5},
			raced: func(o outcome) bool { return o.Allowed > quotaLimit || o.Counted != o.Allowed },
		},
		{
			name: "inventory", n: n, burst: inventoryBurst,
			want:  outcome{Allowed: 1, Refused: int64(n) - 1, Counted: 1},
			raced: func(o outcome) bool { return o.Allowed > 1 || o.Counted != o.Allowed },
		},
	}
}

func strategyName(s string) string {
	if s == "" {
		return "atomic"
	}
	return s
}

// TestFixedStrategiesHold runs every story 100 times at 50 simultaneous
// requests on the strategies that must never lose an update.
func TestFixedStrategiesHold(t *testing.T) {
	const rounds, n = 100, 50
	for _, strategy := range []string{StrategyAtomic, StrategyWatch} {
		t.Run(strategyName(strategy), func(t *testing.T) {
			t.Parallel()
			s := openStore(t, Config{Strategy: strategy})
			ctx := t.Context()
			if err := s.Prepare(ctx, n); err != nil {
				t.Fatal(err)
			}
			for _, st := range stories(n) {
				t.Run(st.name, func(t *testing.T) {
					for round := range rounds {
						got, err := st.burst(ctx, s, freshKey(t, round), st.n)
						if err != nil {
							t.Fatalf("round %d: %v", round+1, err)
						}
						if got != st.want {
							t.Fatalf("round %d of %d at N=%d: got %+v, want %+v", round+1, rounds, st.n, got, st.want)
						}
					}
				})
			}
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
	s := openStore(t, Config{Strategy: StrategyNaive, ThinkTime: naiveThinkTime})
	ctx := t.Context()
	if err := s.Prepare(ctx, 12); err != nil {
		t.Fatal(err)
	}
	for _, st := range stories(n) {
		if st.n != n {
			continue
		}
		t.Run(st.name, func(t *testing.T) {
			raced := 0
			var example outcome
			for round := range rounds {
				got, err := st.burst(ctx, s, freshKey(t, round), st.n)
				if err != nil {
					t.Fatalf("round %d: %v", round+1, err)
				}
				if st.raced(got) {
					raced++
					example = got
				}
			}
			t.Logf("race showed in %d of %d rounds at N=%d (e.g. %+v)", raced, rounds, n, example)
			if raced <= rounds/2 {
				t.Errorf("race showed in %d of %d rounds at N=%d, want most", raced, rounds, n)
			}
		})
	}
}

// TestQuotaDayRollsOver checks, one request at a time, that the limit
// refuses the sixth download and that a new day starts from zero without
// anyone resetting the key.
func TestQuotaDayRollsOver(t *testing.T) {
	for _, strategy := range Strategies {
		t.Run(strategyName(strategy), func(t *testing.T) {
			var now atomic.Pointer[time.Time]
			day1 := time.Date(2026, 5, 20, 23, 59, 0, 0, time.UTC)
			now.Store(&day1)
			s := openStore(t, Config{Strategy: strategy, Now: func() time.Time { return *now.Load() }})
			ctx := t.Context()
			visitor := freshKey(t, 0)

			type answer struct {
				Granted bool
				Count   int64
			}
			var got []answer
			for range 6 {
				g, c, err := s.Consume(ctx, visitor, quotaLimit)
				if err != nil {
					t.Fatal(err)
				}
				got = append(got, answer{g, c})
			}
			day2 := day1.Add(2 * time.Minute)
			now.Store(&day2)
			g, c, err := s.Consume(ctx, visitor, quotaLimit)
			if err != nil {
				t.Fatal(err)
			}
			got = append(got, answer{g, c})
			count, err := s.Count(ctx, visitor)
			if err != nil {
				t.Fatal(err)
			}

			want := []answer{{true, 1}, {true, 2}, {true, 3}, {true, 4}, {true, 5}, {false, 5}, {true, 1}}
			if fmt.Sprint(got) != fmt.Sprint(want) {
				t.Errorf("answers: got %v, want %v", got, want)
			}
			if count != 1 {
				t.Errorf("count on day 2: got %d, want 1", count)
			}
		})
	}
}

// TestKeysStayUnderPrefixAndExpire checks that every key a strategy writes
// starts with KeyPrefix and carries an expiry.
func TestKeysStayUnderPrefixAndExpire(t *testing.T) {
	for _, strategy := range Strategies {
		t.Run(strategyName(strategy), func(t *testing.T) {
			s := openStore(t, Config{Strategy: strategy})
			ctx := t.Context()
			name := freshKey(t, 0)
			if _, err := s.Hit(ctx, name); err != nil {
				t.Fatal(err)
			}
			if _, _, err := s.Consume(ctx, name, quotaLimit); err != nil {
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
	s := openStore(t, Config{Strategy: StrategyWatch, MaxAttempts: attempts})
	ctx := t.Context()
	slug := freshKey(t, 0)
	other := openStore(t, Config{})
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
			s := openStore(t, Config{})
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
	addr := closedAddr(t)
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
			s := openStore(b, Config{Strategy: strategy})
			ctx := context.Background()
			slug := freshKey(b, 0)
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
