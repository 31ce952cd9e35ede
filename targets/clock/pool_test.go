package clock

import (
	"context"
	"fmt"
	"runtime"
	"slices"
	"testing"
	"time"
)

// Reuse changes which goroutine plays a participant, never the run: the
// same program gives the same history with it and without it, and the
// goroutines a run leaves idle play the next run's participants.
func TestVirtualReuseKeepsHistory(t *testing.T) {
	history := func(reuse bool) (log []string, idle []int) {
		v := NewVirtual(epoch)
		if reuse {
			stop := v.Reuse()
			defer func() {
				stop()
				if n := len(v.workers.idle); n != 0 {
					t.Errorf("%d goroutines idle after stop; want none kept", n)
				}
			}()
		}
		for run := range 3 {
			err := v.Run(t.Context(), 5, func(ctx context.Context, i int) {
				_ = v.Sleep(ctx, time.Duration(5-i)*time.Millisecond)
				log = append(log, fmt.Sprintf("run %d: p%d at %v", run, i, v.Now().Sub(epoch)))
				_ = v.Sleep(ctx, time.Millisecond)
			})
			if err != nil {
				t.Fatal(err)
			}
			v.mu.Lock()
			idle = append(idle, len(v.workers.idle))
			v.mu.Unlock()
		}
		return log, idle
	}
	plain, none := history(false)
	kept, idle := history(true)
	if !slices.Equal(plain, kept) {
		t.Errorf("history with reuse:\n%q\nwithout:\n%q", kept, plain)
	}
	if want := []int{0, 0, 0}; !slices.Equal(none, want) {
		t.Errorf("idle goroutines without reuse %v, want %v", none, want)
	}
	// Five kept after each run: the second and third ran on the first's.
	if want := []int{5, 5, 5}; !slices.Equal(idle, want) {
		t.Errorf("idle goroutines with reuse %v, want %v", idle, want)
	}
}

// Calls of Reuse nest: the goroutines are kept until the last stop, and a
// stop called twice counts once.
func TestVirtualReuseNests(t *testing.T) {
	v := NewVirtual(epoch)
	outer, inner := v.Reuse(), v.Reuse()
	run := func() {
		if err := v.Run(t.Context(), 2, func(ctx context.Context, _ int) { _ = v.Sleep(ctx, time.Second) }); err != nil {
			t.Fatal(err)
		}
	}
	run()
	inner()
	inner()
	run()
	if n := len(v.workers.idle); n != 2 {
		t.Errorf("%d idle after the inner stop; want 2 kept for the outer", n)
	}
	outer()
	if n := len(v.workers.idle); n != 0 {
		t.Errorf("%d idle after the outer stop; want none", n)
	}
	run() // without reuse again: each participant on a goroutine of its own
	if n := len(v.workers.idle); n != 0 {
		t.Errorf("%d idle after a run without reuse; want none", n)
	}
}

// A participant that ends its goroutine (runtime.Goexit, as t.FailNow
// does) hands the turn on and takes its goroutine with it: it is not kept
// for the next participant.
func TestVirtualReuseGoexit(t *testing.T) {
	v := NewVirtual(epoch)
	defer v.Reuse()()
	err := v.Run(t.Context(), 3, func(ctx context.Context, i int) {
		_ = v.Sleep(ctx, time.Millisecond)
		if i == 1 {
			runtime.Goexit()
		}
	})
	if err != nil {
		t.Fatal(err)
	}
	if n := len(v.workers.idle); n != 2 {
		t.Fatalf("%d idle after a run where one of 3 participants ended its goroutine; want 2", n)
	}
	ran := 0
	if err := v.Run(t.Context(), 3, func(ctx context.Context, _ int) { _ = v.Sleep(ctx, time.Millisecond); ran++ }); err != nil {
		t.Fatal(err)
	}
	if ran != 3 {
		t.Errorf("%d of 3 participants ran on the kept goroutines and a new one", ran)
	}
}

// A run's participants are used again by the next run (membersLocked). A
// wake-up the last incarnation left behind (here the timer of a sleep a
// cancel cut short, still queued behind a later sleeper's) must stay
// stale for the new one: it sleeps its own two hours, not to the old
// timer's hour.
func TestVirtualMembersUsedAgainIgnoreStaleWakeups(t *testing.T) {
	v := NewVirtual(epoch)
	sctx, cancel := context.WithCancel(t.Context())
	defer cancel()
	err := v.Run(t.Context(), 2, func(ctx context.Context, i int) {
		if i == 0 {
			_ = v.Sleep(sctx, time.Hour) // cut short at 1s: its timer stays queued
			return
		}
		_ = v.Sleep(ctx, time.Second)
		cancel()
		// A participant of no run, due before the stale timer, keeps it
		// from the top of the queue, where it would be dropped at once.
		v.Go(func() { _ = v.Sleep(context.Background(), 30*time.Minute) })
	})
	if err != nil {
		t.Fatal(err)
	}
	var woke time.Duration
	err = v.Run(t.Context(), 2, func(ctx context.Context, i int) {
		if i == 0 {
			_ = v.Sleep(ctx, 2*time.Hour)
			woke = v.Now().Sub(epoch)
			return
		}
		_ = v.Sleep(ctx, 3*time.Hour) // keeps time moving past the stale timer
	})
	if err != nil {
		t.Fatal(err)
	}
	if want := 2*time.Hour + time.Second; woke != want {
		t.Errorf("the second run's sleeper woke at %v, want %v", woke, want)
	}
}
