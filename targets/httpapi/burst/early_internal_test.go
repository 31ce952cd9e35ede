package burst

import (
	"bufio"
	"context"
	"fmt"
	"net"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/racelab/racelab/internal/testwait"
)

// A server that answers a request before it is complete was not held back
// by the withheld byte or frame: the burst is not synchronized, and every
// answer of it says so. These tests wait until the early answers are in
// racelab's hands before releasing, so the outcome does not depend on
// timing.

func TestPending(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	c, err := net.Dial("tcp", ln.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	s, err := ln.Accept()
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if Pending(c) {
		t.Fatal("pending before anything was sent")
	}
	s.Write([]byte("x"))
	testwait.Eventually(t, "the byte sent", func() bool { return Pending(c) })
	buf := make([]byte, 1)
	c.Read(buf)
	if Pending(c) {
		t.Fatal("pending after the byte was read")
	}
	s.Close()
	testwait.Eventually(t, "the peer's close", func() bool { return Pending(c) })
}

// releaseAll calls every staged function at once and returns the answers.
func releaseAll(t *testing.T, fs []func(context.Context) (Answer, error)) []Answer {
	t.Helper()
	answers := make([]Answer, len(fs))
	errs := make([]error, len(fs))
	var wg sync.WaitGroup
	for i, f := range fs {
		wg.Go(func() {
			ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
			defer cancel()
			answers[i], errs[i] = f(ctx)
		})
	}
	wg.Wait()
	for i, err := range errs {
		if err != nil {
			t.Errorf("request %d: %v", i, err)
		}
	}
	return answers
}

// stageHits opens a pool of base in mode and stages n requests of
// POST /hit/k; the pool is closed when the test ends.
func stageHits(t *testing.T, base string, mode Sync, n int) (*Pool, []func(context.Context) (Answer, error)) {
	t.Helper()
	p := testPool(t, base, mode)
	ws := make([]Wire, n)
	for i := range ws {
		ws[i] = Wire{Method: http.MethodPost, Target: "/hit/k"}
	}
	fs, err := p.Stage(context.Background(), ws)
	if err != nil {
		t.Fatal(err)
	}
	return p, fs
}

// testPool opens a pool of base in mode, closed when the test ends.
func testPool(t *testing.T, base string, mode Sync) *Pool {
	t.Helper()
	u, err := url.Parse(base)
	if err != nil {
		t.Fatal(err)
	}
	p, err := New(u, Config{Sync: mode})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { p.Close() })
	return p
}

// hastyHTTP1 answers each request as soon as its request line is in.
func hastyHTTP1(t *testing.T) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	var wg sync.WaitGroup
	t.Cleanup(func() { ln.Close(); wg.Wait() })
	wg.Go(func() {
		for {
			conn, err := ln.Accept()
			if err != nil {
				return
			}
			wg.Go(func() {
				defer conn.Close()
				br := bufio.NewReader(conn)
				for {
					line, err := br.ReadString('\n')
					if err != nil {
						return
					}
					if f := strings.Fields(line); len(f) == 3 && strings.HasPrefix(f[2], "HTTP/") {
						slug, _ := url.PathUnescape(f[1][strings.LastIndex(f[1], "/")+1:])
						body := fmt.Sprintf(`{"slug":%q,"views":1}`, slug)
						fmt.Fprintf(conn, "HTTP/1.1 200 OK\r\nContent-Length: %d\r\n\r\n%s", len(body), body)
					}
				}
			})
		}
	})
	return "http://" + ln.Addr().String()
}

func TestEarlyLastByte(t *testing.T) {
	const n = 3
	p, fs := stageHits(t, hastyHTTP1(t), SyncLastByte, n)
	for _, hc := range p.h1[:n] {
		testwait.Eventually(t, "the hasty answers", hc.answered)
	}
	for i, a := range releaseAll(t, fs) {
		if !a.Early {
			t.Errorf("request %d answered before its last byte, yet not marked early", i)
		}
	}
}

func TestEarlyH2(t *testing.T) {
	var p http.Protocols
	p.SetUnencryptedHTTP2(true)
	p.SetHTTP1(true)
	// A handler that answers at HEADERS, without waiting for END_STREAM.
	srv := &http.Server{Protocols: &p, Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		fmt.Fprintf(w, `{"slug":%q,"views":1}`, r.PathValue("slug"))
	})}
	mux := http.NewServeMux()
	mux.Handle("/hit/{slug}", srv.Handler)
	mux.HandleFunc("/", func(http.ResponseWriter, *http.Request) {})
	srv.Handler = mux
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	served := make(chan struct{})
	go func() { srv.Serve(ln); close(served) }()
	defer func() { srv.Close(); <-served }()

	pool, fs := stageHits(t, "http://"+ln.Addr().String(), SyncH2, 3)
	hc := pool.h2[0]
	testwait.Eventually(t, "the hasty answers", func() bool {
		hc.mu.Lock()
		defer hc.mu.Unlock()
		return len(hc.streams) == 0 // every stream answered in full
	})
	for i, a := range releaseAll(t, fs) {
		if !a.Early {
			t.Errorf("request %d answered before its END_STREAM, yet not marked early", i)
		}
	}
}

func TestBurstLatch(t *testing.T) {
	t.Run("the last caller releases, once, before anyone returns", func(t *testing.T) {
		const n = 8
		var releases, returnedEarly int
		var mu sync.Mutex
		l := newBurstLatch(n, func() { mu.Lock(); releases++; mu.Unlock() })
		var wg sync.WaitGroup
		for range n {
			wg.Go(func() {
				if err := l.arrive(context.Background()); err != nil {
					t.Error(err)
				}
				mu.Lock()
				if releases == 0 {
					returnedEarly++
				}
				mu.Unlock()
			})
		}
		wg.Wait()
		if releases != 1 || returnedEarly != 0 {
			t.Errorf("%d releases, %d callers back before it; want 1 and 0", releases, returnedEarly)
		}
	})
	t.Run("an interrupted burst is called off", func(t *testing.T) {
		ctx, cancel := context.WithCancel(context.Background())
		cancel()
		released := false
		l := newBurstLatch(2, func() { released = true })
		errs := make(chan error, 2)
		go func() { errs <- l.arrive(ctx) }()
		go func() { errs <- l.arrive(ctx) }()
		if e1, e2 := <-errs, <-errs; e1 == nil || e2 == nil || released {
			t.Errorf("errors %v, %v, released %t; want both cancelled and nothing sent", e1, e2, released)
		}
	})
}
