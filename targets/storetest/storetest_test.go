package storetest

import (
	"context"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// memStore keeps the counter, the quota and the item in memory. Atomic, it decides under one
// lock; naive, it reads, pauses and writes, each step under the lock but
// nothing holding the lock across the pause: the lost update.
type memStore struct {
	naive bool
	now   func() time.Time

	mu     sync.Mutex
	views  map[string]int64
	quotas map[string]dayCount
	claims map[string]int64
}

type dayCount struct {
	day   string
	count int64
}

var _ Store = (*memStore)(nil)

func newMem(naive bool, now func() time.Time) *memStore {
	if now == nil {
		now = time.Now
	}
	return &memStore{naive: naive, now: now, views: map[string]int64{}, quotas: map[string]dayCount{}, claims: map[string]int64{}}
}

// update reads a value with get, lets decide answer and say whether to
// write, and writes with put; naive, with a pause between read and write.
func update[V, R any](s *memStore, get func() V, decide func(V) (V, R, bool), put func(V)) R {
	s.mu.Lock()
	v := get()
	if s.naive {
		s.mu.Unlock()
		time.Sleep(2 * time.Millisecond)
		s.mu.Lock()
	}
	defer s.mu.Unlock()
	next, answer, write := decide(v)
	if write {
		put(next)
	}
	return answer
}

func (s *memStore) Hit(_ context.Context, slug string) (int64, error) {
	return update(s, func() int64 { return s.views[slug] },
		func(v int64) (int64, int64, bool) { return v + 1, v + 1, true },
		func(v int64) { s.views[slug] = v }), nil
}

func (s *memStore) Views(_ context.Context, slug string) (int64, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.views[slug], nil
}

func (s *memStore) today() string { return s.now().UTC().Format(time.DateOnly) }

func (s *memStore) Consume(_ context.Context, visitor string, limit int64) (bool, int64, error) {
	today := s.today()
	type answer struct {
		granted bool
		count   int64
	}
	a := update(s, func() dayCount { return s.quotas[visitor] },
		func(q dayCount) (dayCount, answer, bool) {
			if q.day != today {
				q = dayCount{day: today}
			}
			if q.count >= limit {
				return q, answer{false, q.count}, false
			}
			q.count++
			return q, answer{true, q.count}, true
		},
		func(q dayCount) { s.quotas[visitor] = q })
	return a.granted, a.count, nil
}

func (s *memStore) Count(_ context.Context, visitor string) (int64, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if q := s.quotas[visitor]; q.day == s.today() {
		return q.count, nil
	}
	return 0, nil
}

func (s *memStore) Checkout(_ context.Context, item, _ string) (bool, error) {
	return update(s, func() int64 { return s.claims[item] },
		func(c int64) (int64, bool, bool) { return c + 1, c < 1, c < 1 },
		func(c int64) { s.claims[item] = c }), nil
}

func (s *memStore) Claims(_ context.Context, item string) (int64, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.claims[item], nil
}

// recorder stands in for a test to see whether a check fails it: Fatal
// and Skip end the check's goroutine, as they end a test's.
type recorder struct {
	testing.TB
	mu      sync.Mutex
	failed  bool
	skipped bool
	lines   []string
}

func (r *recorder) add(failed, skipped bool, line string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.failed = r.failed || failed
	r.skipped = r.skipped || skipped
	r.lines = append(r.lines, line)
}

func (r *recorder) Helper()                    {}
func (r *recorder) Log(args ...any)            { r.add(false, false, fmt.Sprint(args...)) }
func (r *recorder) Logf(f string, args ...any) { r.add(false, false, fmt.Sprintf(f, args...)) }
func (r *recorder) Error(args ...any)          { r.add(true, false, fmt.Sprint(args...)) }
func (r *recorder) Errorf(f string, args ...any) {
	r.add(true, false, fmt.Sprintf(f, args...))
}
func (r *recorder) Fatal(args ...any) { r.add(true, false, fmt.Sprint(args...)); runtime.Goexit() }
func (r *recorder) Fatalf(f string, args ...any) {
	r.add(true, false, fmt.Sprintf(f, args...))
	runtime.Goexit()
}
func (r *recorder) Skip(args ...any) { r.add(false, true, fmt.Sprint(args...)); runtime.Goexit() }

// run runs check against a recorder and returns it once check has ended.
func run(t *testing.T, check func(tb testing.TB)) *recorder {
	t.Helper()
	r := &recorder{TB: t}
	done := make(chan struct{})
	go func() {
		defer close(done)
		check(r)
	}()
	<-done
	return r
}

// checks are the conformance checks at the figures the stores use, each
// once for a strategy that holds and once for one that loses updates.
var checks = []struct {
	name  string
	exact func(tb testing.TB, s Store)
	loses func(tb testing.TB, s Store)
}{
	{"counter", func(tb testing.TB, s Store) { CounterExact(tb, s, 5, 50) }, func(tb testing.TB, s Store) { CounterLoses(tb, s, 5, 10, Most) }},
	{"quota-12", func(tb testing.TB, s Store) { QuotaExact(tb, s, 5, 12) }, func(tb testing.TB, s Store) { QuotaLoses(tb, s, 5, 12, Most) }},
	{"quota-50", func(tb testing.TB, s Store) { QuotaExact(tb, s, 5, 50) }, func(tb testing.TB, s Store) { QuotaLoses(tb, s, 5, 10, Most) }},
	{"inventory", func(tb testing.TB, s Store) { InventoryExact(tb, s, 5, 50) }, func(tb testing.TB, s Store) { InventoryLoses(tb, s, 5, 5, Most) }},
}

// TestChecksJudgeBothWays checks that every check passes a store that
// holds and fails one that loses updates, and the other way round: the
// store packages' tests rely on the checks being able to fail.
func TestChecksJudgeBothWays(t *testing.T) {
	for _, c := range checks {
		t.Run(c.name, func(t *testing.T) {
			if r := run(t, func(tb testing.TB) { c.exact(tb, newMem(false, nil)) }); r.failed {
				t.Errorf("exact on a store that holds failed: %q", r.lines)
			}
			if r := run(t, func(tb testing.TB) { c.exact(tb, newMem(true, nil)) }); !r.failed {
				t.Errorf("exact on a naive store passed: %q", r.lines)
			} else if !strings.Contains(r.lines[0], "round 1 of 5") {
				t.Errorf("exact on a naive store failed with %q, want it to name round 1 of 5", r.lines)
			}
			if r := run(t, func(tb testing.TB) { c.loses(tb, newMem(true, nil)) }); r.failed {
				t.Errorf("loses on a naive store failed: %q", r.lines)
			}
			if r := run(t, func(tb testing.TB) { c.loses(tb, newMem(false, nil)) }); !r.failed {
				t.Errorf("loses on a store that holds passed: %q", r.lines)
			}
		})
	}
}

// erring fails every request.
type erring struct{ Store }

func (erring) Hit(context.Context, string) (int64, error) { return 0, fmt.Errorf("down") }

func TestChecksFailOnRequestErrors(t *testing.T) {
	s := erring{newMem(false, nil)}
	for name, check := range map[string]func(tb testing.TB){
		"exact": func(tb testing.TB) { CounterExact(tb, s, 1, 3) },
		"loses": func(tb testing.TB) { CounterLoses(tb, s, 1, 3, Some) },
	} {
		if r := run(t, check); !r.failed || !strings.Contains(strings.Join(r.lines, "\n"), "down") {
			t.Errorf("%s: failed %v with %q, want the request's error", name, r.failed, r.lines)
		}
	}
}

// Holds and LosesUpdates, as the redis and postgres tests call them: a
// subtest a story, passing on the strategies they are meant for.
func TestHoldsAndLosesUpdates(t *testing.T) {
	t.Run("holds", func(t *testing.T) { Holds(t, newMem(false, nil), 2, 20) })
	t.Run("loses", func(t *testing.T) { LosesUpdates(t, newMem(true, nil), 2, 10, All) })
}

func TestShare(t *testing.T) {
	tests := []struct {
		share         Share
		raced, rounds int
		want          bool
	}{
		{Some, 0, 20, false}, {Some, 1, 20, true},
		{Most, 20, 40, false}, {Most, 21, 40, true}, {Most, 25, 50, false}, {Most, 26, 50, true},
		{Most, 2, 5, false}, {Most, 3, 5, true},
		{All, 4, 5, false}, {All, 5, 5, true}, {All, 1, 1, true},
		{Share(0), 5, 5, false},
	}
	for _, tt := range tests {
		if got := tt.share.met(tt.raced, tt.rounds); got != tt.want {
			t.Errorf("%v met by %d of %d rounds = %v, want %v", tt.share, tt.raced, tt.rounds, got, tt.want)
		}
	}
}

func TestQuotaDayChecks(t *testing.T) {
	checks := map[string]func(tb testing.TB, s Quota, c *Clock){
		"QuotaDayRollsOver": QuotaDayRollsOver,
		"QuotaDays": func(tb testing.TB, s Quota, c *Clock) {
			QuotaDays(tb, s, c, append(DaySteps(), DayStep{"2026-03-03T04:40:00Z", true, 2}))
		},
	}
	for name, check := range checks {
		t.Run(name, func(t *testing.T) {
			var c Clock
			check(t, newMem(false, c.Now), &c)
			// A store whose day never rolls over fails it.
			r := run(t, func(tb testing.TB) {
				var c Clock
				day := time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)
				check(tb, newMem(false, func() time.Time { return day }), &c)
			})
			if !r.failed {
				t.Errorf("a quota stuck on one day passed: %q", r.lines)
			}
		})
	}
}

// TestBurstReleasesTogether checks that all n calls run at once (each waits
// until all have started) and that each answer lands in its own slot.
func TestBurstReleasesTogether(t *testing.T) {
	const n = 20
	var started atomic.Int64
	deadline := time.Now().Add(10 * time.Second)
	got := Burst(n, func(i int) int {
		started.Add(1)
		for started.Load() < n {
			if time.Now().After(deadline) {
				t.Error("not all calls ran at once")
				break
			}
			runtime.Gosched()
		}
		return i * i
	})
	for i, v := range got {
		if v != i*i {
			t.Errorf("slot %d = %d, want %d", i, v, i*i)
		}
	}
}

func TestKeyIsFresh(t *testing.T) {
	a, b := Key(t, 0), Key(t, 0)
	if a == b || !strings.Contains(a, t.Name()) {
		t.Errorf("keys %q and %q: want two different ones naming the test", a, b)
	}
}

func TestURL(t *testing.T) {
	t.Setenv("STORETEST_URL", "")
	if got := URL("STORETEST_URL", "def://"); got != "def://" {
		t.Errorf("unset: got %q, want the default", got)
	}
	t.Setenv("STORETEST_URL", "set://")
	if got := URL("STORETEST_URL", "def://"); got != "set://" {
		t.Errorf("set: got %q, want the variable's", got)
	}
}

// TestUnreachable checks that a missing server skips a test, or fails it
// under CI=true, saying how to start it, and that a skip, and only a skip,
// is logged for make test's summary.
func TestUnreachable(t *testing.T) {
	err := fmt.Errorf("redis at 127.0.0.1:1: connection refused")
	want := err.Error() + "; start it with make services or set RACELAB_REDIS_URL"
	for _, tt := range []struct {
		ci                 string
		wantFail, wantSkip bool
	}{
		{"", false, true},
		{"false", false, true},
		{"true", true, false},
	} {
		t.Setenv("CI", tt.ci)
		log := filepath.Join(t.TempDir(), "skips")
		t.Setenv(SkipLogVar, log)
		r := run(t, func(tb testing.TB) {
			Unreachable(tb, "RACELAB_REDIS_URL", err)
			tb.Error("Unreachable returned")
		})
		if r.failed != tt.wantFail || r.skipped != tt.wantSkip {
			t.Errorf("CI=%q: failed %v, skipped %v; want %v, %v", tt.ci, r.failed, r.skipped, tt.wantFail, tt.wantSkip)
		}
		if len(r.lines) != 1 || !strings.Contains(r.lines[0], want) {
			t.Errorf("CI=%q: said %q", tt.ci, r.lines)
		}
		logged, _ := os.ReadFile(log)
		wantLog := ""
		if tt.wantSkip {
			wantLog = "targets/storetest\t" + want + "\n"
		}
		if string(logged) != wantLog {
			t.Errorf("CI=%q: %s holds %q, want %q", tt.ci, SkipLogVar, logged, wantLog)
		}
	}
}

// TestUnreachableKeepsTheErrorsAdvice checks that an error that already
// says how to reach the server is not told it twice.
func TestUnreachableKeepsTheErrorsAdvice(t *testing.T) {
	t.Setenv("CI", "")
	t.Setenv(SkipLogVar, "")
	err := fmt.Errorf("open redis: redis at 127.0.0.1:1: connection refused; start it with `make services` or set RACELAB_REDIS_URL")
	r := run(t, func(tb testing.TB) { Unreachable(tb, "RACELAB_REDIS_URL", err) })
	if !r.skipped || len(r.lines) != 1 || !strings.HasSuffix(r.lines[0], err.Error()) {
		t.Errorf("skipped %v, said %q; want a skip saying %q", r.skipped, r.lines, err)
	}
}

func TestClosedAddr(t *testing.T) {
	addr := ClosedAddr(t)
	c, err := net.DialTimeout("tcp", addr, 5*time.Second)
	if err == nil {
		c.Close()
		t.Fatalf("dialing %s succeeded, want nothing listening", addr)
	}
}

func TestClock(t *testing.T) {
	var c Clock
	if !c.Now().IsZero() {
		t.Errorf("zero Clock reads %v", c.Now())
	}
	at := time.Date(2026, 3, 1, 9, 0, 0, 0, time.UTC)
	c.Set(at)
	if !c.Now().Equal(at) {
		t.Errorf("Now = %v after Set(%v)", c.Now(), at)
	}
}

// flaky answers an error to every other request, and otherwise is the
// atomic memStore: a strategy that holds on the requests that answer.
type flaky struct {
	*memStore
	calls atomic.Int64
}

func (f *flaky) fail() error {
	if f.calls.Add(1)%2 == 0 {
		return fmt.Errorf("gave up")
	}
	return nil
}

func (f *flaky) Hit(ctx context.Context, slug string) (int64, error) {
	if err := f.fail(); err != nil {
		return 0, err
	}
	return f.memStore.Hit(ctx, slug)
}

func (f *flaky) Consume(ctx context.Context, visitor string, limit int64) (bool, int64, error) {
	if err := f.fail(); err != nil {
		return false, 0, err
	}
	return f.memStore.Consume(ctx, visitor, limit)
}

func (f *flaky) Checkout(ctx context.Context, item, buyer string) (bool, error) {
	if err := f.fail(); err != nil {
		return false, err
	}
	return f.memStore.Checkout(ctx, item, buyer)
}

// TestAnswersCountsErrors checks that the answer checks pass a store that
// holds and answers every request, and fail, with the figure, a store that
// errors on some requests (even though what did answer is right) and a
// store that loses updates.
func TestAnswersCountsErrors(t *testing.T) {
	const rounds = 4
	checks := map[string]func(tb testing.TB, s Store) Tally{
		"counter":   func(tb testing.TB, s Store) Tally { return CounterAnswers(tb, s, rounds) },
		"quota":     func(tb testing.TB, s Store) Tally { return QuotaAnswers(tb, s, rounds) },
		"inventory": func(tb testing.TB, s Store) Tally { return InventoryAnswers(tb, s, rounds) },
	}
	ns := map[string]int{"counter": CounterN, "quota": QuotaN, "inventory": InventoryN}
	for name, check := range checks {
		t.Run(name, func(t *testing.T) {
			var tl Tally
			if r := run(t, func(tb testing.TB) { tl = check(tb, newMem(false, nil)) }); r.failed {
				t.Errorf("on a store that holds: failed with %q", r.lines)
			}
			if tl.Requests != rounds*ns[name] || tl.Errored != 0 || tl.Wrong != 0 {
				t.Errorf("on a store that holds: tally %v", tl)
			}
			r := run(t, func(tb testing.TB) { tl = check(tb, &flaky{memStore: newMem(false, nil)}) })
			if want := rounds * ns[name] / 2; !r.failed || tl.Errored != want || !strings.Contains(strings.Join(r.lines, "\n"), "gave up") {
				t.Errorf("on a store erroring every other request: failed %v, %d errored (want %d), lines %q", r.failed, tl.Errored, want, r.lines)
			}
			if r := run(t, func(tb testing.TB) { tl = check(tb, newMem(true, nil)) }); !r.failed || tl.Wrong == 0 {
				t.Errorf("on a naive store: failed %v, tally %v", r.failed, tl)
			}
		})
	}
}
