package burst_test

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/racelab/racelab/targets/httpapi/burst"
	"github.com/racelab/racelab/targets/storetest"
)

// rawServer is a service written by hand (storetest.Listener): serve
// reads each request off br and writes what the test wants, byte by byte.
type rawServer struct {
	url      *url.URL
	accepted *atomic.Int64
}

func newRawServer(t *testing.T, serve func(conn net.Conn, br *bufio.Reader)) *rawServer {
	t.Helper()
	addr, accepted := storetest.Listener(t, func(conn net.Conn) { serve(conn, bufio.NewReader(conn)) })
	return &rawServer{url: &url.URL{Scheme: "http", Host: addr}, accepted: accepted}
}

// readRequest reads one request's head (the tests send no bodies) and
// returns its request line; "" when the client closed.
func readRequest(br *bufio.Reader) string {
	first := ""
	for {
		line, err := br.ReadString('\n')
		if err != nil {
			return ""
		}
		line = strings.TrimRight(line, "\r\n")
		if first == "" {
			first = line
			continue
		}
		if line == "" {
			return first
		}
	}
}

// answering serves every request on a connection with the same bytes,
// until the client closes.
func answering(raw string) func(net.Conn, *bufio.Reader) {
	return func(conn net.Conn, br *bufio.Reader) {
		for readRequest(br) != "" {
			if _, err := conn.Write([]byte(raw)); err != nil {
				return
			}
		}
	}
}

func newPool(t *testing.T, base *url.URL) *burst.Pool {
	t.Helper()
	c, err := burst.New(base, burst.Config{Sync: burst.SyncNone})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	return c
}

func send(c *burst.Pool, path string) (burst.Answer, error) {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	return c.Send(ctx, burst.Wire{Method: http.MethodPost, Target: path})
}

// TestWholeRequestAnswers: whole requests over plain HTTP/1.1 read every
// form an answer's body may take, keep a connection only when its answer
// allows it, and refuse what is malformed with an error that says so.
func TestWholeRequestAnswers(t *testing.T) {
	tests := []struct {
		name  string
		raw   string
		body  string
		conns int64 // connections two requests in a row need
		err   string
	}{
		{"content length", "HTTP/1.1 200 OK\r\nContent-Length: 5\r\nRacelab-Arrival: 7\r\n\r\nhello", "hello", 1, ""},
		{"chunked with a trailer", "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n3\r\nhel\r\n2\r\nlo\r\n0\r\nX-Sum: 1\r\n\r\n", "hello", 1, ""},
		{"interim answer first", "HTTP/1.1 100 Continue\r\n\r\nHTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok", "ok", 1, ""},
		{"connection close", "HTTP/1.1 200 OK\r\nContent-Length: 2\r\nConnection: close\r\n\r\nok", "ok", 2, ""},
		{"HTTP/1.0 without keep-alive", "HTTP/1.0 200 OK\r\nContent-Length: 2\r\n\r\nok", "ok", 2, ""},
		{"HTTP/1.0 with keep-alive", "HTTP/1.0 200 OK\r\nContent-Length: 2\r\nConnection: Keep-Alive\r\n\r\nok", "ok", 1, ""},
		{"bytes past the answer", "HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nokHTTP/1.1 500 Unasked\r\n\r\n", "ok", 2, ""},
		{"no content", "HTTP/1.1 204 No Content\r\n\r\n", "", 1, ""},
		{"bare line feeds", "HTTP/1.1 200 OK\nContent-Length: 2\n\nok", "ok", 1, ""},
		{"malformed status line", "HTTP/1.1 2x0 OK\r\n\r\n", "", 0, "malformed status line"},
		{"not HTTP", "SSH-2.0-OpenSSH\r\n\r\n", "", 0, "malformed status line"},
		{"header without a colon", "HTTP/1.1 200 OK\r\nContent-Length 2\r\n\r\nok", "", 0, "malformed header line"},
		{"folded header", "HTTP/1.1 200 OK\r\nX-A: 1\r\n  2\r\nContent-Length: 2\r\n\r\nok", "", 0, "folded"},
		{"lengths that disagree", "HTTP/1.1 200 OK\r\nContent-Length: 2\r\nContent-Length: 3\r\n\r\nok", "", 0, "content length"},
		{"negative length", "HTTP/1.1 200 OK\r\nContent-Length: -1\r\n\r\n", "", 0, "content length"},
		{"length over the bound", fmt.Sprintf("HTTP/1.1 200 OK\r\nContent-Length: %d\r\n\r\n", burst.MaxAnswerBytes+1), "", 0, "answer over"},
		{"unknown transfer encoding", "HTTP/1.1 200 OK\r\nTransfer-Encoding: gzip\r\n\r\nok", "", 0, "transfer encoding"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			srv := newRawServer(t, answering(tt.raw))
			c := newPool(t, srv.url)
			for i := range 2 {
				r, err := send(c, "/hit/a")
				if tt.err != "" {
					if err == nil || !strings.Contains(err.Error(), tt.err) || !strings.Contains(err.Error(), "POST /hit/a") {
						t.Fatalf("request %d: err = %v; want one naming the request and saying %q", i, err, tt.err)
					}
					return
				}
				if err != nil {
					t.Fatalf("request %d: %v", i, err)
				}
				if string(r.Body) != tt.body {
					t.Errorf("request %d: body %q, want %q", i, r.Body, tt.body)
				}
			}
			if got := srv.accepted.Load(); got != tt.conns {
				t.Errorf("two requests took %d connections, want %d", got, tt.conns)
			}
		})
	}
}

// TestWholeRequestHeaders: an answer's headers reach the caller, names
// canonical and repeated ones kept in order, and the arrival instant is
// read from them.
func TestWholeRequestHeaders(t *testing.T) {
	srv := newRawServer(t, answering("HTTP/1.1 409 Conflict\r\ncontent-length: 2\r\nX-Seen: a\r\nx-seen: b\r\nRacelab-Arrival: 1000000000\r\n\r\nno"))
	r, err := send(newPool(t, srv.url), "/hit/a")
	if err != nil {
		t.Fatal(err)
	}
	if r.Status != 409 || string(r.Body) != "no" {
		t.Errorf("answer %d %q, want 409 \"no\"", r.Status, r.Body)
	}
	if got := r.Header.Values("X-Seen"); len(got) != 2 || got[0] != "a" || got[1] != "b" {
		t.Errorf("X-Seen = %q, want [a b]", got)
	}
	if !r.Arrival.Equal(time.Unix(1, 0)) {
		t.Errorf("arrival %v, want 1s after the epoch", r.Arrival)
	}
}

// TestWholeRequestBodyToClose: an answer with neither a length nor
// chunks runs to the close, and an answer cut short of its length is an
// error, never a shorter body.
func TestWholeRequestBodyToClose(t *testing.T) {
	toClose := newRawServer(t, func(conn net.Conn, br *bufio.Reader) {
		readRequest(br)
		conn.Write([]byte("HTTP/1.1 200 OK\r\n\r\nall of it"))
	})
	r, err := send(newPool(t, toClose.url), "/hit/a")
	if err != nil || string(r.Body) != "all of it" {
		t.Errorf("body to the close: %q, %v; want \"all of it\"", r.Body, err)
	}
	cut := newRawServer(t, func(conn net.Conn, br *bufio.Reader) {
		readRequest(br)
		conn.Write([]byte("HTTP/1.1 200 OK\r\nContent-Length: 10\r\n\r\nabc"))
	})
	if _, err := send(newPool(t, cut.url), "/hit/a"); err == nil || !strings.Contains(err.Error(), "unexpected EOF") {
		t.Errorf("cut answer: err = %v; want an unexpected EOF", err)
	}
}

// TestWholeRequestServerClosedIdle: a connection the server closed while
// it sat idle is not an answer: the request goes once more on a fresh
// connection. A fresh connection closed without an answer is an error,
// not retried: the server may have acted on the request.
func TestWholeRequestServerClosedIdle(t *testing.T) {
	srv := newRawServer(t, func(conn net.Conn, br *bufio.Reader) {
		// One answer a connection, kept alive as far as the client knows.
		if readRequest(br) != "" {
			conn.Write([]byte("HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok"))
		}
	})
	c := newPool(t, srv.url)
	for i := range 3 {
		if r, err := send(c, "/hit/a"); err != nil || string(r.Body) != "ok" {
			t.Fatalf("request %d: %q, %v; want ok on a fresh connection", i, r.Body, err)
		}
	}
	if got := srv.accepted.Load(); got != 3 {
		t.Errorf("three requests took %d connections, want 3", got)
	}

	silent := newRawServer(t, func(conn net.Conn, br *bufio.Reader) { readRequest(br) })
	_, err := send(newPool(t, silent.url), "/hit/a")
	if err == nil || !strings.Contains(err.Error(), "EOF") {
		t.Errorf("closed without an answer: err = %v; want EOF", err)
	}
	if got := silent.accepted.Load(); got != 1 {
		t.Errorf("a fresh connection closed without an answer was tried %d times, want 1", got)
	}
}

// TestWholeRequestTimeoutAndCancel: a request past its context's deadline
// fails with the deadline, and one whose context is cancelled fails with
// the cancellation, both while the server holds the answer back.
func TestWholeRequestTimeoutAndCancel(t *testing.T) {
	hold := make(chan struct{})
	srv := newRawServer(t, func(conn net.Conn, br *bufio.Reader) {
		readRequest(br)
		<-hold
	})
	t.Cleanup(func() { close(hold) }) // runs before the server's cleanup
	c := newPool(t, srv.url)

	ctx, cancel := context.WithTimeout(context.Background(), 100*time.Millisecond)
	defer cancel()
	_, err := c.Send(ctx, burst.Wire{Method: http.MethodPost, Target: "/hit/a"})
	if !errors.Is(err, context.DeadlineExceeded) {
		t.Errorf("past the deadline: err = %v; want the deadline exceeded", err)
	}

	ctx, cancel = context.WithCancel(context.Background())
	started := make(chan struct{})
	done := make(chan error, 1)
	go func() {
		close(started)
		_, err := c.Send(ctx, burst.Wire{Method: http.MethodPost, Target: "/hit/b"})
		done <- err
	}()
	<-started
	time.Sleep(20 * time.Millisecond) // let it block on the answer (a test that passes either way if not)
	cancel()
	if err := <-done; !errors.Is(err, context.Canceled) {
		t.Errorf("cancelled: err = %v; want the cancellation", err)
	}
}

// TestWholeRequestsConcurrent: many goroutines sending at once over the
// pooled connections each get their own answer, never another's.
func TestWholeRequestsConcurrent(t *testing.T) {
	srv := newRawServer(t, func(conn net.Conn, br *bufio.Reader) {
		for {
			line := readRequest(br)
			if line == "" {
				return
			}
			path := strings.Fields(line)[1]
			if _, err := fmt.Fprintf(conn, "HTTP/1.1 200 OK\r\nContent-Length: %d\r\n\r\n%s", len(path), path); err != nil {
				return
			}
		}
	})
	c := newPool(t, srv.url)
	const workers, each = 20, 25
	var wg sync.WaitGroup
	errs := make([]error, workers)
	for w := range workers {
		wg.Go(func() {
			for i := range each {
				path := fmt.Sprintf("/hit/w%d-r%d", w, i)
				r, err := send(c, path)
				if err == nil && string(r.Body) != path {
					err = fmt.Errorf("%s answered %q", path, r.Body)
				}
				if err != nil {
					errs[w] = err
					return
				}
			}
		})
	}
	wg.Wait()
	for _, err := range errs {
		if err != nil {
			t.Error(err)
		}
	}
	if got := srv.accepted.Load(); got > workers {
		t.Errorf("%d workers opened %d connections: idle ones were not reused", workers, got)
	}
}

// TestWholeRequestBounds: an answer's body of exactly MaxAnswerBytes and
// header lines of exactly MaxHeaderBytes are read; one byte more of
// either is refused, saying which bound it passed.
func TestWholeRequestBounds(t *testing.T) {
	// headed is an answer of body whose header lines (without their
	// CRLFs, as the bound counts them) come to exactly size bytes, its
	// Content-Length included, in lines well under a read buffer.
	headed := func(size int, body string) string {
		length := "Content-Length: " + strconv.Itoa(len(body))
		var b strings.Builder
		b.WriteString("HTTP/1.1 200 OK\r\n" + length + "\r\n")
		for left, i := size-len(length), 0; left > 0; i++ {
			name := fmt.Sprintf("X-Pad-%d: ", i)
			n := min(left, 1000)
			if n-len(name) < 1 { // too short for a line of its own: widen the last one
				t.Fatalf("cannot pad %d bytes", size)
			}
			b.WriteString(name + strings.Repeat("a", n-len(name)) + "\r\n")
			left -= n
		}
		return b.String() + "\r\n" + body
	}
	body := strings.Repeat("b", burst.MaxAnswerBytes)
	for _, tt := range []struct {
		name, raw string
		err       string
	}{
		{"body at the bound", headed(100, body), ""},
		{"body over the bound", headed(100, body+"b"), "answer over"},
		{"headers at the bound", headed(burst.MaxHeaderBytes, "ok"), ""},
		{"headers over the bound", headed(burst.MaxHeaderBytes+1, "ok"), "headers over"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			r, err := send(newPool(t, newRawServer(t, answering(tt.raw)).url), "/hit/a")
			if tt.err != "" {
				if err == nil || !strings.Contains(err.Error(), tt.err) {
					t.Fatalf("err = %v; want one saying %q", err, tt.err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if want := tt.raw[strings.Index(tt.raw, "\r\n\r\n")+4:]; string(r.Body) != want {
				t.Errorf("body of %d bytes, want %d", len(r.Body), len(want))
			}
		})
	}
}
