package clock

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"runtime"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"go.uber.org/goleak"
)

func TestMain(m *testing.M) {
	goleak.VerifyTestMain(m)
}

var epoch = time.Date(2026, 8, 14, 12, 0, 0, 0, time.UTC)

// program is a small concurrent program with everything the scheduler must
// order: seeded random sleeps, zero sleeps, a channel between participants,
// and a participant started with Go. It returns its event log. The log is
// appended to without a lock: only one participant runs at a time, and the
// race detector checks that the scheduler's hand-offs order the appends.
func program(t testing.TB, seed uint64) []string {
	v := NewVirtual(epoch)
	var log []string
	note := func(format string, args ...any) {
		log = append(log, fmt.Sprintf("%v ", v.Now().Sub(epoch))+fmt.Sprintf(format, args...))
	}
	rng := rand.New(rand.NewPCG(seed, 1))
	jobs := NewChan[int](v, 2)
	done := NewChan[struct{}](v, 0)
	err := v.Run(context.Background(), 8, func(ctx context.Context, i int) {
		if i == 0 {
			// A worker, started with Go, serving the others until closed.
			v.Go(func() {
				for {
					j, err := jobs.Recv(ctx)
					if err != nil {
						note("worker stops: %v", err)
						_ = done.Send(ctx, struct{}{})
						return
					}
					note("worker takes job %d", j)
					_ = v.Sleep(ctx, time.Duration(rng.IntN(5))*time.Millisecond)
				}
			})
		}
		for step := range 4 {
			d := time.Duration(rng.IntN(4)) * time.Millisecond // 0 included
			note("p%d step %d sleeps %v", i, step, d)
			if err := v.Sleep(ctx, d); err != nil {
				t.Errorf("p%d: Sleep: %v", i, err)
			}
			if step == 2 {
				if err := jobs.Send(ctx, 10*i+step); err != nil {
					t.Errorf("p%d: Send: %v", i, err)
				}
			}
		}
		if i == 0 {
			// Let the others finish, then stop the worker.
			_ = v.Sleep(ctx, time.Second)
			jobs.Close()
			if _, err := done.Recv(ctx); err != nil {
				t.Errorf("p0: worker never stopped: %v", err)
			}
		}
		note("p%d returns", i)
	})
	if err != nil {
		t.Fatalf("Run: %v", err)
	}
	return log
}

// The same program gives the same history every time, and different seeds
// give different ones.
func TestVirtualIsDeterministic(t *testing.T) {
	first := program(t, 7)
	for run := range 20 {
		if got := program(t, 7); !slices.Equal(got, first) {
			t.Fatalf("run %d differs from the first:\n%s\nfirst:\n%s", run, strings.Join(got, "\n"), strings.Join(first, "\n"))
		}
	}
	if slices.Equal(program(t, 8), first) {
		t.Error("seeds 7 and 8 gave the same history")
	}
	if len(first) < 8*4+8 {
		t.Errorf("history of %d events, want at least %d:\n%s", len(first), 8*4+8, strings.Join(first, "\n"))
	}
	// Time never runs backwards in the log.
	var last time.Duration
	for _, line := range first {
		d, err := time.ParseDuration(strings.Fields(line)[0])
		if err != nil {
			t.Fatal(err)
		}
		if d < last {
			t.Fatalf("time went back from %v to %v at %q", last, d, line)
		}
		last = d
	}
}

// Wake-ups at one instant run in the order they were scheduled; a zero
// sleep yields to them and queues behind them.
func TestVirtualOrderAtOneInstant(t *testing.T) {
	tests := []struct {
		name  string
		sleep func(i, round int) time.Duration
		want  string
	}{
		{"zero sleeps take turns", func(int, int) time.Duration { return 0 }, "0 1 2 0 1 2 0 1 2"},
		{"equal sleeps keep order", func(int, int) time.Duration { return time.Second }, "0 1 2 0 1 2 0 1 2"},
		{"shorter sleep first", func(i, _ int) time.Duration { return time.Duration(3-i) * time.Second }, "0 1 2 2 1 2 0 1 0"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			v := NewVirtual(epoch)
			var order []string
			err := v.Run(t.Context(), 3, func(ctx context.Context, i int) {
				for round := range 3 {
					order = append(order, fmt.Sprint(i))
					if round < 2 {
						if err := v.Sleep(ctx, tt.sleep(i, round)); err != nil {
							t.Error(err)
						}
					}
				}
			})
			if err != nil {
				t.Fatal(err)
			}
			if got := strings.Join(order, " "); got != tt.want {
				t.Errorf("order = %s, want %s", got, tt.want)
			}
		})
	}
}

// Time moves only when every participant waits: one that computes, or even
// sleeps on the wall clock, holds it still, and the others wait for it.
func TestVirtualTimeMovesOnlyWhenAllWait(t *testing.T) {
	v := NewVirtual(epoch)
	var wokeAt time.Duration
	err := v.Run(t.Context(), 2, func(ctx context.Context, i int) {
		switch i {
		case 0:
			if err := v.Sleep(ctx, time.Second); err != nil {
				t.Error(err)
			}
			wokeAt = v.Now().Sub(epoch)
		case 1:
			for range 100 {
				runtime.Gosched()
			}
			time.Sleep(20 * time.Millisecond) // wall time: the clock ignores it
			if got := v.Now(); !got.Equal(epoch) {
				t.Errorf("Now moved to %v while a participant ran", got.Sub(epoch))
			}
			if err := v.Sleep(ctx, 3*time.Second); err != nil {
				t.Error(err)
			}
		}
	})
	if err != nil {
		t.Fatal(err)
	}
	if wokeAt != time.Second {
		t.Errorf("the one-second sleeper woke at %v, want 1s", wokeAt)
	}
	if got := v.Now().Sub(epoch); got != 3*time.Second {
		t.Errorf("Now after the run = %v, want 3s", got)
	}
}

// A long virtual wait costs no wall time.
func TestVirtualSleepsAreInstant(t *testing.T) {
	v := NewVirtual(epoch)
	begin := time.Now()
	err := v.Run(t.Context(), 10, func(ctx context.Context, i int) {
		for range 10 {
			_ = v.Sleep(ctx, 24*time.Hour)
		}
	})
	if err != nil {
		t.Fatal(err)
	}
	if got := v.Now().Sub(epoch); got != 240*time.Hour {
		t.Errorf("Now = %v, want 240h", got)
	}
	if wall := time.Since(begin); wall > 5*time.Second {
		t.Errorf("ten virtual days took %v of wall time", wall)
	}
}

func TestVirtualDeadlock(t *testing.T) {
	v := NewVirtual(epoch)
	never := NewChan[int](v, 0)
	errs := make([]error, 3)
	err := v.Run(t.Context(), 3, func(ctx context.Context, i int) {
		if i == 2 {
			errs[i] = v.Sleep(ctx, time.Minute) // wakes, then is the last to block
		}
		_, errs[i] = never.Recv(ctx)
		if errs[i] != nil {
			// A failed run refuses further waits at once.
			if again := v.Sleep(ctx, time.Hour); !errors.Is(again, ErrDeadlock) {
				t.Errorf("p%d: Sleep after the deadlock = %v, want ErrDeadlock", i, again)
			}
		}
	})
	if !errors.Is(err, ErrDeadlock) {
		t.Fatalf("Run = %v, want ErrDeadlock", err)
	}
	if !strings.Contains(err.Error(), "3 of 3 participants blocked") || !strings.Contains(err.Error(), "at 1m0s") {
		t.Errorf("Run = %q, want it to say who blocked and when", err)
	}
	for i, e := range errs {
		if !errors.Is(e, ErrDeadlock) {
			t.Errorf("p%d: Recv = %v, want ErrDeadlock", i, e)
		}
	}
	// The clock is usable again after a failed run.
	if err := v.Run(t.Context(), 1, func(ctx context.Context, _ int) { _ = v.Sleep(ctx, time.Second) }); err != nil {
		t.Errorf("Run after a deadlock: %v", err)
	}
}

// Cancelling the run's context ends it promptly, though time would
// otherwise run on forever: every participant's wait fails with the
// context's error, those blocked on a channel included, and none leaks
// (TestMain checks).
func TestVirtualCancel(t *testing.T) {
	v := NewVirtual(epoch)
	ctx, cancel := context.WithCancel(t.Context())
	never := NewChan[int](v, 0)
	errs := make([]error, 3)
	go func() {
		time.Sleep(20 * time.Millisecond)
		cancel()
	}()
	err := v.Run(ctx, 3, func(ctx context.Context, i int) {
		switch i {
		case 0: // keeps time moving, so the run is not deadlocked
			for {
				if errs[i] = v.Sleep(ctx, time.Second); errs[i] != nil {
					return
				}
			}
		case 1:
			_, errs[i] = never.Recv(ctx)
		case 2: // waits with a context the cancel does not reach
			_, errs[i] = never.Recv(context.Background())
		}
	})
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("Run = %v, want context.Canceled", err)
	}
	for i, e := range errs {
		if !errors.Is(e, context.Canceled) {
			t.Errorf("p%d: wait = %v, want context.Canceled", i, e)
		}
	}
	if v.Now().Sub(epoch) < time.Second {
		t.Errorf("time did not move before the cancel")
	}
}

func TestVirtualRunWithDoneContext(t *testing.T) {
	v := NewVirtual(epoch)
	ctx, cancel := context.WithCancel(t.Context())
	cancel()
	called := false
	if err := v.Run(ctx, 3, func(context.Context, int) { called = true }); !errors.Is(err, context.Canceled) {
		t.Errorf("Run = %v, want context.Canceled", err)
	}
	if called {
		t.Error("Run with a done context started its participants")
	}
}

// A participant sleeping with a context that ends wakes at once with its
// error, and the others go on.
func TestVirtualSleepInterrupted(t *testing.T) {
	v := NewVirtual(epoch)
	sctx, cancel := context.WithCancel(t.Context())
	defer cancel()
	var got error
	var at time.Duration
	err := v.Run(t.Context(), 2, func(ctx context.Context, i int) {
		if i == 0 {
			got = v.Sleep(sctx, time.Hour)
			at = v.Now().Sub(epoch)
			return
		}
		// Cancelled from a wall-clock goroutine while p0 sleeps; p1 keeps
		// time moving in small steps until p0 is woken.
		go func() {
			time.Sleep(10 * time.Millisecond)
			cancel()
		}()
		for got == nil && v.Now().Sub(epoch) < 30*time.Minute {
			_ = v.Sleep(ctx, time.Microsecond)
		}
	})
	if err != nil {
		t.Fatal(err)
	}
	if !errors.Is(got, context.Canceled) {
		t.Errorf("Sleep = %v, want context.Canceled", got)
	}
	if at >= time.Hour {
		t.Errorf("the interrupted sleeper woke at %v, want before its hour", at)
	}
}

// Participants started with Go and blocked on a channel do not keep Run
// from returning; closing the channel from outside lets them end.
func TestVirtualLongLivedParticipants(t *testing.T) {
	v := NewVirtual(epoch)
	inbox := NewChan[string](v, 0)
	var served []string
	stopped := make(chan struct{})
	err := v.Run(t.Context(), 2, func(ctx context.Context, i int) {
		if i == 0 {
			v.Go(func() {
				defer close(stopped)
				for {
					msg, err := inbox.Recv(context.Background())
					if err != nil {
						return
					}
					served = append(served, msg)
				}
			})
		}
		_ = inbox.Send(ctx, fmt.Sprintf("hello from %d", i))
	})
	if err != nil {
		t.Fatal(err)
	}
	if want := []string{"hello from 0", "hello from 1"}; !slices.Equal(served, want) {
		t.Errorf("served %q, want %q", served, want)
	}
	// A second run reaches the same long-lived participant.
	if err := v.Run(t.Context(), 1, func(ctx context.Context, _ int) { _ = inbox.Send(ctx, "again") }); err != nil {
		t.Fatal(err)
	}
	inbox.Close()
	select {
	case <-stopped:
		t.Fatal("a participant ran between runs")
	case <-time.After(10 * time.Millisecond):
	}
	if err := v.Run(t.Context(), 0, nil); err != nil { // lets it act on the close
		t.Fatal(err)
	}
	<-stopped
	if served[len(served)-1] != "again" {
		t.Errorf("served %q, want it to end with the second run's message", served)
	}
}

// A long-lived participant sleeping past the end of a run resumes in the
// next one, or when a goroutine outside moves the clock on with Sleep.
func TestVirtualSleepFromOutside(t *testing.T) {
	v := NewVirtual(epoch)
	var woke []time.Duration
	if err := v.Run(t.Context(), 1, func(ctx context.Context, _ int) {
		v.Go(func() {
			for range 3 {
				_ = v.Sleep(context.Background(), 10*time.Second)
				woke = append(woke, v.Now().Sub(epoch))
			}
		})
	}); err != nil {
		t.Fatal(err)
	}
	if len(woke) != 0 || !v.Now().Equal(epoch) {
		t.Fatalf("time moved between runs: woke %v, now %v", woke, v.Now().Sub(epoch))
	}
	if err := v.Sleep(t.Context(), 25*time.Second); err != nil {
		t.Fatal(err)
	}
	if want := []time.Duration{10 * time.Second, 20 * time.Second}; !slices.Equal(woke, want) {
		t.Errorf("woke at %v, want %v", woke, want)
	}
	if got := v.Now().Sub(epoch); got != 25*time.Second {
		t.Errorf("Now = %v, want 25s", got)
	}
	if err := v.Sleep(t.Context(), 5*time.Second); err != nil {
		t.Fatal(err)
	}
	if len(woke) != 3 {
		t.Errorf("woke %d times, want 3", len(woke))
	}
}

func TestVirtualRunMisuse(t *testing.T) {
	v := NewVirtual(epoch)
	var nested error
	err := v.Run(t.Context(), 1, func(ctx context.Context, _ int) {
		nested = v.Run(ctx, 1, func(context.Context, int) {})
	})
	if err != nil {
		t.Fatal(err)
	}
	if !errors.Is(nested, errNestedRun) {
		t.Errorf("nested Run = %v, want errNestedRun", nested)
	}
	if err := v.Run(t.Context(), -1, nil); err == nil {
		t.Error("Run of -1 participants succeeded")
	}
	if err := v.Run(t.Context(), 0, nil); err != nil {
		t.Errorf("Run of 0 participants = %v", err)
	}
}

// A participant that calls t.FailNow (runtime.Goexit) still hands its turn
// on, so the run ends instead of hanging.
func TestVirtualGoexitHandsOn(t *testing.T) {
	v := NewVirtual(epoch)
	returned := false
	err := v.Run(t.Context(), 2, func(ctx context.Context, i int) {
		if i == 0 {
			runtime.Goexit()
		}
		_ = v.Sleep(ctx, time.Second)
		returned = true
	})
	if err != nil || !returned {
		t.Errorf("Run = %v, returned %v; want nil, true", err, returned)
	}
}

func TestNewVirtualDropsMonotonicReading(t *testing.T) {
	now := time.Now()
	v := NewVirtual(now)
	if got := v.Now(); got != now.Round(0) {
		t.Errorf("Now = %#v, want %#v", got, now.Round(0))
	}
}

// A burst as racelab's engine makes it, 1,000 times: 10 participants that
// each sleep twice, as a KV hit waits out its read and its write.
// With reuse, the participants' goroutines are kept from one run to the
// next, as the engine keeps them over a target's trials.
func BenchmarkVirtualRun(b *testing.B) {
	for _, reuse := range []bool{false, true} {
		b.Run(fmt.Sprintf("reuse=%v", reuse), func(b *testing.B) {
			v := NewVirtual(epoch)
			if reuse {
				defer v.Reuse()()
			}
			ctx := context.Background()
			for b.Loop() {
				err := v.Run(ctx, 10, func(ctx context.Context, i int) {
					_ = v.Sleep(ctx, time.Duration(i+1)*time.Millisecond)
					_ = v.Sleep(ctx, 30*time.Millisecond)
				})
				if err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// A context that ends between runs wakes its parked participant at the
// start of the next run, before anything else, without moving time: the
// way a store's Close ends its goroutines with Run(ctx, 0, nil).
func TestVirtualCancelBetweenRuns(t *testing.T) {
	v := NewVirtual(epoch)
	ctx, cancel := context.WithCancel(t.Context())
	inbox := NewChan[int](v, 0)
	var errs [2]error
	var wg sync.WaitGroup
	wg.Add(2)
	if err := v.Run(t.Context(), 1, func(context.Context, int) {
		v.Go(func() { defer wg.Done(); errs[0] = v.Sleep(ctx, time.Hour) })
		v.Go(func() { defer wg.Done(); _, errs[1] = inbox.Recv(ctx) })
	}); err != nil {
		t.Fatal(err)
	}
	cancel()
	if err := v.Run(t.Context(), 0, nil); err != nil {
		t.Fatal(err)
	}
	wg.Wait()
	for i, err := range errs {
		if !errors.Is(err, context.Canceled) {
			t.Errorf("participant %d: %v, want context.Canceled", i, err)
		}
	}
	if !v.Now().Equal(epoch) {
		t.Errorf("time moved to %v", v.Now().Sub(epoch))
	}
}

// A participant that cancels a context others wait with wakes them at the
// instant of the cancel, in the order they were created, every time.
func TestVirtualCancelByParticipantIsDeterministic(t *testing.T) {
	history := func() []string {
		v := NewVirtual(epoch)
		never := NewChan[int](v, 0)
		shared, cancel := context.WithCancel(t.Context())
		defer cancel()
		var log []string
		err := v.Run(t.Context(), 5, func(ctx context.Context, i int) {
			if i == 4 {
				_ = v.Sleep(ctx, time.Second)
				cancel()
				log = append(log, "cancel")
				_ = v.Sleep(ctx, time.Hour) // the clock would move on here
				return
			}
			var err error
			if i%2 == 0 {
				_, err = never.Recv(shared)
			} else {
				err = v.Sleep(shared, time.Minute)
			}
			log = append(log, fmt.Sprintf("p%d at %v: %v", i, v.Now().Sub(epoch), err))
		})
		if err != nil {
			t.Fatal(err)
		}
		return log
	}
	want := []string{
		"cancel",
		"p0 at 1s: context canceled",
		"p1 at 1s: context canceled",
		"p2 at 1s: context canceled",
		"p3 at 1s: context canceled",
	}
	for range 20 {
		if got := history(); !slices.Equal(got, want) {
			t.Fatalf("history %q, want %q", got, want)
		}
	}
}
