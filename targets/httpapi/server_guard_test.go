package httpapi_test

import (
	"context"
	"errors"
	"io"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/racelab/racelab/targets/httpapi/burst"
	"github.com/racelab/racelab/targets/httpapi/httpapitest"
	"github.com/racelab/racelab/targets/httpapi/server"
)

// serveWith runs the contract over an actor store with srv's settings on a
// free loopback port, stopped and waited for at cleanup, and returns the
// address.
func serveWith(t *testing.T, srv server.Server) string {
	t.Helper()
	if srv.Handler == nil {
		srv.Handler = server.New(open(t, "actor").Store)
	}
	return strings.TrimPrefix(httpapitest.ServeWith(t, srv), "http://")
}

// TestGuard sends requests with the Host, Origin and Sec-Fetch-Site that a
// browser would, over HTTP/1.1 and h2c, to a loopback server and to a
// --public one: a page on another site reaches neither, under its own name
// (DNS rebinding) nor under the server's (CSRF); curl and racelab, which
// send no Origin, reach both.
func TestGuard(t *testing.T) {
	servers := map[bool]string{false: serveWith(t, server.Server{}), true: serveWith(t, server.Server{Public: true})}
	// self stands for the server's own address, in a Host or an Origin.
	const self = "SELF"
	tests := []struct {
		name         string
		public       bool
		method, host string
		header       map[string]string
		status       int
		says         string
	}{
		{"own address", false, "POST", self, nil, 200, ""},
		{"localhost with port", false, "POST", "localhost:8787", nil, 200, ""},
		{"localhost in capitals", false, "POST", "LocalHost:8787", nil, 200, ""},
		{"localhost without port", false, "POST", "localhost", nil, 200, ""},
		{"another loopback address", false, "POST", "127.1.2.3", nil, 200, ""},
		{"IPv6 loopback with port", false, "POST", "[::1]:8787", nil, 200, ""},
		{"IPv6 loopback without port", false, "POST", "[::1]", nil, 200, ""},
		{"rebound name", false, "POST", "evil.example:8787", nil, 421, "DNS rebinding"},
		{"rebound name, GET", false, "GET", "evil.example", nil, 421, "to answer any host name"},
		{"name under localhost", false, "POST", "app.localhost:8787", nil, 421, "DNS rebinding"},
		{"any address", false, "POST", "0.0.0.0:8787", nil, 421, "DNS rebinding"},
		{"a LAN address", false, "POST", "192.168.1.20:8787", nil, 421, "DNS rebinding"},
		{"same origin", false, "POST", self, map[string]string{"Origin": "http://" + self}, 200, ""},
		{"same origin, no port", false, "POST", "localhost", map[string]string{"Origin": "http://localhost"}, 200, ""},
		{"fetch metadata: same origin", false, "POST", self, map[string]string{"Sec-Fetch-Site": "same-origin"}, 200, ""},
		{"fetch metadata: typed by the user", false, "POST", self, map[string]string{"Sec-Fetch-Site": "none"}, 200, ""},
		{"cross-site origin", false, "POST", self, map[string]string{"Origin": "https://evil.example"}, 403, "CSRF"},
		{"opaque origin", false, "POST", self, map[string]string{"Origin": "null"}, 403, "CSRF"},
		{"fetch metadata: cross-site", false, "POST", self, map[string]string{"Sec-Fetch-Site": "cross-site"}, 403, "CSRF"},
		{"fetch metadata: another port", false, "POST", self, map[string]string{"Sec-Fetch-Site": "same-site", "Origin": "http://localhost:3000"}, 403, "CSRF"},
		{"cross-site read", false, "GET", self, map[string]string{"Origin": "https://evil.example", "Sec-Fetch-Site": "cross-site"}, 200, ""},
		{"public: any name", true, "POST", "evil.example:8787", nil, 200, ""},
		{"public: a LAN address", true, "POST", "192.168.1.20:8787", nil, 200, ""},
		{"public: same origin by name", true, "POST", "racelab.lan:8787", map[string]string{"Origin": "http://racelab.lan:8787"}, 200, ""},
		{"public: cross-site origin", true, "POST", "racelab.lan:8787", map[string]string{"Origin": "https://evil.example"}, 403, "CSRF"},
		{"public: fetch metadata: cross-site", true, "POST", self, map[string]string{"Sec-Fetch-Site": "cross-site"}, 403, "CSRF"},
	}
	clients := map[string]*http.Client{"HTTP/1.1": {}, "h2c": h2cClient(t)}
	for proto, c := range clients {
		for _, tt := range tests {
			t.Run(proto+"/"+tt.name, func(t *testing.T) {
				addr := servers[tt.public]
				path := "/get/k"
				if tt.method == "POST" {
					path = "/hit/k"
				}
				req, err := http.NewRequest(tt.method, "http://"+addr+path, nil)
				if err != nil {
					t.Fatal(err)
				}
				req.Host = strings.ReplaceAll(tt.host, self, addr)
				for k, v := range tt.header {
					req.Header.Set(k, strings.ReplaceAll(v, self, addr))
				}
				resp, err := c.Do(req)
				if err != nil {
					t.Fatal(err)
				}
				defer resp.Body.Close()
				body, _ := io.ReadAll(resp.Body)
				if resp.StatusCode != tt.status || !strings.Contains(string(body), tt.says) {
					t.Errorf("%s %s with Host %q and %v = %d %s, want %d saying %q", tt.method, path, req.Host, tt.header, resp.StatusCode, body, tt.status, tt.says)
				}
				if tt.status != 200 && (resp.Header.Get("Content-Type") != "application/json" || !strings.HasPrefix(string(body), `{"error":`)) {
					t.Errorf("refusal %q (%s) is not a JSON error", body, resp.Header.Get("Content-Type"))
				}
			})
		}
	}
}

// h2cClient speaks HTTP/2 with prior knowledge, as racelab's h2 bursts do.
func h2cClient(t *testing.T) *http.Client {
	var p http.Protocols
	p.SetUnencryptedHTTP2(true)
	tr := &http.Transport{Protocols: &p}
	t.Cleanup(tr.CloseIdleConnections)
	return &http.Client{Transport: tr}
}

// TestGuardRefusesNoHost: an HTTP/1.0 request may name no host at all;
// it names no loopback either, so it is refused.
func TestGuardRefusesNoHost(t *testing.T) {
	addr := serveWith(t, server.Server{})
	c := burst.Dial(t, addr, 5*time.Second)
	status := c.RoundTrip(t, "POST /hit/k HTTP/1.0\r\n\r\n", 5*time.Second)
	if status != http.StatusMisdirectedRequest {
		t.Errorf("HTTP/1.0 POST without Host = %d, want 421", status)
	}
}

func TestLoopbackHost(t *testing.T) {
	for host, want := range map[string]bool{
		"localhost": true, "LOCALHOST": true, "127.0.0.1": true, "127.255.0.9": true, "::1": true,
		"app.localhost": false, "localhost.example": false, "0.0.0.0": false, "::": false,
		"10.0.0.1": false, "": false, "[::1]": false, "127.0.0.1:80": false,
	} {
		if got := server.LoopbackHost(host); got != want {
			t.Errorf("LoopbackHost(%q) = %t, want %t", host, got, want)
		}
	}
}

const getStats = "GET /stats HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n"

// TestConnectionCap opens more connections than the cap: the first cap
// each with a request in flight (its body not sent yet), the rest with a
// whole request. Those wait unanswered (accepted by the kernel, not served)
// while the served ones are busy; once a busy one is answered it closes
// (Connection: close, since one waits) and a waiting one takes its place.
func TestConnectionCap(t *testing.T) {
	const (
		answerWithin = 5 * time.Second        // generous: an answer is expected
		silentFor    = 300 * time.Millisecond // how long a waiting one must stay unanswered
	)
	for _, tt := range []struct{ cap, extra int }{{1, 1}, {3, 2}, {8, 4}} {
		logged := newFileLog(t)
		addr := serveWith(t, server.Server{MaxConns: tt.cap, ErrorLog: logged})
		conns := make([]*burst.Conn, tt.cap+tt.extra)
		for i := range conns {
			conns[i] = burst.Dial(t, addr, 5*time.Second)
			req := getStats
			if i < tt.cap {
				req = "POST /hit/k HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Length: 1\r\n\r\n" // its body byte comes later
			}
			if _, err := io.WriteString(conns[i], req); err != nil {
				t.Fatal(err)
			}
		}
		for i := tt.cap; i < len(conns); i++ {
			if got := conns[i].Status(t, silentFor); got != 0 {
				t.Fatalf("cap %d: connection %d answered %d while %d were busy, want it to wait", tt.cap, i+1, got, tt.cap)
			}
		}
		// Each busy connection answered hands its place to a waiting one.
		for i := range tt.extra {
			if got := conns[i].RoundTrip(t, "x", answerWithin); got != http.StatusRequestEntityTooLarge && got != http.StatusOK {
				t.Fatalf("cap %d: busy connection %d = %d once its body came, want its answer", tt.cap, i+1, got)
			}
			if got := conns[tt.cap+i].Status(t, answerWithin); got != http.StatusOK {
				t.Fatalf("cap %d: waiting connection %d = %d after a busy one was answered, want 200", tt.cap, tt.cap+i+1, got)
			}
		}
		// The cap was reached once per waiting connection; it is said once.
		if n := strings.Count(logged.String(), "connections open, the cap"); n != 1 {
			t.Errorf("cap %d: the log says %d times that the cap was reached, want once:\n%s", tt.cap, n, logged.String())
		}
	}
}

// TestTimeoutsFreeConnections: a client that never finishes its request's
// head, or keeps its connection idle, loses it, and with it its slot under
// the cap, so idle connections cannot pile up.
func TestTimeoutsFreeConnections(t *testing.T) {
	const timeout = 200 * time.Millisecond
	for _, tt := range []struct {
		name  string
		first string // what the first connection sends, then nothing
	}{
		{"a head never finished", "GET /stats HTTP/1.1\r\nHost: 127.0.0.1\r\n"},
		{"an idle connection", getStats},
		{"nothing at all", ""},
	} {
		t.Run(tt.name, func(t *testing.T) {
			addr := serveWith(t, server.Server{MaxConns: 1, ReadHeaderTimeout: timeout, IdleTimeout: timeout})
			first := burst.Dial(t, addr, 5*time.Second)
			if _, err := io.WriteString(first, tt.first); err != nil {
				t.Fatal(err)
			}
			// A whole request is answered before the second connection
			// comes: answered while one waits, it would hand its place
			// over at once (Connection: close) instead of idling.
			if tt.first == getStats && first.Status(t, 5*time.Second) != http.StatusOK {
				t.Fatal("first connection not answered")
			}
			second := burst.Dial(t, addr, 5*time.Second)
			if _, err := io.WriteString(second, getStats); err != nil {
				t.Fatal(err)
			}
			start := time.Now()
			if got := second.Status(t, 5*time.Second); got != http.StatusOK {
				t.Fatalf("second connection = %d, want 200 once the first timed out", got)
			}
			if took := time.Since(start); took < timeout/2 {
				t.Errorf("second connection answered after %v: the cap of 1 did not hold", took)
			}
			if !first.ClosedBy(time.Second) {
				t.Errorf("first connection still open after the timeout")
			}
		})
	}
}

// TestServeRefusesNegativeCap: a negative cap is a mistake, not "none".
func TestServeRefusesNegativeCap(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	err = server.Server{MaxConns: -1}.Serve(context.Background(), ln)
	if err == nil || !strings.Contains(err.Error(), "want 1 or more") {
		t.Errorf("Serve with MaxConns -1 = %v, want an error", err)
	}
	if _, err := ln.Accept(); !errors.Is(err, net.ErrClosed) {
		t.Errorf("listener after the refusal: %v, want it closed", err)
	}
}
