// Package httpapitest serves a handler as racelab serve does, for tests
// that play against the HTTP contract over real sockets: racelab's own
// Server (HTTP/1.1 and h2c, the loopback guards) on a free port of
// 127.0.0.1, as net/http/httptest does for net/http's server.
package httpapitest

import (
	"context"
	"io"
	"net"
	"net/http"
	"strings"
	"testing"

	"github.com/racelab/racelab/targets/httpapi/server"
)

// Serve serves h with server.Server on a free loopback port and returns
// its base URL, http://127.0.0.1:PORT. At cleanup the server stops, lets
// the requests in flight finish, and is waited for; a failure to serve
// fails t. A store behind h is closed by a cleanup registered before
// Serve, so that it runs after the server has stopped.
func Serve(t testing.TB, h http.Handler) string {
	t.Helper()
	return ServeWith(t, server.Server{Handler: h})
}

// ServeWith is Serve with srv's settings (a lowered cap, a token).
func ServeWith(t testing.TB, srv server.Server) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	ctx, stop := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- srv.Serve(ctx, ln) }()
	t.Cleanup(func() {
		stop()
		if err := <-done; err != nil {
			t.Errorf("serve: %v", err)
		}
	})
	return "http://" + ln.Addr().String()
}

// Answer is one request's whole answer.
type Answer struct {
	Status int
	Header http.Header
	Body   []byte
}

// Do makes one request with body (none when empty) and header, given as
// name, value, name, value…, and reads its whole answer. A request that
// cannot be made, or an answer that cannot be read, fails t: a test
// asks a server it started, so that is the test's failure, not the
// server's answer.
func Do(t testing.TB, method, url, body string, header ...string) Answer {
	t.Helper()
	req, err := http.NewRequest(method, url, strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	for i := 0; i+1 < len(header); i += 2 {
		req.Header.Set(header[i], header[i+1])
	}
	return Send(t, req)
}

// Send sends req as Do does, for a request Do cannot make (its own Host).
func Send(t testing.TB, req *http.Request) Answer {
	t.Helper()
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return Answer{resp.StatusCode, resp.Header, b}
}
