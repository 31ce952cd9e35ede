package burst

import (
	"bytes"
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"sync"
	"sync/atomic"
	"time"
)

// Sync is how a Pool releases a burst.
type Sync string

// The ways to release a burst, tightest first.
const (
	SyncAuto     Sync = "auto"     // h2 if the server speaks it, else lastbyte
	SyncH2       Sync = "h2"       // HTTP/2 single-packet release
	SyncLastByte Sync = "lastbyte" // HTTP/1.1 last-byte synchronization
	SyncNone     Sync = "none"     // whole requests on warmed connections
)

// ParseSync reads a --sync value.
func ParseSync(s string) (Sync, error) {
	switch v := Sync(s); v {
	case SyncAuto, SyncH2, SyncLastByte, SyncNone:
		return v, nil
	case "":
		return SyncAuto, nil
	}
	return "", fmt.Errorf("sync %q: want auto, h2, lastbyte or none", s)
}

// Defaults of a Pool, in one place.
const (
	// DefaultDialTimeout bounds the whole warm-up of one connection
	// (connect, TLS, the server's HTTP/2 settings, a harmless GET) when
	// Config.DialTimeout is zero. racelab run sets DialTimeout to its
	// --timeout instead: warming a connection is one request.
	DefaultDialTimeout = 10 * time.Second
	// DefaultStreams is the most streams a Pool opens on one HTTP/2
	// connection to a loopback server, which most often allows fewer (its
	// SETTINGS_MAX_CONCURRENT_STREAMS, 250 for Go's servers): as many final
	// frames as one loopback segment carries (64 KiB, each frame 9 bytes of
	// header and at most the body's last byte). A server reads one
	// connection's frames in one loop, so every stream on it ends within
	// that loop's pass over one read; streams spread over more connections
	// wait for each connection's reader to be scheduled in turn, which on
	// a busy or one-core server costs milliseconds (issue 38: 1,000 streams
	// on 10 connections of 100 spread 10–15× the single-connection floor).
	DefaultStreams = loopbackSegment / (h2FrameHeader + 1)
	// DefaultRemoteStreams is the same for a host that is not loopback.
	// Over the internet, releases of about 20 to 30 streams a packet are
	// the ones the single-packet technique reports as landing together;
	// larger bursts go over several connections.
	DefaultRemoteStreams = 30

	// loopbackSegment is what one write carries on loopback as one
	// segment (the loopback MTU is 64 KiB), and h2FrameHeader the size of
	// an HTTP/2 frame's header.
	loopbackSegment = 64 << 10
	h2FrameHeader   = 9
)

// Config says how a Pool reaches its service. The zero value releases
// bursts as tightly as the server allows.
type Config struct {
	// Sync is how bursts are released; empty means SyncAuto.
	Sync Sync
	// Header is sent with every request, under each request's own; the
	// caller has checked it.
	Header http.Header
	// TLS configures https; nil means the system's roots. Insecure skips
	// the verification of the server's certificate.
	TLS      *tls.Config
	Insecure bool
	// Streams caps the HTTP/2 streams a connection carries in one burst;
	// zero means DefaultStreams on loopback (in practice the server's own
	// limit), DefaultRemoteStreams beyond. The server's own limit always
	// applies.
	Streams int
	// DialTimeout bounds the whole warm-up of one connection (connect,
	// TLS, the server's HTTP/2 settings, a harmless GET) and each write
	// or PING that stages a burst; zero means DefaultDialTimeout. A
	// service silent for that long fails Prepare or Stage, whatever the
	// size of the burst: connections are warmed in parallel and the first
	// failure calls off the rest.
	DialTimeout time.Duration
	// HTTP2 sends whole requests (Send, and SyncNone bursts) over HTTP/2
	// only: h2c with prior knowledge on http, ALPN on https. By default
	// they go over HTTP/1.1 with keep-alive.
	HTTP2 bool
}

// Pool holds the connections to one service that prepared requests go
// over: whole ones (Send) and synchronized bursts (Stage). Prepare opens
// and warms what a burst needs; Close closes everything. Send is safe for
// concurrent use; bursts are one at a time: Stage again only once every
// function of the last burst has returned, since the burst's connections
// are reused.
type Pool struct {
	base     *url.URL    // scheme and host; path and query for the warm-up GET
	header   http.Header // Config.Header
	streams  int
	dialWait time.Duration
	tls      *tls.Config
	http     *http.Client
	lean     *leanPool // whole requests over plain HTTP/1.1, when not nil (lean.go)

	mu     sync.Mutex // guards what follows
	mode   Sync       // as resolved by Prepare
	h1     []*h1Conn
	h2     []*h2Conn
	warmUp WarmUp
	closed bool
}

// New returns a Pool for the service at base (http or https). It opens
// nothing: Prepare does, so that a bad setting is found before any I/O.
func New(base *url.URL, cfg Config) (*Pool, error) {
	if base == nil || (base.Scheme != "http" && base.Scheme != "https") || base.Host == "" {
		return nil, fmt.Errorf("base URL %v: want http://HOST[:PORT][/PATH] or https://…", base)
	}
	mode, err := ParseSync(string(cfg.Sync))
	if err != nil {
		return nil, err
	}
	tlsCfg := &tls.Config{}
	if cfg.TLS != nil {
		tlsCfg = cfg.TLS.Clone()
	}
	if cfg.Insecure {
		tlsCfg.InsecureSkipVerify = true
	}
	if tlsCfg.ServerName == "" {
		tlsCfg.ServerName = base.Hostname()
	}
	p := &Pool{
		base:     base,
		header:   cfg.Header,
		streams:  cfg.Streams,
		dialWait: cfg.DialTimeout,
		tls:      tlsCfg,
		mode:     mode,
	}
	if p.header == nil {
		p.header = http.Header{}
	}
	if p.dialWait <= 0 {
		p.dialWait = DefaultDialTimeout
	}
	if p.streams <= 0 {
		p.streams = DefaultRemoteStreams
		if isLoopback(base.Hostname()) {
			p.streams = DefaultStreams
		}
	}
	tr := http.DefaultTransport.(*http.Transport).Clone()
	tr.TLSClientConfig = tlsCfg.Clone()
	tr.DisableCompression = true // an answer's bytes are read as sent
	tr.MaxIdleConns = 0
	tr.MaxIdleConnsPerHost = 1024
	if cfg.HTTP2 {
		var pr http.Protocols
		if base.Scheme == "https" {
			pr.SetHTTP2(true)
		} else {
			pr.SetUnencryptedHTTP2(true)
		}
		tr.Protocols = &pr
	}
	if usesLean(base, cfg.HTTP2) {
		p.lean = &leanPool{}
	}
	p.http = &http.Client{
		Transport: tr,
		// A redirect is an answer of its own, not a place to go.
		CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse },
	}
	return p, nil
}

// isLoopback says whether host is this machine for certain.
func isLoopback(host string) bool {
	if host == "localhost" {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}

// Mode is how bursts are released: as asked, or, once Prepare has probed
// the server, what SyncAuto resolved to.
func (p *Pool) Mode() Sync {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.mode
}

// headerFor is the headers w goes out with: the pool's, with w's own over
// them.
func (p *Pool) headerFor(w Wire) http.Header {
	if len(w.Header) == 0 {
		return p.header
	}
	h := p.header.Clone()
	for name, values := range w.Header {
		h[name] = values
	}
	return h
}

// warmTarget is the harmless GET that warms a connection: the base URL.
func (p *Pool) warmTarget() string {
	t := p.base.EscapedPath()
	if t == "" {
		t = "/"
	}
	if p.base.RawQuery != "" {
		t += "?" + p.base.RawQuery
	}
	return t
}

// unwrapURLError drops net/http's `Post "…": ` wrapping, since the caller
// names the request already.
func unwrapURLError(err error) error {
	var ue *url.Error
	if errors.As(err, &ue) {
		return ue.Err
	}
	return err
}

// dial opens a connection to the service, TLS for https with protos as
// ALPN, and returns it with the TCP connection beneath, for peeking. ctx
// bounds it: the caller's warmContext.
func (p *Pool) dial(ctx context.Context, protos []string) (conn, raw net.Conn, err error) {
	addr := p.base.Host
	if p.base.Port() == "" {
		addr = net.JoinHostPort(p.base.Hostname(), map[string]string{"http": "80", "https": "443"}[p.base.Scheme])
	}
	d := net.Dialer{KeepAlive: 30 * time.Second}
	raw, err = d.DialContext(ctx, "tcp", addr)
	if err != nil {
		return nil, nil, fmt.Errorf("connect to %s: %w", addr, stepErr(ctx, err))
	}
	if tcp, ok := raw.(*net.TCPConn); ok {
		// A final byte or frame must leave at once, not wait for Nagle.
		_ = tcp.SetNoDelay(true)
	}
	if p.base.Scheme != "https" {
		return raw, raw, nil
	}
	cfg := p.tls.Clone()
	cfg.NextProtos = protos
	tc := tls.Client(raw, cfg)
	if err := tc.HandshakeContext(ctx); err != nil {
		raw.Close()
		return nil, nil, fmt.Errorf("TLS handshake with %s: %w", addr, stepErr(ctx, err))
	}
	return tc, raw, nil
}

// Prepare readies the connections for bursts of n: it resolves SyncAuto by
// probing the server, then opens and warms what the mode needs (n HTTP/1.1
// connections, or enough HTTP/2 connections for n streams, or n pooled
// connections for SyncNone), so that a burst pays for none of it.
func (p *Pool) Prepare(ctx context.Context, n int) error {
	mode, err := p.resolve(ctx)
	if err != nil {
		return err
	}
	switch mode {
	case SyncH2:
		_, _, err = p.h2Conns(ctx, n)
		var noH2 *noH2Error
		if errors.As(err, &noH2) {
			err = fmt.Errorf("%s: %w (sync lastbyte works over HTTP/1.1)", p.base.Host, err)
		}
	case SyncLastByte:
		_, err = p.h1Conns(ctx, n)
	default:
		err = p.warmPool(ctx, n)
	}
	return err
}

// resolve settles SyncAuto: h2 when the server speaks HTTP/2 (ALPN on
// https, prior knowledge on http), else lastbyte. The probe's connection
// is kept for the first burst.
func (p *Pool) resolve(ctx context.Context) (Sync, error) {
	p.mu.Lock()
	mode, closed := p.mode, p.closed
	p.mu.Unlock()
	if closed {
		return "", errClosed
	}
	if mode != SyncAuto {
		return mode, nil
	}
	hc, err := p.dialH2(ctx)
	var noH2 *noH2Error
	switch {
	case errors.As(err, &noH2):
		mode = SyncLastByte
	case err != nil:
		return "", err
	default:
		mode = SyncH2
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	p.mode = mode
	if hc != nil {
		p.h2 = append(p.h2, hc)
	}
	return mode, nil
}

var errClosed = errors.New("http client closed")

// warmPool opens up to n connections in the pool whole requests go
// through (the lean one, or net/http's) with a harmless GET each, each on
// a connection of its own: the lean pool opens growParallel at a time,
// net/http's all at once. The whole warm-up has one DialTimeout, and the
// first failure calls off the rest. Only a warm-up that warmed nothing
// fails (a service no connection can be made to, or that never answers);
// one that stopped short is a figure (WarmedUp), and the rest of the
// connections open as the requests need them.
func (p *Pool) warmPool(ctx context.Context, n int) error {
	start := time.Now()
	wctx, cancel := p.warmContext(ctx)
	defer cancel()
	var warmed atomic.Int64
	stopped := warmAll(wctx, n, n, func(ctx context.Context, _ int) error {
		if p.lean != nil {
			_, err := p.roundLean(ctx, Wire{Method: http.MethodGet, Target: p.warmTarget()}, true)
			switch {
			case errors.Is(err, errTooLarge):
				err = nil // the connection was answered, then closed: warm enough
			case err != nil && ctx.Err() != nil:
				err = fmt.Errorf("GET %s: %w", p.warmTarget(), context.Cause(ctx))
			}
			if err == nil {
				warmed.Add(1)
			}
			return err
		}
		req, err := http.NewRequestWithContext(ctx, http.MethodGet, p.base.Scheme+"://"+p.base.Host+p.warmTarget(), nil)
		if err != nil {
			return err
		}
		resp, err := p.http.Do(req)
		if err != nil {
			return fmt.Errorf("GET %s: %w", p.warmTarget(), stepErr(ctx, unwrapURLError(err)))
		}
		defer resp.Body.Close()
		if _, err := io.Copy(io.Discard, io.LimitReader(resp.Body, MaxAnswerBytes)); err != nil {
			return fmt.Errorf("GET %s: read answer: %w", p.warmTarget(), stepErr(ctx, err))
		}
		warmed.Add(1)
		return nil
	})
	if stopped != nil && (warmed.Load() == 0 || ctx.Err() != nil) {
		return fmt.Errorf("warm %d connections to %s: %w", n, p.base.Host, stopped)
	}
	p.mu.Lock()
	p.warmUp = WarmUp{Asked: n, Warmed: int(warmed.Load()), Took: time.Since(start), Stopped: stopped}
	p.mu.Unlock()
	return nil
}

// WarmedUp is how the last warm-up of the whole-request connections went;
// the zero WarmUp before any.
func (p *Pool) WarmedUp() WarmUp {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.warmUp
}

// Send makes w as one whole request and reads its answer: the lean way
// over plain HTTP/1.1 (lean.go), else with net/http. A status of any kind
// is an answer, not an error; a redirect is not followed. When the answer
// came but its body could not be read, the error comes with the answer's
// status. Under the context of a call of one of p's gates (StageCalls), the
// call's first request is staged instead, and Send returns once it is
// released and answered.
func (p *Pool) Send(ctx context.Context, w Wire) (Answer, error) {
	if c, ok := callOf(ctx, p); ok {
		if a, staged, err := c.g.send(c.j, w); staged {
			return a, err
		}
	}
	if p.lean != nil {
		return p.sendLean(ctx, w)
	}
	req, err := http.NewRequestWithContext(ctx, w.Method, p.base.Scheme+"://"+p.base.Host+w.Target, bytes.NewReader(w.Body))
	if err != nil {
		return Answer{}, fmt.Errorf("%s %s: %w", w.Method, w.Target, err)
	}
	if len(w.Body) == 0 {
		req.Body, req.ContentLength = http.NoBody, 0
	}
	for name, values := range p.headerFor(w) {
		req.Header[name] = values
	}
	if !w.sets("User-Agent") {
		req.Header.Set("User-Agent", UserAgent)
	}
	if !w.sets("Accept") {
		req.Header.Set("Accept", "application/json")
	}
	resp, err := p.http.Do(req)
	if err != nil {
		return Answer{}, fmt.Errorf("%s %s: %w", w.Method, w.Target, unwrapURLError(err))
	}
	defer resp.Body.Close()
	body, err := readBody(resp.Body)
	if err != nil {
		return Answer{Status: resp.StatusCode}, fmt.Errorf("%s %s: read answer: %w", w.Method, w.Target, err)
	}
	return answerOf(resp.StatusCode, resp.Header, body), nil
}

// Stage readies ws as one burst, synchronized as the pool's Sync says (h2
// single packet, HTTP/1.1 last byte, or whole requests on warmed
// connections), and returns one function per request that sends its final
// part and waits for its answer. The last function called releases them
// all, and each is called once; stage again only once every function of
// the last burst has returned. An answer that came before the release is
// marked Early; an error may come with an Early answer.
func (p *Pool) Stage(ctx context.Context, ws []Wire) ([]func(context.Context) (Answer, error), error) {
	mode, err := p.resolve(ctx)
	if err != nil {
		return nil, err
	}
	switch mode {
	case SyncH2:
		return p.stageH2(ctx, ws)
	case SyncLastByte:
		return p.stageH1(ctx, ws)
	}
	fs := make([]func(context.Context) (Answer, error), len(ws))
	for i, w := range ws {
		fs[i] = func(ctx context.Context) (Answer, error) { return p.Send(ctx, w) }
	}
	return fs, nil
}

// Close closes every connection and waits for their readers to end.
func (p *Pool) Close() error {
	p.mu.Lock()
	p.closed = true
	h1, h2 := p.h1, p.h2
	p.h1, p.h2 = nil, nil
	p.mu.Unlock()
	for _, hc := range h1 {
		hc.close()
	}
	for _, hc := range h2 {
		hc.close()
	}
	p.http.CloseIdleConnections()
	if p.lean != nil {
		p.lean.close()
	}
	return nil
}
