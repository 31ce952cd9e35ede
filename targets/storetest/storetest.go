package storetest

import (
	"context"
	"crypto/rand"
	"fmt"
	"io"
	"net"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	stories "github.com/racelab/racelab/targets/story"
)

// The story interfaces come from package story (imported as stories,
// beside this package's own story type), declared once: a store
// that stops fitting them fails to compile in its own tests.
type (
	// Counter, Quota and Inventory are the stories' store interfaces.
	Counter   = stories.Counter
	Quota     = stories.Quota
	Inventory = stories.Inventory
	// Preparer is a store that readies connections or goroutines for n
	// simultaneous requests before a burst.
	Preparer interface {
		Prepare(ctx context.Context, n int) error
	}
	// Store is a store that serves the counter, the quota and the item.
	Store interface {
		stories.Counter
		stories.Quota
		stories.Inventory
	}
	// Local is a store racelab runs in its own process: it serves the
	// counter, the quota and the item, readies itself for a burst and
	// closes. A
	// package's tests declare var _ storetest.Local = (*Store)(nil), so
	// that a store that stops fitting fails to compile there.
	Local interface {
		Store
		Preparer
		io.Closer
	}
)

// Burst runs do n times at once: n goroutines wait on one channel and are
// released together by closing it. It returns once all are done, with do(i)
// in slot i; each goroutine writes only its own slot.
func Burst[T any](n int, do func(i int) T) []T {
	out := make([]T, n)
	start := make(chan struct{})
	var wg sync.WaitGroup
	for i := range n {
		wg.Go(func() {
			<-start
			out[i] = do(i)
		})
	}
	close(start)
	wg.Wait()
	return out
}

// runID keeps this test process's keys apart from any other's, and keySeq
// keeps its keys apart from each other, even under -count.
var (
	runID  = rand.Text()[:10]
	keySeq atomic.Int64
)

// Key is a name no earlier round, test or process has used, so that a round
// on a server that keeps its data starts from nothing.
func Key(tb testing.TB, round int) string {
	return fmt.Sprintf("test-%s-%d-%s-%d", runID, keySeq.Add(1), tb.Name(), round)
}

// ClosedAddr is a loopback address where nothing listens.
func ClosedAddr(tb testing.TB) string {
	tb.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		tb.Fatal(err)
	}
	addr := l.Addr().String()
	if err := l.Close(); err != nil {
		tb.Fatal(err)
	}
	return addr
}

// Clock is a settable clock, safe for use from many requests at once; pass
// its Now to a store. The zero Clock reads the zero time.
type Clock struct {
	mu sync.Mutex
	t  time.Time
}

// Now is the instant last Set.
func (c *Clock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.t
}

// Set moves the clock to t.
func (c *Clock) Set(t time.Time) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.t = t
}

// OneTo returns 1, 2, …, n: the totals n hits on a fresh slug must be
// answered with.
func OneTo(n int) []int64 {
	s := make([]int64, n)
	for i := range s {
		s[i] = int64(i + 1)
	}
	return s
}
