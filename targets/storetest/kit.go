package storetest

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"io"
	"strings"
	"testing"
	"time"

	"github.com/racelab/racelab/targets/clock"
	"github.com/racelab/racelab/targets/internal/server"
	stories "github.com/racelab/racelab/targets/story"
)

// ServerStore is a store on a real server that readies its connections
// before a burst and counts the retries of its optimistic strategy.
type ServerStore interface {
	Store
	Plans
	Preparer
	Retrier
	io.Closer
	// Clean deletes what the stories keep for a key (targets.Cleaner).
	Clean(ctx context.Context, key string) error
}

// Kit is what the checks every real-server store package (redis,
// postgres) runs need to know of that package, so that each check is
// written once. The tests named after each method stay in the package,
// under the package's own names.
type Kit[S ServerStore] struct {
	// Name is how the package's errors name the server: "redis".
	Name string
	// Strategies are all the package's strategies; Holding those that must
	// never lose an update; Naive the one that does; Optimistic the one that
	// retries when another request got there first.
	Strategies []string
	Holding    []string
	Naive      string
	Optimistic string
	// EnvVar names the test server's URL, e.g. RACELAB_REDIS_URL, and
	// DefaultURL is the one .ci/services starts, used when EnvVar is unset.
	EnvVar, DefaultURL string
	// Open is the package's Open.
	Open func(ctx context.Context, cfg Config) (S, error)
	// URL is the package's URL for a server at addr.
	URL func(addr string) string
	// Conns is how many connections s's pool holds open.
	Conns func(s S) int64
	// BetweenReadAndWrite is s's hook run between the read and the write of
	// an optimistic attempt.
	BetweenReadAndWrite func(s S) *func(ctx context.Context)
	// DefaultPoolSize is the pool's size before Prepare grows it.
	DefaultPoolSize int
	// Unreachable is the package's sentinel for a server that does not
	// answer. (Its retries end in server.ErrTooManyRetries, which every
	// server store's ErrTooManyRetries is.)
	Unreachable error
	// CleanScoped is the package's CleanScoped, and Leftovers counts what
	// s's server still holds for key (keys, rows), read around the store.
	CleanScoped func(ctx context.Context, cfg Config, scope server.CleanScope) (removed, kept int64, err error)
	Leftovers   func(ctx context.Context, s S, key string) (int64, error)
}

// Server is the kit's test server. Server().Store(t, cfg) opens a store on
// it, closed when the test ends, and skips the test when the server does
// not answer, except under CI=true, where it fails it.
func (k Kit[S]) Server() Server[Config, S] {
	return Server[Config, S]{
		EnvVar:      k.EnvVar,
		DefaultURL:  k.DefaultURL,
		Unreachable: k.Unreachable,
		Open: func(ctx context.Context, url string, cfg Config) (S, error) {
			cfg.URL = url
			return k.Open(ctx, cfg)
		},
	}
}

// Config is the configuration of a store on a real server, the same type
// in every such package.
type Config = server.Config

// StrategyName names strategy in a subtest: "" is "atomic", the default.
func StrategyName(strategy string) string {
	if strategy == "" {
		return "atomic"
	}
	return strategy
}

// eachStrategy runs test on a store of each strategy, as parallel subtests
// when parallel is set.
func (k Kit[S]) eachStrategy(t *testing.T, strategies []string, parallel bool, test func(t *testing.T, strategy string)) {
	t.Helper()
	for _, strategy := range strategies {
		t.Run(StrategyName(strategy), func(t *testing.T) {
			if parallel {
				t.Parallel()
			}
			test(t, strategy)
		})
	}
}

// prepared opens a store of strategy and readies it for n requests at once.
func (k Kit[S]) prepared(t *testing.T, cfg Config, n int) S {
	t.Helper()
	s := k.Server().Store(t, cfg)
	if err := s.Prepare(t.Context(), n); err != nil {
		t.Fatal(err)
	}
	return s
}

// FixedStrategiesHold runs every story 10 times at 50 simultaneous requests
// on each Holding strategy, in parallel.
//
// Ten rounds, not more: at N=50 a strategy that loses updates shows it in
// (nearly) every round, as the naive one does in 19 or 20 of 20 rounds of
// every story without any think time, so a broken strategy fails in the
// first round or two. N stays 50, past the pools' default sizes and with
// contention enough to make the optimistic strategy retry hundreds of times
// a round; more rounds only repeated that for a minute.
func (k Kit[S]) FixedStrategiesHold(t *testing.T) {
	const rounds, n = 10, 50
	k.eachStrategy(t, k.Holding, true, func(t *testing.T, strategy string) {
		s := k.prepared(t, Config{Strategy: strategy}, n)
		Holds(t, s, rounds, n)
		t.Logf("%s: %d retries over %d rounds of each story", StrategyName(strategy), s.Retries(), rounds)
	})
}

// NaiveThinkTime stands in for the time a deployed service spends between
// its read and its write. On loopback a round trip takes tens of
// microseconds, while under -race on a busy two-core machine the ten
// goroutines of a burst can start up to a hundred microseconds apart; with
// no pause the race then shows in fewer rounds, though still in most when
// the machine is idle.
const NaiveThinkTime = 100 * time.Microsecond

// NaiveLosesUpdates shows the race the stories are about on the Naive
// strategy: it loses updates in most rounds of 10 simultaneous requests.
func (k Kit[S]) NaiveLosesUpdates(t *testing.T) {
	const rounds, n = 40, 10
	s := k.prepared(t, Config{Strategy: k.Naive, ThinkTime: NaiveThinkTime}, QuotaN)
	LosesUpdates(t, s, rounds, n, Most)
}

// QuotaDayRollsOver runs QuotaDayRollsOver on every strategy.
func (k Kit[S]) QuotaDayRollsOver(t *testing.T) {
	k.eachStrategy(t, k.Strategies, false, func(t *testing.T, strategy string) {
		clock := &Clock{}
		QuotaDayRollsOver(t, k.Server().Store(t, Config{Strategy: strategy, Now: clock.Now}), clock)
	})
}

// PlansStart is where the plan checks' virtual clocks start: a fixed
// morning, far from midnight UTC.
var PlansStart = time.Date(2026, time.March, 14, 9, 0, 0, 0, time.UTC)

// PlansHold runs PlansExact, 5 rounds of bursts of PlansN, on every
// Holding strategy in parallel.
func (k Kit[S]) PlansHold(t *testing.T) {
	const rounds = 5
	k.eachStrategy(t, k.Holding, true, func(t *testing.T, strategy string) {
		PlansExact(t, k.prepared(t, Config{Strategy: strategy}, PlansN), rounds)
	})
}

// NaivePlansStale runs PlansStale on the Naive strategy in virtual time,
// with the default plan cache and with a short one.
func (k Kit[S]) NaivePlansStale(t *testing.T) {
	for _, ttl := range []time.Duration{0, 2 * time.Second} {
		t.Run(fmt.Sprint(ttl), func(t *testing.T) {
			v := clock.NewVirtual(PlansStart)
			s := k.Server().Store(t, Config{Strategy: k.Naive, Clock: v, PlanCacheTTL: ttl})
			PlansStale(t, s, v, cmp.Or(ttl, stories.PlanCacheTTL))
		})
	}
}

// PlansDayRollsOver runs PlansDayRollsOver on every strategy in virtual
// time.
func (k Kit[S]) PlansDayRollsOver(t *testing.T) {
	k.eachStrategy(t, k.Strategies, false, func(t *testing.T, strategy string) {
		v := clock.NewVirtual(PlansStart)
		PlansDayRollsOver(t, k.Server().Store(t, Config{Strategy: strategy, Clock: v}), v)
	})
}

// EachStrategy runs test on a store of each strategy, as subtests.
func (k Kit[S]) EachStrategy(t *testing.T, test func(t *testing.T, s S)) {
	k.eachStrategy(t, k.Strategies, false, func(t *testing.T, strategy string) {
		test(t, k.Server().Store(t, Config{Strategy: strategy}))
	})
}

// contended opens a store of the Optimistic strategy with maxAttempts and
// a slug on which another client hits between every read and write of its
// attempts, so that every attempt fails.
func (k Kit[S]) contended(t *testing.T, maxAttempts int) (s S, slug string) {
	t.Helper()
	s = k.Server().Store(t, Config{Strategy: k.Optimistic, MaxAttempts: maxAttempts})
	slug = Key(t, 0)
	other := k.Server().Store(t, Config{})
	*k.BetweenReadAndWrite(s) = func(ctx context.Context) {
		if _, err := other.Hit(context.WithoutCancel(ctx), slug); err != nil {
			t.Error(err)
		}
	}
	return s, slug
}

// GivesUpAfterMaxAttempts changes what the Optimistic strategy read
// between every read and write, so that every attempt fails and the
// request must end with server.ErrTooManyRetries after exactly MaxAttempts tries.
func (k Kit[S]) GivesUpAfterMaxAttempts(t *testing.T) {
	const attempts = 3
	s, slug := k.contended(t, attempts)
	ctx := t.Context()
	_, err := s.Hit(ctx, slug)
	if !errors.Is(err, server.ErrTooManyRetries) {
		t.Fatalf("got error %v, want %v", err, server.ErrTooManyRetries)
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

// RetriesUntilDeadline makes every attempt of one request of the
// Optimistic strategy fail, as GivesUpAfterMaxAttempts does but with no
// MaxAttempts: the request must keep retrying, counting each retry, until
// its context's deadline, and then say so.
func (k Kit[S]) RetriesUntilDeadline(t *testing.T) {
	const deadline = 300 * time.Millisecond
	s, slug := k.contended(t, 0)
	ctx, cancel := context.WithTimeout(t.Context(), deadline)
	defer cancel()
	start := time.Now()
	_, err := s.Hit(ctx, slug)
	took := time.Since(start)
	// Retrying stops at the deadline: in the wait, or before a wait that
	// would outlast it (server.ErrTooManyRetries), or in a command the deadline
	// cut short (whatever the driver says then, and maybe a moment
	// before ctx's own timer has fired).
	if end, _ := ctx.Deadline(); !errors.Is(err, server.ErrTooManyRetries) && (err == nil || time.Now().Before(end)) {
		t.Fatalf("got error %v, want the request ended by its deadline", err)
	}
	if retries := s.Retries(); retries < 5 {
		t.Errorf("retries: got %d in %v, want it to keep retrying until the deadline", retries, took)
	}
	if took < deadline-50*time.Millisecond || took > deadline+time.Second {
		t.Errorf("gave up after %v, want about %v (the deadline)", took, deadline)
	}
}

// PrepareOpensConnections checks that Prepare leaves n open connections in
// the pool, growing it past its starting size when n asks for more.
func (k Kit[S]) PrepareOpensConnections(t *testing.T) {
	for _, n := range []int{4, k.DefaultPoolSize, 50} {
		t.Run(fmt.Sprint(n), func(t *testing.T) {
			s := k.prepared(t, Config{}, n)
			if got := k.Conns(s); got < int64(n) {
				t.Errorf("open connections: got %d, want at least %d", got, n)
			}
		})
	}
}

// OpenFailsFastWhenServerIsDown checks that opening a store where nothing
// listens fails at once with one line naming the server, wrapping
// Unreachable.
func (k Kit[S]) OpenFailsFastWhenServerIsDown(t *testing.T) {
	addr := ClosedAddr(t)
	ctx, cancel := context.WithTimeout(t.Context(), 10*time.Second)
	defer cancel()
	_, err := k.Open(ctx, Config{URL: k.URL(addr)})
	if err == nil {
		t.Fatal("open: got no error")
	}
	if got, want := err.Error(), k.Name+" at "+addr+": connection refused"; got != want {
		t.Errorf("error: got %q, want %q", got, want)
	}
	if !errors.Is(err, k.Unreachable) {
		t.Errorf("error %v does not wrap %v", err, k.Unreachable)
	}
}

// HoldingStrategiesAnswerEveryRequest runs every story at its own N (10
// hits, 12 downloads, 5 checkouts), 20 rounds each, on every Holding
// strategy at once, so that the server is under their combined load, and
// fails if a single request errored: an optimistic transaction that gives
// up its retries while others commit proves nothing, and would pass a
// check that looks only at the requests that answered.
func (k Kit[S]) HoldingStrategiesAnswerEveryRequest(t *testing.T) {
	const rounds = 20
	k.eachStrategy(t, k.Holding, true, func(t *testing.T, strategy string) {
		AnswersEveryRequest(t, k.prepared(t, Config{Strategy: strategy}, QuotaN), rounds)
	})
}

// BenchmarkHit measures one view hit per strategy, all goroutines on one
// slug, as in the story.
func (k Kit[S]) BenchmarkHit(b *testing.B) {
	for _, strategy := range k.Strategies {
		b.Run(StrategyName(strategy), func(b *testing.B) {
			ParallelHits(b, k.Server().Store(b, Config{Strategy: strategy}), Key(b, 0))
		})
	}
}

// ParallelHits is a benchmark's body for a counter: its goroutines hit
// slug together, b.N hits in all, each stopping at its first error.
func ParallelHits(b *testing.B, s Counter, slug string) {
	ctx := b.Context()
	b.RunParallel(func(pb *testing.PB) {
		for pb.Next() {
			if _, err := s.Hit(ctx, slug); err != nil {
				b.Error(err)
				return
			}
		}
	})
}

// OpenRejectsUnknownStrategy checks that a strategy the package does not
// know is refused by name when the store opens.
func (k Kit[S]) OpenRejectsUnknownStrategy(t *testing.T) {
	_, err := k.Open(t.Context(), Config{Strategy: "optimistic"})
	want := "unknown " + k.Name + ` strategy "optimistic"`
	if err == nil || !strings.Contains(err.Error(), want) {
		t.Errorf("got %v, want an error saying %s", err, want)
	}
}

// Run runs every check of the kit as a subtest named after it, one after
// another: a check whose strategies run in parallel ends before the next
// starts, so each has the server to itself.
func (k Kit[S]) Run(t *testing.T) {
	for _, c := range []struct {
		name  string
		check func(*testing.T)
	}{
		{"FixedStrategiesHold", k.FixedStrategiesHold},
		{"NaiveLosesUpdates", k.NaiveLosesUpdates},
		{"QuotaDayRollsOver", k.QuotaDayRollsOver},
		{"GivesUpAfterMaxAttempts", k.GivesUpAfterMaxAttempts},
		{"RetriesUntilDeadline", k.RetriesUntilDeadline},
		{"PrepareOpensConnections", k.PrepareOpensConnections},
		{"OpenFailsFastWhenServerIsDown", k.OpenFailsFastWhenServerIsDown},
		{"OpenRejectsUnknownStrategy", k.OpenRejectsUnknownStrategy},
		{"HoldingStrategiesAnswerEveryRequest", k.HoldingStrategiesAnswerEveryRequest},
		{"PlansHold", k.PlansHold},
		{"NaivePlansStale", k.NaivePlansStale},
		{"PlansDayRollsOver", k.PlansDayRollsOver},
		{"LimitsAtTheEdge", k.LimitsAtTheEdge},
		{"CleanLeavesNothing", k.CleanLeavesNothing},
		{"CleanAllRemovesLeftovers", k.CleanAllRemovesLeftovers},
	} {
		t.Run(c.name, c.check)
	}
}

// writeEveryStory writes what each story keeps for key on s, and answers
// how much of it the server holds (Leftovers), at least one thing a story.
func (k Kit[S]) writeEveryStory(t *testing.T, s S, key string) int64 {
	t.Helper()
	ctx := t.Context()
	for _, err := range []error{
		second(s.Hit(ctx, key)),
		third(s.Consume(ctx, key, QuotaLimit)),
		second(s.Checkout(ctx, key, "buyer")),
		s.Subscribe(ctx, key),
		third(s.Download(ctx, key, QuotaLimit)),
	} {
		if err != nil {
			t.Fatal(err)
		}
	}
	n, err := k.Leftovers(ctx, s, key)
	if err != nil {
		t.Fatal(err)
	}
	if n < 4 {
		t.Fatalf("the server holds %d things for %s after a write of every story; want 4 or more", n, key)
	}
	return n
}

func second[T any](_ T, err error) error        { return err }
func third[T, U any](_ T, _ U, err error) error { return err }

// CleanLeavesNothing: once a key's trial is over, Clean deletes every key
// or row the stories wrote for it, and every read answers as for a key
// never used; another key's are kept.
func (k Kit[S]) CleanLeavesNothing(t *testing.T) {
	ctx := t.Context()
	s := k.Server().Store(t, Config{})
	key, other := Key(t, 0), Key(t, 1)
	k.writeEveryStory(t, s, key)
	kept := k.writeEveryStory(t, s, other)
	if err := s.Clean(ctx, key); err != nil {
		t.Fatal(err)
	}
	if n, err := k.Leftovers(ctx, s, key); err != nil || n != 0 {
		t.Errorf("after Clean(%s) the server holds %d things for it (%v); want none", key, n, err)
	}
	views, _ := s.Views(ctx, key)
	count, _ := s.Count(ctx, key)
	claims, _ := s.Claims(ctx, key)
	paid, err := s.Paid(ctx, key)
	if views != 0 || count != 0 || claims != 0 || paid || err != nil {
		t.Errorf("after Clean: views %d, quota %d, claims %d, paid %v (%v); want nothing", views, count, claims, paid, err)
	}
	if n, err := k.Leftovers(ctx, s, other); err != nil || n != kept {
		t.Errorf("Clean(%s) left %d of %d things of another key (%v); want all", key, n, kept, err)
	}
	if err := s.Clean(ctx, key); err != nil {
		t.Errorf("Clean of a key already clean: %v; want nothing to do", err)
	}
}

// CleanAllRemovesLeftovers: CleanScoped with no age to spare deletes
// what keys left behind (an interrupted run's), says how many things it
// deleted, and keeps what is outside what it was asked to clean.
func (k Kit[S]) CleanAllRemovesLeftovers(t *testing.T) {
	ctx := t.Context()
	s := k.Server().Store(t, Config{})
	within := "clean-" + Key(t, 0)
	a, b, outside := within+"-a", within+"-b", Key(t, 1)
	want := k.writeEveryStory(t, s, a) + k.writeEveryStory(t, s, b)
	kept := k.writeEveryStory(t, s, outside)
	scope := server.CleanScope{Within: within}
	removed, _, err := k.CleanScoped(ctx, Config{URL: k.Server().URL()}, scope)
	if err != nil || removed != want {
		t.Errorf("CleanScoped = %d, %v; want %d removed", removed, err, want)
	}
	for _, key := range []string{a, b} {
		if n, err := k.Leftovers(ctx, s, key); err != nil || n != 0 {
			t.Errorf("after CleanScoped the server holds %d things for %s (%v); want none", n, key, err)
		}
	}
	if n, err := k.Leftovers(ctx, s, outside); err != nil || n != kept {
		t.Errorf("CleanScoped of %s took %d of %d things of %s (%v); want none", within, kept-n, kept, outside, err)
	}
	if removed, _, err := k.CleanScoped(ctx, Config{URL: k.Server().URL()}, scope); err != nil || removed != 0 {
		t.Errorf("CleanScoped a second time = %d, %v; want 0 removed", removed, err)
	}
}

// LimitsAtTheEdge runs LimitsAtTheEdge on every strategy: one request at
// a time, the naive one must count right too.
func (k Kit[S]) LimitsAtTheEdge(t *testing.T) {
	k.eachStrategy(t, k.Strategies, false, func(t *testing.T, strategy string) {
		LimitsAtTheEdge(t, k.Server().Store(t, Config{Strategy: strategy}))
	})
}
