package load

import (
	"context"
	"errors"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/racelab/racelab/internal/testwait"
	"github.com/racelab/racelab/scenarios/engine"
)

// TestReadKeyStopIsNoError: --background-on-key reads the trials' key
// beside them. A read the stop cuts short proves nothing of the store and
// is neither a read nor an error; one that answered is a read, and one
// the store failed is an error too. Every other read here waits on the
// store until the stop, as a slow store's would.
func TestReadKeyStopIsNoError(t *testing.T) {
	var mu sync.Mutex
	var calls, answered, failed int64
	var onlyWaits bool // set before the stop: the reads in flight then all wait
	var waiting atomic.Int64
	pl := engine.Player{Read: func(ctx context.Context, key string) (int64, error) {
		mu.Lock()
		calls++
		switch n := calls; {
		case onlyWaits || n%2 == 0:
			mu.Unlock()
			waiting.Add(1)
			<-ctx.Done() // only the stop ends it: the timeout is far off
			return 0, ctx.Err()
		case n%3 == 0:
			failed++
			mu.Unlock()
			return 0, errors.New("the store failed")
		default:
			answered++
			mu.Unlock()
			return 1, nil
		}
	}}
	counts := func() (int64, int64) {
		mu.Lock()
		defer mu.Unlock()
		return answered, failed
	}
	ctx, stop := context.WithCancel(context.Background())
	var reads, errs atomic.Int64
	done := make(chan struct{})
	go func() {
		defer close(done)
		readKey(ctx, Plan{Rate: 500, Timeout: time.Hour}, pl, func() string { return "the-trials-key" }, &reads, &errs)
	}()
	testwait.Eventually(t, "reads of each kind", func() bool {
		a, f := counts()
		return waiting.Load() >= 3 && f >= 1 && a >= 2
	})
	mu.Lock()
	onlyWaits = true
	mu.Unlock()
	a, f := counts()
	// Every read that answered is counted before the stop, so that what
	// the stop cuts is only reads still waiting.
	testwait.Eventually(t, "the answered reads counted", func() bool { return reads.Load() == a+f })
	stop()
	<-done
	if reads.Load() != a+f || errs.Load() != f {
		t.Errorf("%d reads, %d errors counted; want %d answered + %d failed reads and %d errors: the %d reads the stop cut are neither",
			reads.Load(), errs.Load(), a, f, f, waiting.Load())
	}
}
