// Package guarded is the HTTP server racelab serve runs: HTTP/1.1 and
// HTTP/2 with prior knowledge (h2c), guarded as a service on a
// developer's machine must be, since any web page the developer opens can
// send requests to it (DNS rebinding, cross-site requests, a flood of
// connections). It knows nothing of what it serves: the HTTP contract
// (package httpapi) and the classroom page run behind it, and answer
// their errors as its refusals are answered, in JSON (WriteError).
package guarded

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log"
	"net"
	"net/http"
	"strings"
	"sync"
	"sync/atomic"
	"time"
)

// Defaults of Server, in one place.
const (
	// DefaultShutdownTimeout is how long Server waits for requests in
	// flight when it is stopped, before it closes their connections.
	DefaultShutdownTimeout = 10 * time.Second
	// DefaultMaxStreams is the HTTP/2 streams Server lets one connection
	// have open at once, and so the widest single-packet burst it takes.
	DefaultMaxStreams = 250
	// DefaultMaxConns is how many connections Server keeps open at once;
	// further ones wait, unanswered, in the kernel's accept queue until one
	// closes. Every connection costs a file descriptor, and idle ones once
	// piled up until serve could open no file at all. 1024 covers an
	// HTTP/1.1 lastbyte burst of 1,000 (a connection per request); an h2
	// burst needs one connection per DefaultMaxStreams requests.
	DefaultMaxConns = 1024
	// DefaultReadHeaderTimeout bounds how long a request's head may take to
	// arrive. A lastbyte burst holds back the final byte of each head until
	// its release, which follows staging by milliseconds to seconds; a
	// client that never finishes is cut off, so it cannot hold a
	// connection forever.
	DefaultReadHeaderTimeout = 30 * time.Second
	// DefaultIdleTimeout closes a kept-alive connection that carries no
	// request for this long. Clients warm connections just before a burst,
	// so it only has to outlast one trial's preparation; racelab's client
	// opens a fresh connection when it finds one closed.
	DefaultIdleTimeout = 2 * time.Minute
)

// Server serves a Handler on a listener, over HTTP/1.1 and HTTP/2 with
// prior knowledge (h2c), until its context ends. It guards the handler as
// a service on a developer's machine must be guarded, since any web page
// the developer opens can send requests to it:
//
//   - Host: unless Public, only requests naming this machine's loopback
//     (see LoopbackHost) are answered; others get 421 Misdirected Request.
//     A page whose own name was rebound to 127.0.0.1 (DNS rebinding) sends
//     its own name, so it reaches nothing.
//   - Origin: a state-changing request (POST and the like) that a browser
//     marks as coming from another origin (Sec-Fetch-Site other than
//     same-origin or none, or an Origin header naming another host) is
//     refused 403, Public or not (cross-site request forgery). curl and
//     racelab's own client send neither header and pass.
//   - Connections: at most MaxConns open at once; the rest wait in the
//     kernel's accept queue until one closes. A head that does not arrive in
//     ReadHeaderTimeout, and a connection idle for IdleTimeout, are closed.
//
// Refusals are JSON {"error":…} like every other answer.
type Server struct {
	// Handler is what is served, usually an *handler.Handler.
	Handler http.Handler
	// ErrorLog receives net/http's complaints about broken connections and
	// the notice that the connection cap was reached; nil discards them.
	ErrorLog io.Writer
	// ShutdownTimeout bounds the wait for requests in flight at shutdown;
	// zero means DefaultShutdownTimeout.
	ShutdownTimeout time.Duration
	// MaxConns caps the connections open at once; zero means
	// DefaultMaxConns, and a negative cap is an error of Serve.
	MaxConns int
	// Public answers requests whatever their Host names. The cross-origin
	// check stays.
	Public bool
	// ReadHeaderTimeout and IdleTimeout bound a request head's arrival and
	// a connection's idleness; zero means DefaultReadHeaderTimeout and
	// DefaultIdleTimeout.
	ReadHeaderTimeout, IdleTimeout time.Duration
}

// Serve answers requests on ln until ctx ends, then stops taking new ones,
// lets every request in flight finish and answer, and returns. Only after
// it returns may the store be closed: nothing already answered is lost.
// ln is closed when Serve returns.
func (s Server) Serve(ctx context.Context, ln net.Listener) error {
	if s.MaxConns < 0 {
		ln.Close()
		return fmt.Errorf("serve on %s: a cap of %d connections; want 1 or more, or 0 for %d", ln.Addr(), s.MaxConns, DefaultMaxConns)
	}
	var protocols http.Protocols
	protocols.SetHTTP1(true)
	protocols.SetUnencryptedHTTP2(true)
	logTo := s.ErrorLog
	if logTo == nil {
		logTo = io.Discard
	}
	logger := log.New(logTo, "racelab serve: ", 0)
	maxConns := cmpOr(s.MaxConns, DefaultMaxConns)
	ln = &limitListener{Listener: ln, sem: make(chan struct{}, maxConns), done: make(chan struct{}), born: time.Now(),
		full: func() {
			logger.Printf("%d connections open, the cap (--max-conns): new ones wait until one closes", maxConns)
		}}
	srv := &http.Server{
		Handler:           s.guard(s.Handler),
		Protocols:         &protocols,
		HTTP2:             &http.HTTP2Config{MaxConcurrentStreams: DefaultMaxStreams},
		ReadHeaderTimeout: cmpOr(s.ReadHeaderTimeout, DefaultReadHeaderTimeout),
		IdleTimeout:       cmpOr(s.IdleTimeout, DefaultIdleTimeout),
		ErrorLog:          logger,
		// Requests in flight finish at shutdown: their context is not the
		// server's.
		BaseContext: func(net.Listener) context.Context { return context.Background() },
	}
	served := make(chan error, 1)
	go func() { served <- srv.Serve(ln) }()
	select {
	case err := <-served:
		return fmt.Errorf("serve on %s: %w", ln.Addr(), err)
	case <-ctx.Done():
	}
	timeout := cmpOr(s.ShutdownTimeout, DefaultShutdownTimeout)
	sctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	err := srv.Shutdown(sctx)
	if err != nil {
		_ = srv.Close()
		err = fmt.Errorf("requests still in flight after %s were cut off: %w", timeout, err)
	}
	<-served // http.ErrServerClosed, now that it has stopped
	return err
}

// cmpOr is cmp.Or for settings where only a positive value is a choice.
func cmpOr[T int | time.Duration](v, def T) T {
	if v <= 0 {
		return def
	}
	return v
}

// Refusals of Server's guard, as the client reads them.
const (
	msgMisdirected = "this server answers only requests for localhost, 127.0.0.1 or [::1] (DNS rebinding protection); run racelab serve with --public to answer any host name"
	msgCrossOrigin = "cross-origin request refused: a page from another origin may not write to this server (CSRF protection); send the request without an Origin header, as curl does"
)

// guard wraps next in the Host and cross-origin checks (see Server).
// The refusals come before next reads the request's body: a refused
// request is not part of any burst, so it need not wait for its end.
func (s Server) guard(next http.Handler) http.Handler {
	cop := http.NewCrossOriginProtection()
	cop.SetDenyHandler(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		WriteError(w, http.StatusForbidden, msgCrossOrigin)
	}))
	checked := cop.Handler(next)
	if s.Public {
		return checked
	}
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if !loopbackHostHeader(r.Host) {
			WriteError(w, http.StatusMisdirectedRequest, fmt.Sprintf("host %q: %s", r.Host, msgMisdirected))
			return
		}
		checked.ServeHTTP(w, r)
	})
}

// LoopbackHost says whether host, a name or an IP address without a port,
// names this machine and nothing else: localhost (in any case), an address
// of 127.0.0.0/8, or ::1. Names under .localhost (app.localhost) are not
// taken: RFC 6761 lets resolvers send them to loopback but does not make
// them, and a browser whose resolver asks the network for one would hand
// the attacker's page exactly the name this check is meant to refuse.
func LoopbackHost(host string) bool {
	if strings.EqualFold(host, "localhost") {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}

// loopbackHostHeader says whether a Host header (name or address, with or
// without a port, IPv6 in brackets) is a loopback name. An empty Host, which
// only HTTP/1.0 allows, is refused: it names nothing.
func loopbackHostHeader(hostport string) bool {
	host := hostport
	if h, _, err := net.SplitHostPort(hostport); err == nil {
		host = h
	} else if strings.HasPrefix(hostport, "[") && strings.HasSuffix(hostport, "]") {
		host = hostport[1 : len(hostport)-1]
	}
	return LoopbackHost(host)
}

// limitListener accepts at most cap(sem) connections open at once, as
// golang.org/x/net/netutil.LimitListener does, but keeps the accepted
// connection's CloseWrite: net/http half-closes a connection before
// dropping it so that an answer sent ahead of an unread request body (a
// 413) reaches the client instead of being lost to a reset.
type limitListener struct {
	net.Listener
	sem       chan struct{} // a slot per open connection
	done      chan struct{} // closed by Close, to free an Accept waiting for a slot
	closeOnce sync.Once
	full      func() // told when an Accept has to wait for a slot
	// warned is when full was last told, as time since born plus one (0:
	// never), read off the monotonic clock so that a wall-clock jump
	// neither floods the log nor silences it.
	warned atomic.Int64
	born   time.Time
}

// fullNoticeEvery spaces the notices that the cap was reached, so that a
// flood of connections does not become a flood of log lines.
const fullNoticeEvery = time.Minute

func (l *limitListener) Accept() (net.Conn, error) {
	select {
	case l.sem <- struct{}{}:
	default:
		now := int64(time.Since(l.born)) + 1
		if last := l.warned.Load(); last == 0 || now-last >= int64(fullNoticeEvery) {
			l.warned.Store(now)
			l.full()
		}
		select {
		case l.sem <- struct{}{}:
		case <-l.done:
			return nil, fmt.Errorf("accept on %s: %w", l.Addr(), net.ErrClosed)
		}
	}
	c, err := l.Listener.Accept()
	if err != nil {
		<-l.sem
		return nil, err
	}
	return &limitConn{Conn: c, release: func() { <-l.sem }}, nil
}

func (l *limitListener) Close() error {
	err := l.Listener.Close()
	l.closeOnce.Do(func() { close(l.done) })
	return err
}

// limitConn gives its slot back once, when it is closed.
type limitConn struct {
	net.Conn
	releaseOnce sync.Once
	release     func()
}

func (c *limitConn) Close() error {
	err := c.Conn.Close()
	c.releaseOnce.Do(c.release)
	return err
}

// CloseWrite half-closes the connection when it can (see limitListener).
func (c *limitConn) CloseWrite() error {
	if cw, ok := c.Conn.(interface{ CloseWrite() error }); ok {
		return cw.CloseWrite()
	}
	return nil
}

// WriteError answers code with {"error":msg}.
func WriteError(w http.ResponseWriter, code int, msg string) {
	WriteJSON(w, code, map[string]string{"error": msg})
}

// WriteJSON answers code with v as JSON, as every answer of racelab serve
// is written: never cached, never sniffed as anything but JSON, and keys
// as they were sent (Arabic included, no HTML escapes).
func WriteJSON(w http.ResponseWriter, code int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Cache-Control", "no-store")
	// A browser must not read a key echoed back as anything but JSON.
	w.Header().Set("X-Content-Type-Options", "nosniff")
	w.WriteHeader(code)
	enc := json.NewEncoder(w)
	enc.SetEscapeHTML(false)
	_ = enc.Encode(v) // a client that went away is no error of ours
}
