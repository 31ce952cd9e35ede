package server

import (
	"context"
	"crypto/rand"
	"crypto/subtle"
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

	"github.com/racelab/racelab/internal/usage"
	"github.com/racelab/racelab/targets/httpapi/burst"
)

// Defaults of Server, in one place.
const (
	// DefaultShutdownTimeout is how long Server waits for requests in
	// flight when it is stopped, before it closes their connections.
	DefaultShutdownTimeout = 10 * time.Second
	// DefaultMaxStreams is the HTTP/2 streams Server lets one connection
	// have open at once, and so the widest single-packet burst it takes:
	// the number the client assumes before a server's SETTINGS arrive.
	DefaultMaxStreams = burst.DefaultMaxStreams
	// DefaultMaxConns is how many connections Server keeps open at once;
	// further ones wait, unanswered, in the kernel's accept queue until one
	// closes. Every connection costs a file descriptor, and idle ones once
	// piled up until serve could open no file at all. 1024 covers an
	// HTTP/1.1 lastbyte burst of 1,000 (a connection per request); an h2
	// burst needs one connection per DefaultMaxStreams requests.
	DefaultMaxConns = 1024
	// DefaultReadHeaderTimeout bounds how long a request's head may take to
	// arrive. A lastbyte burst holds back the final byte of each head until
	// its release, which follows staging by milliseconds (staging writes a
	// few hundred bytes a connection, then releases at once); a client that
	// never finishes is cut off. At 30 s, 1,100 half-sent heads (slowloris)
	// held every slot under the cap and kept a normal request waiting 25 s;
	// 5 s bounds that wait while leaving a slow burst room to release.
	DefaultReadHeaderTimeout = 5 * time.Second
	// DefaultMaxEventStreams is how many long-lived answers (the classroom
	// page's event stream, see Stream) are open at once. They have a cap
	// of their own and do not count under MaxConns, so that pages left
	// open, or thousands of idle streams, never starve the store's
	// requests of a connection; one more stream is answered 503.
	DefaultMaxEventStreams = 256
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
//   - Token: when Token is set (serve sets one under --public), a request
//     that writes (any method but GET, HEAD and OPTIONS) must carry it, as
//     Authorization: Bearer TOKEN or as the password of basic auth; others
//     get 401. A page whose name was rebound to the server sends the
//     server's own Origin, so only a secret it cannot know stops it.
//   - Connections: at most MaxConns open at once; the rest wait in the
//     kernel's accept queue until one closes. A head that does not arrive in
//     ReadHeaderTimeout, and a connection idle for IdleTimeout, are closed.
//     An answer that stays open (Stream) gives its connection's place back
//     and takes one of MaxEventStreams instead.
//
// Refusals are JSON {"error":…} like every other answer.
type Server struct {
	// Handler is what is served, usually a *Handler.
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
	// Token, when not empty, is the secret a request that writes must
	// carry (see Server).
	Token string
	// MaxEventStreams caps the long-lived answers open at once (Stream);
	// zero means DefaultMaxEventStreams.
	MaxEventStreams int
	// Name says a field of Server (MaxConns, Public, Token) as the person
	// running it sets it, in the log and in refusals: cmd names its flags.
	// Nil says the field's own name.
	Name func(field string) string
	// ReadHeaderTimeout and IdleTimeout bound a request head's arrival and
	// a connection's idleness; zero means DefaultReadHeaderTimeout and
	// DefaultIdleTimeout.
	ReadHeaderTimeout, IdleTimeout time.Duration

	// shedIdleAfter is the package's shedIdleAfter unless set: its tests
	// shorten it, so as not to wait three times five seconds.
	shedIdleAfter time.Duration
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
	var srv *http.Server
	srv, ln = s.httpServer(ln)
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

// httpServer is the http.Server that Serve runs, with the settings it
// runs under, and ln wrapped in the connection cap.
func (s Server) httpServer(ln net.Listener) (*http.Server, net.Listener) {
	var protocols http.Protocols
	protocols.SetHTTP1(true)
	protocols.SetUnencryptedHTTP2(true)
	logTo := s.ErrorLog
	if logTo == nil {
		logTo = io.Discard
	}
	logger := log.New(logTo, "racelab serve: ", 0)
	maxConns := cmpOr(s.MaxConns, DefaultMaxConns)
	full := s.say(usage.Fieldf("MaxConns", "%d connections open, the cap ({}), none idle: new ones wait until one closes or idles", maxConns))
	ll := &limitListener{Listener: ln, sem: make(chan struct{}, maxConns), done: make(chan struct{}), born: time.Now(),
		full: func() { logger.Print(full) }, shedAfter: cmpOr(s.shedIdleAfter, shedIdleAfter)}
	ln = ll
	streams := make(chan struct{}, cmpOr(s.MaxEventStreams, DefaultMaxEventStreams))
	srv := &http.Server{
		ConnContext: func(ctx context.Context, c net.Conn) context.Context {
			lc, _ := c.(*limitConn)
			return context.WithValue(ctx, connKey{}, &connInfo{conn: lc, streams: streams})
		},
		ConnState: func(c net.Conn, st http.ConnState) {
			if lc, ok := c.(*limitConn); ok {
				ll.setIdle(lc, st == http.StateIdle)
			}
		},
		Handler:           ll.handOver(s.guard(s.Handler)),
		Protocols:         &protocols,
		HTTP2:             &http.HTTP2Config{MaxConcurrentStreams: DefaultMaxStreams},
		ReadHeaderTimeout: cmpOr(s.ReadHeaderTimeout, DefaultReadHeaderTimeout),
		IdleTimeout:       cmpOr(s.IdleTimeout, DefaultIdleTimeout),
		ErrorLog:          logger,
		// Requests in flight finish at shutdown: their context is not the
		// server's.
		BaseContext: func(net.Listener) context.Context { return context.Background() },
	}
	return srv, ln
}

// cmpOr is cmp.Or for settings where only a positive value is a choice.
func cmpOr[T int | time.Duration](v, def T) T {
	if v <= 0 {
		return def
	}
	return v
}

// say writes a message about Server's fields as Name names them.
func (s Server) say(e *usage.FieldError) string {
	if s.Name == nil {
		return e.Error()
	}
	return e.Say(s.Name)
}

// Refusals of Server's guard, as the client reads them.
const (
	msgMisdirected = "this server answers only requests for localhost, 127.0.0.1 or [::1] (DNS rebinding protection); run racelab serve with {Public} to answer any host name"
	msgCrossOrigin = "cross-origin request refused: a page from another origin may not write to this server (CSRF protection); send the request without an Origin header, as curl does"
	msgNoToken     = "this server takes writes only with its token, printed when it started ({}): send Authorization: Bearer TOKEN, or open the page at /#token=TOKEN"
)

// guard wraps next in the Host, token and cross-origin checks (see
// Server). The refusals come before next reads the request's body: a
// refused request is not part of any burst, so it need not wait for its
// end.
func (s Server) guard(next http.Handler) http.Handler {
	cop := http.NewCrossOriginProtection()
	cop.SetDenyHandler(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		WriteError(w, http.StatusForbidden, msgCrossOrigin)
	}))
	checked := cop.Handler(next)
	if s.Token != "" {
		noToken, inner := s.say(usage.Fieldf("Token", msgNoToken)), checked
		checked = http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			if writes(r.Method) && !carriesToken(r, s.Token) {
				w.Header().Set("WWW-Authenticate", `Bearer realm="racelab serve"`)
				WriteError(w, http.StatusUnauthorized, noToken)
				return
			}
			inner.ServeHTTP(w, r)
		})
	}
	if s.Public {
		return checked
	}
	misdirected := s.say(usage.Fieldf("Public", msgMisdirected))
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if !loopbackHostHeader(r.Host) {
			WriteError(w, http.StatusMisdirectedRequest, fmt.Sprintf("host %q: %s", r.Host, misdirected))
			return
		}
		checked.ServeHTTP(w, r)
	})
}

// writes says whether a request of method may change what is stored: all
// but the safe methods.
func writes(method string) bool {
	switch method {
	case http.MethodGet, http.MethodHead, http.MethodOptions:
		return false
	}
	return true
}

// carriesToken says whether r carries token, as a bearer token or as the
// password of basic auth (so that -t http://racelab:TOKEN@host/ and
// curl -u :TOKEN work), compared in constant time.
func carriesToken(r *http.Request, token string) bool {
	got, ok := strings.CutPrefix(r.Header.Get("Authorization"), "Bearer ")
	if !ok {
		_, got, ok = r.BasicAuth()
	}
	return ok && subtle.ConstantTimeCompare([]byte(strings.TrimSpace(got)), []byte(token)) == 1
}

// NewToken is a fresh secret for Server.Token: 128 random bits, in
// characters a URL and a header carry as they are.
func NewToken() string {
	return rand.Text()
}

// CheckToken says what is wrong with token as Server.Token, or nil: it
// travels in a header and in the page's address, so it is letters, digits,
// - _ . ~ only, and long enough that it cannot be guessed.
func CheckToken(token string) error {
	const want = "want 16 to 256 letters, digits, - _ . or ~ (leave it out under {Public} for a fresh one)"
	if len(token) < 16 || len(token) > 256 {
		return usage.Fieldf("Token", "{} of %d characters: "+want, len(token))
	}
	for _, c := range token {
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || strings.ContainsRune("-_.~", c)) {
			return usage.Fieldf("Token", "{} holds %q: "+want, c)
		}
	}
	return nil
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
	warned    atomic.Int64
	born      time.Time
	shedAfter time.Duration // shedIdleAfter, but in tests

	mu   sync.Mutex
	idle map[*limitConn]time.Time // connections idle between requests, since when

	waiting atomic.Int32 // Accepts waiting for a slot
}

// congested says a connection is waiting for a slot.
func (l *limitListener) congested() bool { return l.waiting.Load() > 0 }

// handOver wraps next so that, while a connection waits for a slot, an
// HTTP/1.1 answer closes its connection after it (see acquire). It is
// decided as the answer starts, not as the request does: a request in
// flight when one starts waiting hands its place over too.
func (l *limitListener) handOver(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.ProtoMajor != 1 {
			next.ServeHTTP(w, r)
			return
		}
		next.ServeHTTP(&handOverWriter{ResponseWriter: w, l: l}, r)
	})
}

// handOverWriter adds Connection: close to an answer's head when a
// connection waits for a slot.
type handOverWriter struct {
	http.ResponseWriter
	l       *limitListener
	written bool
}

func (w *handOverWriter) WriteHeader(code int) {
	if !w.written && code >= 200 {
		w.written = true
		if w.l.congested() {
			w.Header().Set("Connection", "close")
		}
	}
	w.ResponseWriter.WriteHeader(code)
}

func (w *handOverWriter) Write(p []byte) (int, error) {
	if !w.written {
		w.WriteHeader(http.StatusOK)
	}
	return w.ResponseWriter.Write(p)
}

// Unwrap lets http.ResponseController reach the connection's writer.
func (w *handOverWriter) Unwrap() http.ResponseWriter { return w.ResponseWriter }

// fullNoticeEvery spaces the notices that the cap was reached, so that a
// flood of connections does not become a flood of log lines.
const fullNoticeEvery = time.Minute

// shedIdleAfter is how long a kept-alive connection must have been idle
// before a connection waiting for a slot takes its place. A client's pool
// reuses its latest connection first, so one idle this long is one it has
// no use for; one idle for less may be carrying its next request already,
// which closing it would lose (measured: 2 of 4,400 requests at 250 ms).
const shedIdleAfter = 5 * time.Second

// Accept takes the next connection off the kernel's queue first, then
// waits for a slot with it, unserved: so that a connection waiting is
// known (congested), and at most one more than the cap is open.
func (l *limitListener) Accept() (net.Conn, error) {
	c, err := l.Listener.Accept()
	if err != nil {
		return nil, err
	}
	if err := l.acquire(); err != nil {
		c.Close()
		return nil, err
	}
	return &limitConn{Conn: c, release: func() { <-l.sem }}, nil
}

// acquire takes a slot for the next connection. racelab's own load at
// --concurrency 1000 opened a few dozen connections more than it used (a
// request dials when none is idle, and keeps the dial once one is), and
// these held the last slots while new ones waited seconds, or timed out.
// So when all are taken, a connection idle for shedIdleAfter gives its
// place up (shedIdle), and while one waits, answers on HTTP/1.1 say
// Connection: close (congested), so that a busy connection hands its
// place over after its answer, which no client mistakes for a failure.
func (l *limitListener) acquire() error {
	l.waiting.Add(1)
	defer l.waiting.Add(-1)
	for {
		select {
		case l.sem <- struct{}{}:
			return nil
		default:
		}
		if l.shedIdle() {
			continue // its slot was given back as it closed
		}
		now := int64(time.Since(l.born)) + 1
		if last := l.warned.Load(); last == 0 || now-last >= int64(fullNoticeEvery) {
			l.warned.Store(now)
			l.full()
		}
		select {
		case l.sem <- struct{}{}:
			return nil
		case <-l.done:
			return fmt.Errorf("accept on %s: %w", l.Addr(), net.ErrClosed)
		case <-time.After(l.shedAfter / 4): // one may have idled long enough
		}
	}
}

// setIdle records whether c is idle between requests (http.StateIdle),
// and since when.
func (l *limitListener) setIdle(c *limitConn, idle bool) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if !idle {
		delete(l.idle, c)
		return
	}
	if l.idle == nil {
		l.idle = map[*limitConn]time.Time{}
	}
	l.idle[c] = time.Now()
}

// shedIdle closes the connection idle the longest, if one has been idle
// for shedAfter, and says whether it did: its slot is then free.
func (l *limitListener) shedIdle() bool {
	l.mu.Lock()
	var oldest *limitConn
	var since time.Time
	for c, t := range l.idle {
		// Bytes read since it went idle are its next request arriving
		// (net/http calls it active only once the head is whole).
		if c.readAt.Load() < t.UnixNano() && (oldest == nil || t.Before(since)) {
			oldest, since = c, t
		}
	}
	if oldest == nil || time.Since(since) < l.shedAfter {
		l.mu.Unlock()
		return false
	}
	delete(l.idle, oldest)
	l.mu.Unlock()
	oldest.Close()
	return true
}

func (l *limitListener) Close() error {
	err := l.Listener.Close()
	l.closeOnce.Do(func() { close(l.done) })
	return err
}

// limitConn gives its slot back once: when it is closed, or when its one
// request becomes a stream (Stream).
type limitConn struct {
	net.Conn
	releaseOnce sync.Once
	release     func()
	readAt      atomic.Int64 // when bytes last arrived, Unix nanoseconds
}

// Read notes when bytes arrive, so that a connection whose next request
// has begun is not taken for idle (shedIdle).
func (c *limitConn) Read(p []byte) (int, error) {
	n, err := c.Conn.Read(p)
	if n > 0 {
		c.readAt.Store(time.Now().UnixNano())
	}
	return n, err
}

func (c *limitConn) Close() error {
	err := c.Conn.Close()
	c.releaseOnce.Do(c.release)
	return err
}

// connKey keys a request's connInfo in its context.
type connKey struct{}

// connInfo is what Stream needs of the connection a request came on.
type connInfo struct {
	conn    *limitConn    // nil when the listener is not Server's own
	streams chan struct{} // a slot per open stream, shared by the server
}

// msgTooManyStreams is the answer to one stream more than the cap.
const msgTooManyStreams = "too many event streams open (%d); the page retries by itself, or reload it in a moment"

// Stream claims a place for an answer that stays open (the classroom
// page's event stream) among Server's MaxEventStreams, and answers 503
// with Retry-After itself when none is free. Over HTTP/1.1 the connection
// gives its place under MaxConns back at once, so that streams, however
// many wait, never take one from a store's request; it is closed when the
// stream ends. Call done when the answer ends. A request not served by
// Server (a test's httptest server) has no cap: Stream lets it through.
func Stream(w http.ResponseWriter, r *http.Request) (done func(), ok bool) {
	info, _ := r.Context().Value(connKey{}).(*connInfo)
	if info == nil {
		return func() {}, true
	}
	select {
	case info.streams <- struct{}{}:
	default:
		w.Header().Set("Connection", "close")
		w.Header().Set("Retry-After", "5")
		WriteError(w, http.StatusServiceUnavailable, fmt.Sprintf(msgTooManyStreams, cap(info.streams)))
		return nil, false
	}
	if r.ProtoMajor == 1 && info.conn != nil {
		w.Header().Set("Connection", "close")
		info.conn.releaseOnce.Do(info.conn.release)
	}
	var once sync.Once
	return func() { once.Do(func() { <-info.streams }) }, true
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

// Only answers 405, with an Allow header and a line saying which method
// to use, to any method but m (and HEAD for GET, whose body net/http
// drops), and passes the rest to next: the contract's routes and the
// classroom page's share one refusal.
func Only(m string, next http.HandlerFunc) http.HandlerFunc {
	allow := m
	if m == http.MethodGet {
		allow = "GET, HEAD"
	}
	return func(w http.ResponseWriter, r *http.Request) {
		if r.Method != m && (m != http.MethodGet || r.Method != http.MethodHead) {
			w.Header().Set("Allow", allow)
			WriteError(w, http.StatusMethodNotAllowed, fmt.Sprintf("%s %s: method not allowed; use %s", r.Method, r.URL.Path, m))
			return
		}
		next(w, r)
	}
}
