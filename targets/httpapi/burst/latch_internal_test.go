package burst

import (
	"context"
	"errors"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/racelab/racelab/internal/testwait"
)

// TestArriveThen: callers that wait for their own answers are held until
// the release (even one answered before it), return once their answer is
// in, and say whether the burst went out.
func TestArriveThen(t *testing.T) {
	t.Run("held until the release, back once answered", func(t *testing.T) {
		const n = 8
		answered := make([]chan struct{}, n)
		for i := range answered {
			answered[i] = make(chan struct{})
		}
		close(answered[3]) // an early answer, before the release
		var released atomic.Bool
		l := newBurstLatch(n, func() {
			released.Store(true)
			for i, ch := range answered {
				if i != 3 {
					close(ch)
				}
			}
		})
		var wg sync.WaitGroup
		var before atomic.Int64
		for i := range n {
			wg.Go(func() {
				sent, err := l.arriveThen(context.Background(), answered[i])
				if !sent || err != nil {
					t.Errorf("caller %d: sent %t, err %v; want sent, no error", i, sent, err)
				}
				if !released.Load() {
					before.Add(1)
				}
			})
		}
		wg.Wait()
		if before.Load() != 0 {
			t.Errorf("%d callers back before the release; want 0", before.Load())
		}
	})
	t.Run("called off: nothing sent, every caller told", func(t *testing.T) {
		ctx, cancel := context.WithCancel(context.Background())
		released := false
		l := newBurstLatch(3, func() { released = true })
		never := make(chan struct{})
		errs := make(chan error, 3)
		for range 2 {
			go func() {
				sent, err := l.arriveThen(context.Background(), never)
				if sent {
					err = errors.New("sent")
				}
				errs <- err
			}()
		}
		testwait.Eventually(t, "the first two callers", func() bool { return l.waiting.Load() == 1 })
		cancel()
		sent, err := l.arriveThen(ctx, never) // the last caller, interrupted
		if sent || !errors.Is(err, context.Canceled) {
			t.Errorf("last caller: sent %t, err %v; want not sent, cancelled", sent, err)
		}
		for range 2 {
			if err := <-errs; !errors.Is(err, context.Canceled) {
				t.Errorf("waiting caller: %v; want the burst called off (cancelled)", err)
			}
		}
		if released {
			t.Error("an interrupted burst was released")
		}
	})
	t.Run("released, then no answer", func(t *testing.T) {
		ctx, cancel := context.WithTimeout(context.Background(), 50*time.Millisecond)
		defer cancel()
		l := newBurstLatch(1, func() {})
		sent, err := l.arriveThen(ctx, make(chan struct{}))
		if !sent || !errors.Is(err, context.DeadlineExceeded) {
			t.Errorf("sent %t, err %v; want sent, then the deadline", sent, err)
		}
	})
}
