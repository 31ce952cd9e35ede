package burst

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// countingServer serves h2c and HTTP/1.1 on loopback; it answers each
// request, once its whole body is read, with its path, and counts the
// requests answered.
func countingServer(t *testing.T, h1Only bool) (string, *atomic.Int64) {
	t.Helper()
	var answered atomic.Int64
	var p http.Protocols
	p.SetHTTP1(true)
	p.SetUnencryptedHTTP2(!h1Only)
	srv := &http.Server{Protocols: &p, Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if _, err := io.ReadAll(r.Body); err != nil {
			return
		}
		if r.Method == http.MethodPost {
			answered.Add(1)
		}
		w.Header().Set(ArrivalHeader, "1000000000")
		fmt.Fprint(w, r.URL.Path)
	})}
	return serveLoopback(t, srv), &answered
}

// callResult is what a test's call returns: the bodies it was answered,
// or its error.
type callResult struct {
	bodies []string
	err    error
}

// TestStageCalls: the calls of a burst make their requests through Send,
// as they would whole; each call's first request is staged and none is
// answered before the release, a call that sends nothing is answered
// without the wire, a second request of a call goes whole after its
// first, and every call gets its own answer, with its arrival.
func TestStageCalls(t *testing.T) {
	for _, mode := range []Sync{SyncH2, SyncLastByte, SyncNone} {
		t.Run(string(mode), func(t *testing.T) {
			base, answered := countingServer(t, false)
			p := testPool(t, base, mode)
			const n = 6
			ctx := t.Context()
			release, err := StageCalls(ctx, p.Gate(n), func(ctx context.Context, j int) callResult {
				var res callResult
				if j == 4 {
					return res // answered without a request
				}
				for k := range 1 + j/5 { // call 5 makes two requests
					a, err := p.Send(ctx, Wire{Method: http.MethodPost, Target: fmt.Sprintf("/call/%d/%d", j, k)})
					if err != nil {
						return callResult{err: err}
					}
					res.bodies = append(res.bodies, string(a.Body))
				}
				return res
			})
			if err != nil {
				t.Fatal(err)
			}
			if mode != SyncNone {
				time.Sleep(50 * time.Millisecond) // time enough for a request sent whole to be answered
				if got := answered.Load(); got != 0 {
					t.Fatalf("%d requests answered before the release, want 0", got)
				}
			}
			results := make([]callResult, n)
			raws := make([]Answer, n)
			var wg sync.WaitGroup
			for j := range n {
				wg.Go(func() { results[j], raws[j] = release(ctx, j) })
			}
			wg.Wait()
			for j, res := range results {
				var want []string
				switch j {
				case 4:
				case 5:
					want = []string{"/call/5/0", "/call/5/1"}
				default:
					want = []string{fmt.Sprintf("/call/%d/0", j)}
				}
				if res.err != nil || strings.Join(res.bodies, " ") != strings.Join(want, " ") {
					t.Errorf("call %d: answered %q, %v; want %q", j, res.bodies, res.err, want)
				}
				if sent := j != 4; sent != (raws[j].Status == 200) || sent != !raws[j].Arrival.IsZero() || raws[j].Early {
					t.Errorf("call %d: raw answer %d, arrival %v, early %t", j, raws[j].Status, raws[j].Arrival, raws[j].Early)
				}
			}
			if got := answered.Load(); got != n {
				t.Errorf("%d requests answered, want %d", got, n)
			}
		})
	}
}

// TestStageCallsNotStaged: a burst the pool cannot stage (h2 asked of a
// server that speaks only HTTP/1.1) fails StageCalls with why, once every
// call has returned, and every call that sent a request is told.
func TestStageCallsNotStaged(t *testing.T) {
	base, answered := countingServer(t, true)
	p := testPool(t, base, SyncH2)
	var told atomic.Int64
	_, err := StageCalls(t.Context(), p.Gate(3), func(ctx context.Context, j int) error {
		_, err := p.Send(ctx, Wire{Method: http.MethodPost, Target: "/x"})
		if err != nil && strings.Contains(err.Error(), "not staged") {
			told.Add(1)
		}
		return err
	})
	var noH2 *noH2Error
	if !errors.As(err, &noH2) {
		t.Errorf("StageCalls = %v, want the server's lack of HTTP/2", err)
	}
	if told.Load() != 3 || answered.Load() != 0 {
		t.Errorf("%d calls told it was not staged, %d answered; want 3 and 0", told.Load(), answered.Load())
	}
}

// TestStageCallsCalledOff: when the context ends before every call has
// sent its request, StageCalls returns with it once every call has
// returned, and sends nothing.
func TestStageCallsCalledOff(t *testing.T) {
	base, answered := countingServer(t, false)
	p := testPool(t, base, SyncLastByte)
	ctx, cancel := context.WithCancel(t.Context())
	time.AfterFunc(50*time.Millisecond, cancel)
	_, err := StageCalls(ctx, p.Gate(2), func(ctx context.Context, j int) error {
		if j == 1 {
			<-ctx.Done() // a call that never gets to its request
			return ctx.Err()
		}
		_, err := p.Send(ctx, Wire{Method: http.MethodPost, Target: "/x"})
		return err
	})
	if !errors.Is(err, context.Canceled) || answered.Load() != 0 {
		t.Errorf("StageCalls = %v with %d answered; want cancelled, none answered", err, answered.Load())
	}
}

// TestReleaseEndsTheCall: once the context a request was released within
// ends, so does the context of the call's further requests.
func TestReleaseEndsTheCall(t *testing.T) {
	base, _ := countingServer(t, false)
	p := testPool(t, base, SyncLastByte)
	rctx, cancel := context.WithCancel(t.Context())
	release, err := StageCalls(t.Context(), p.Gate(1), func(ctx context.Context, _ int) error {
		if _, err := p.Send(ctx, Wire{Method: http.MethodPost, Target: "/x"}); err != nil {
			return err
		}
		cancel() // the release's context ends
		<-ctx.Done()
		return context.Cause(ctx)
	})
	if err != nil {
		t.Fatal(err)
	}
	if err, _ := release(rctx, 0); !errors.Is(err, context.Canceled) {
		t.Errorf("the call's context ended with %v, want the release's cancellation", err)
	}
}
