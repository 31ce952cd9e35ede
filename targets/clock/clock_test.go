package clock

import (
	"context"
	"errors"
	"sync/atomic"
	"testing"
	"time"
)

func TestRealSleep(t *testing.T) {
	ctx := t.Context()
	begin := time.Now()
	if err := (Real{}).Sleep(ctx, 5*time.Millisecond); err != nil {
		t.Fatal(err)
	}
	if took := time.Since(begin); took < 5*time.Millisecond {
		t.Errorf("Sleep(5ms) took %v", took)
	}
	if err := (Real{}).Sleep(ctx, -time.Second); err != nil {
		t.Errorf("Sleep(-1s) = %v, want nil", err)
	}
	cancelled, cancel := context.WithCancel(ctx)
	cancel()
	if err := (Real{}).Sleep(cancelled, time.Hour); !errors.Is(err, context.Canceled) {
		t.Errorf("Sleep with a done context = %v, want context.Canceled", err)
	}
	go func() { time.Sleep(5 * time.Millisecond); cancel() }()
	waiting, stop := context.WithCancel(ctx)
	go func() { time.Sleep(5 * time.Millisecond); stop() }()
	if err := (Real{}).Sleep(waiting, time.Hour); !errors.Is(err, context.Canceled) {
		t.Errorf("Sleep cut short = %v, want context.Canceled", err)
	}
}

// handClock is a Clock that is neither Real nor *Virtual, as a test of a
// store might write.
type handClock struct{ Real }

func (handClock) Now() time.Time { return epoch }

// Run and Go work on any Clock; on Real and foreign clocks they are plain
// goroutines, released together.
func TestRunAndGoOnAnyClock(t *testing.T) {
	for _, c := range []Clock{Real{}, handClock{}, NewVirtual(epoch)} {
		var n atomic.Int64
		done := make(chan struct{})
		err := Run(t.Context(), c, 10, func(ctx context.Context, i int) {
			n.Add(int64(i))
			if i == 0 {
				Go(c, func() { close(done) })
			}
		})
		if err != nil {
			t.Fatalf("%T: Run: %v", c, err)
		}
		if n.Load() != 45 {
			t.Errorf("%T: participants summed %d, want 45", c, n.Load())
		}
		<-done
	}
	if err := Run(t.Context(), Real{}, -1, nil); err == nil {
		t.Error("Run of -1 on Real succeeded")
	}
}
