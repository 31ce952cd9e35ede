package clock

import (
	"sync/atomic"
	"testing"
	"time"
)

// TestEvery: f is called again and again, and once stop is closed Every
// returns and calls it no more.
func TestEvery(t *testing.T) {
	var calls atomic.Int64
	stop, done := make(chan struct{}), make(chan struct{})
	go func() {
		defer close(done)
		Every(time.Millisecond, stop, func() { calls.Add(1) })
	}()
	for calls.Load() < 3 {
		time.Sleep(time.Millisecond)
	}
	close(stop)
	<-done
	after := calls.Load()
	time.Sleep(20 * time.Millisecond)
	if n := calls.Load(); n != after {
		t.Errorf("%d calls after Every returned; want none", n-after)
	}
}

// TestEveryStopsBeforeTheFirstTick: a stop closed before the first
// period is over returns without a call.
func TestEveryStopsBeforeTheFirstTick(t *testing.T) {
	stop := make(chan struct{})
	close(stop)
	called := false
	Every(time.Hour, stop, func() { called = true })
	if called {
		t.Error("f was called; want no call before the first tick")
	}
}
