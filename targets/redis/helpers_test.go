package redis

import (
	"context"
	"crypto/rand"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// The story interfaces of racelab's targets package, repeated here because
// this package imports none of racelab's: a Store must keep fitting them.
type (
	counter interface {
		Hit(ctx context.Context, slug string) (int64, error)
		Views(ctx context.Context, slug string) (int64, error)
	}
	quota interface {
		Consume(ctx context.Context, visitor string, limit int64) (bool, int64, error)
		Count(ctx context.Context, visitor string) (int64, error)
	}
	inventory interface {
		Checkout(ctx context.Context, item, buyer string) (bool, error)
		Claims(ctx context.Context, item string) (int64, error)
	}
	preparer interface {
		Prepare(ctx context.Context, n int) error
	}
)

var (
	_ counter   = (*Store)(nil)
	_ quota     = (*Store)(nil)
	_ inventory = (*Store)(nil)
	_ preparer  = (*Store)(nil)
	_ io.Closer = (*Store)(nil)
)

// serverURL is the server the tests use: RACELAB_REDIS_URL, or the one
// .ci/services starts.
func serverURL() string {
	if u := os.Getenv("RACELAB_REDIS_URL"); u != "" {
		return u
	}
	return DefaultURL
}

// openStore opens a store on the test server, closed when the test ends. A
// server that does not answer skips the test, except under CI=true, where it
// fails it: CI starts the server, so its absence there is a bug.
func openStore(tb testing.TB, cfg Config) *Store {
	tb.Helper()
	cfg.URL = serverURL()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	s, err := Open(ctx, cfg)
	if errors.Is(err, ErrUnreachable) {
		msg := fmt.Sprintf("%v; start it with .ci/services start or set RACELAB_REDIS_URL", err)
		if os.Getenv("CI") == "true" {
			tb.Fatal(msg)
		}
		tb.Skip("skipped: " + msg)
	}
	if err != nil {
		tb.Fatalf("open %q: %v", cfg.Strategy, err)
	}
	tb.Cleanup(func() {
		if err := s.Close(); err != nil {
			tb.Errorf("close: %v", err)
		}
	})
	return s
}

// runID keeps this test process's keys apart from any other's, and keySeq
// keeps its keys apart from each other, even under -count.
var (
	runID  = rand.Text()[:10]
	keySeq atomic.Int64
)

// freshKey is a name no earlier round, test or process has used.
func freshKey(tb testing.TB, round int) string {
	return fmt.Sprintf("test-%s-%d-%s-%d", runID, keySeq.Add(1), tb.Name(), round)
}

// burst runs do n times at once: n goroutines wait on one channel and are
// released together by closing it; each writes only its own result slot.
func burst[T any](n int, do func(i int) T) []T {
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

// closedAddr is a loopback address where nothing listens.
func closedAddr(t *testing.T) string {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := l.Addr().String()
	if err := l.Close(); err != nil {
		t.Fatal(err)
	}
	return addr
}
