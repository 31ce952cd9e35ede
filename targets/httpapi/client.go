package httpapi

import (
	"context"
	"crypto/tls"
	"encoding/base64"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"sync"
	"time"

	"golang.org/x/net/http/httpguts"

	"github.com/racelab/racelab/targets/story"
)

// Sync is how a Client releases a burst.
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

// Defaults of a Client, in one place.
const (
	// DefaultDialTimeout bounds the whole warm-up of one connection
	// (connect, TLS, the server's HTTP/2 settings, a harmless GET) when
	// Config.DialTimeout is zero. racelab run sets DialTimeout to its
	// --timeout instead: warming a connection is one request.
	DefaultDialTimeout = 10 * time.Second
	// DefaultStreams is the most streams a Client opens on one HTTP/2
	// connection when the server allows more. On loopback one write of a
	// hundred final frames is one packet; beyond it the burst spreads over
	// more connections, released back to back.
	DefaultStreams = 100
	// DefaultRemoteStreams is the same for a host that is not loopback.
	// Over the internet, releases of about 20 to 30 streams a packet are
	// the ones the single-packet technique reports as landing together;
	// larger bursts go over several connections.
	DefaultRemoteStreams = 30
	// MaxAnswerBytes bounds an answer's body; the contract's are tiny.
	MaxAnswerBytes = 1 << 20
	// UserAgent names racelab to the service.
	UserAgent = "racelab"
)

// Config says how a Client speaks to its service. The zero value is the
// contract, synchronized as tightly as the server allows.
type Config struct {
	// Sync is how bursts are released; empty means SyncAuto.
	Sync Sync
	// Mapping overrides the contract's calls for a service with another
	// API; it is merged onto Contract().
	Mapping Mapping
	// Ops is the ops table the client plays: the zero Table is the
	// stories' own (story.Ops). A story with an op of its own hands its
	// table here (story.Ops().With(…)), and the client makes its request
	// and read as the row says (story.Capped).
	Ops story.Table
	// Header is sent with every request (an API key, a cookie).
	Header http.Header
	// TLS configures https; nil means the system's roots.
	TLS *tls.Config
	// Insecure skips the verification of the server's certificate.
	Insecure bool
	// Streams caps the HTTP/2 streams a connection carries in one burst;
	// zero means DefaultStreams on loopback, DefaultRemoteStreams beyond.
	// The server's own limit always applies.
	Streams int
	// DialTimeout bounds the whole warm-up of one connection (connect,
	// TLS, the server's HTTP/2 settings, a harmless GET) and each write
	// or PING that stages a burst; zero means DefaultDialTimeout. A
	// service silent for that long fails Prepare or Stage, whatever the
	// size of the burst: connections are warmed in parallel and the first
	// failure calls off the rest.
	DialTimeout time.Duration
	// HTTP2 sends whole requests (a load's, and SyncNone bursts') over
	// HTTP/2 only: h2c with prior knowledge on http, ALPN on https. By
	// default they go over HTTP/1.1 with keep-alive.
	HTTP2 bool
}

// Client plays the stories against one service over HTTP. It implements
// story.Counter, story.Quota, story.Inventory, story.Limiter,
// story.Plans, and story.Capped for the ops of its table that have no
// interface of their own, with whole requests, and stages
// synchronized bursts with Stage. Prepare opens the connections a burst
// needs; Close closes them. Its story methods are safe for concurrent use;
// bursts are one at a time, as the engine runs them: Stage again only once
// every function of the last burst has returned, since the burst's
// connections are reused.
type Client struct {
	k        *contract // the contract over Config.Ops, as racelab serve speaks it
	base     *url.URL
	routes   Mapping     // k's routes with Config.Mapping merged on
	header   http.Header // Config.Header, plus basic auth from the URL
	streams  int
	dialWait time.Duration
	tls      *tls.Config
	http     *http.Client
	lean     *leanPool // whole requests over plain HTTP/1.1, when not nil (lean.go)

	mu     sync.Mutex // guards what follows
	mode   Sync       // as resolved by Prepare
	h1     []*h1Conn
	h2     []*h2Conn
	closed bool
}

// Compile-time checks that Client plays every story.
var (
	_ story.Counter   = (*Client)(nil)
	_ story.Quota     = (*Client)(nil)
	_ story.Inventory = (*Client)(nil)
	_ story.Limiter   = (*Client)(nil)
	_ story.Plans     = (*Client)(nil)
	_ story.Capped    = (*Client)(nil)
)

// New returns a Client for the service at base (http or https). It opens
// nothing: Prepare does, so that a bad setting is found before any I/O.
// base's query, if any, belongs to the service and goes with every request.
func New(base *url.URL, cfg Config) (*Client, error) {
	if base == nil || (base.Scheme != "http" && base.Scheme != "https") || base.Host == "" {
		return nil, fmt.Errorf("base URL %v: want http://HOST[:PORT][/PATH] or https://…", base)
	}
	mode, err := ParseSync(string(cfg.Sync))
	if err != nil {
		return nil, err
	}
	k, err := newContract(cfg.Ops)
	if err != nil {
		return nil, fmt.Errorf("ops: %w", err)
	}
	routes := k.routes.clone().Merge(cfg.Mapping)
	if err := k.validate(routes); err != nil {
		return nil, fmt.Errorf("mapping: %w", err)
	}
	header := http.Header{}
	for name, values := range cfg.Header {
		if !httpguts.ValidHeaderFieldName(name) {
			return nil, fmt.Errorf("header name %q is not valid", name)
		}
		for _, v := range values {
			if !httpguts.ValidHeaderFieldValue(v) {
				return nil, fmt.Errorf("header %s: value %q is not valid", name, v)
			}
			header.Add(name, v)
		}
	}
	if u := base.User; u != nil {
		pass, _ := u.Password()
		header.Set("Authorization", "Basic "+base64.StdEncoding.EncodeToString([]byte(u.Username()+":"+pass)))
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
	c := &Client{
		k:        k,
		base:     base,
		routes:   routes,
		header:   header,
		streams:  cfg.Streams,
		dialWait: cfg.DialTimeout,
		tls:      tlsCfg,
		mode:     mode,
	}
	if c.dialWait <= 0 {
		c.dialWait = DefaultDialTimeout
	}
	if c.streams <= 0 {
		c.streams = DefaultRemoteStreams
		if isLoopback(base.Hostname()) {
			c.streams = DefaultStreams
		}
	}
	tr := http.DefaultTransport.(*http.Transport).Clone()
	tr.TLSClientConfig = tlsCfg.Clone()
	tr.DisableCompression = true // an answer's bytes are read as sent
	tr.MaxIdleConns = 0
	tr.MaxIdleConnsPerHost = 1024
	if cfg.HTTP2 {
		var p http.Protocols
		if base.Scheme == "https" {
			p.SetHTTP2(true)
		} else {
			p.SetUnencryptedHTTP2(true)
		}
		tr.Protocols = &p
	}
	if usesLean(base, cfg.HTTP2) {
		c.lean = &leanPool{}
	}
	c.http = &http.Client{
		Transport: tr,
		// A redirect is an answer outside the contract, not a place to go.
		CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse },
	}
	return c, nil
}

// isLoopback says whether host is this machine for certain.
func isLoopback(host string) bool {
	if host == "localhost" {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}

// SyncMode is how bursts are released: as asked, or, once Prepare has
// probed the server, what SyncAuto resolved to.
func (c *Client) SyncMode() string {
	c.mu.Lock()
	defer c.mu.Unlock()
	return string(c.mode)
}

// URL is the service's base URL.
func (c *Client) URL() string { return c.base.String() }

// target is the request target (path and query) of call on key: the base
// URL's path and query with the route's template below them, the key
// percent-encoded once for where it goes.
func (c *Client) target(call Call, key string, vars ...param) string {
	return c.targetOf(call, []string{key}, vars...)
}

// targetOf is target with keys in the placeholder, each percent-encoded
// once and joined by literal commas: a comma inside a key is encoded, so
// it cannot be taken for a separator.
func (c *Client) targetOf(call Call, keys []string, vars ...param) string {
	tpl := c.routes[call].Path
	path, query, _ := strings.Cut(tpl, "?")
	ph := c.k.keys[call]
	escaped := func(escape func(string) string) string {
		e := make([]string, len(keys))
		for i, k := range keys {
			e[i] = escape(k)
		}
		return strings.Join(e, ",")
	}
	path = strings.ReplaceAll(path, ph, escaped(pathEscape))
	query = strings.ReplaceAll(query, ph, escaped(url.QueryEscape))
	// A call's other values go where the template puts them, or else
	// into the query under their own name, unless they only say what the
	// contract means without them.
	for _, v := range vars {
		ph := "{" + v.name + "}"
		switch {
		case strings.Contains(path, ph):
			path = strings.ReplaceAll(path, ph, pathEscape(v.value))
		case strings.Contains(query, ph):
			query = strings.ReplaceAll(query, ph, url.QueryEscape(v.value))
		case v.implied:
		default:
			query = strings.TrimPrefix(query+"&"+v.name+"="+url.QueryEscape(v.value), "&")
		}
	}
	t := strings.TrimSuffix(c.base.EscapedPath(), "/") + path
	switch {
	case c.base.RawQuery != "" && query != "":
		t += "?" + c.base.RawQuery + "&" + query
	case c.base.RawQuery != "":
		t += "?" + c.base.RawQuery
	case query != "":
		t += "?" + query
	}
	return t
}

// pathEscape encodes a key for a path segment; a comma too, which
// url.PathEscape leaves, so that it separates keys only where racelab put
// it.
func pathEscape(key string) string {
	return strings.ReplaceAll(url.PathEscape(key), ",", "%2C")
}

// warmTarget is the harmless GET that warms a connection: the base URL.
func (c *Client) warmTarget() string {
	t := c.base.EscapedPath()
	if t == "" {
		t = "/"
	}
	if c.base.RawQuery != "" {
		t += "?" + c.base.RawQuery
	}
	return t
}

// param is one value of a call besides its key: a window's number, the
// story's limit, an item's stock.
type param struct {
	name, value string
	// implied says the value is the contract's own, which a request
	// without it means: it fills a template's {name} but is not added to
	// the query, so a service that keeps the contract's limit sees the
	// requests it always saw.
	implied bool
}

// limitParams say the story's limit on a request of op (?limit=L, or
// ?stock=K for a checkout): none for an op without one, and an implied
// one when the story's limit is the contract's (story.OpSpec.Carries).
func (k *contract) limitParams(op story.Op, limit int64) []param {
	spec, _ := k.ops.Spec(op)
	switch {
	case spec.Limit == "":
		return nil
	case !spec.Carries(limit):
		return []param{{name: spec.Limit, value: strconv.FormatInt(spec.DefaultLimit, 10), implied: true}}
	}
	return []param{{name: spec.Limit, value: strconv.FormatInt(limit, 10)}}
}

// do makes call on key as one whole request with net/http.
func (c *Client) do(ctx context.Context, call Call, key string, vars ...param) (story.Reply, error) {
	a, err := c.send(ctx, c.routes[call].Method, c.target(call, key, vars...))
	if err != nil {
		return story.Reply{}, err
	}
	return c.judge(call, key, a, vars...)
}

// send makes one whole request with net/http and reads its answer.
func (c *Client) send(ctx context.Context, method, target string) (answer, error) {
	return c.sendWire(ctx, wire{method: method, target: target})
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

// Hit records one view of slug with POST /hit/{slug}.
func (c *Client) Hit(ctx context.Context, slug string) (int64, error) {
	r, err := c.do(ctx, CallHit, slug)
	return r.Value, err
}

// Views reads the views of slug with GET /get/{slug}.
func (c *Client) Views(ctx context.Context, slug string) (int64, error) {
	r, err := c.do(ctx, CallGet, slug)
	return r.Value, err
}

// Consume asks for a download with POST /download/{visitor}, with
// ?limit=L when the story's limit is not the contract's story.DailyLimit.
func (c *Client) Consume(ctx context.Context, visitor string, limit int64) (bool, int64, error) {
	r, err := c.do(ctx, CallDownload, visitor, c.k.limitParams(story.OpDownload, limit)...)
	return r.OK, r.Value, err
}

// Count reads the visitor's downloads today with GET /quota/{visitor}.
func (c *Client) Count(ctx context.Context, visitor string) (int64, error) {
	r, err := c.do(ctx, CallQuota, visitor)
	return r.Value, err
}

// Checkout tries to claim item with POST /checkout/{item}. The contract
// does not name buyers; the service does.
func (c *Client) Checkout(ctx context.Context, item, buyer string) (bool, error) {
	return c.CheckoutOf(ctx, item, buyer, story.Stock)
}

// CheckoutOf claims one of stock copies of item with POST
// /checkout/{item}?stock=K (the query only when stock is not one).
func (c *Client) CheckoutOf(ctx context.Context, item, _ string, stock int64) (bool, error) {
	r, err := c.do(ctx, CallCheckout, item, c.k.limitParams(story.OpCheckout, stock)...)
	return r.OK, err
}

// Admit counts one request of caller with POST /limit/{caller}, with
// ?limit=L when w's limit is not the contract's story.WindowLimit. The
// service keeps its own window length; w's is not sent.
func (c *Client) Admit(ctx context.Context, caller string, w story.Window) (story.Admission, error) {
	r, err := c.do(ctx, CallLimit, caller, c.k.limitParams(story.OpLimit, w.Limit)...)
	return story.Admission{Allowed: r.OK, Count: r.Value, Window: r.Window}, err
}

// Admitted reads one window's count with GET /limit/{caller}?window=n.
func (c *Client) Admitted(ctx context.Context, caller string, _ story.Window, n int64) (int64, error) {
	r, err := c.do(ctx, CallWindow, caller, param{name: "window", value: strconv.FormatInt(n, 10)})
	return r.Value, err
}

// Subscribe starts subscriber's paid plan with POST /subscribe/{subscriber}.
func (c *Client) Subscribe(ctx context.Context, subscriber string) error {
	_, err := c.do(ctx, CallSubscribe, subscriber)
	return err
}

// Cancel ends subscriber's plan with POST /cancel/{subscriber}.
func (c *Client) Cancel(ctx context.Context, subscriber string) error {
	_, err := c.do(ctx, CallCancel, subscriber)
	return err
}

// Paid reads the plan as the service's pages read it, possibly cached,
// with GET /plan/{subscriber}.
func (c *Client) Paid(ctx context.Context, subscriber string) (bool, error) {
	r, err := c.do(ctx, CallPlan, subscriber)
	return r.OK && err == nil, err
}

// Download asks for an original with POST /original/{subscriber}, with
// ?limit=L when the story's daily limit is not the contract's
// story.DailyLimit. Either refusal (403 no paid plan, 429 the limit) is a
// refusal; any other answer is an error, never a grant.
func (c *Client) Download(ctx context.Context, subscriber string, limit int64) (bool, int64, error) {
	r, err := c.do(ctx, CallOriginal, subscriber, c.k.limitParams(story.OpOriginal, limit)...)
	if err != nil {
		return false, 0, err
	}
	return r.OK, r.Value, nil
}

// Downloads reads the originals counted today with GET
// /original/{subscriber}.
func (c *Client) Downloads(ctx context.Context, subscriber string) (int64, error) {
	r, err := c.do(ctx, CallOriginals, subscriber)
	return r.Value, err
}

// errNoRecords: the contract does not list what a service stores.
var errNoRecords = errors.New("the HTTP contract has no call that lists a caller's window records")

// Records is not part of the contract: what a service keeps is its own.
func (c *Client) Records(context.Context, string, story.Window) (int64, error) {
	return 0, errNoRecords
}

// Take makes a request of op, an op of the client's table with no
// interface of its own (story.Capped), on key, with the limit where its
// row carries one, as every story's request carries it.
func (c *Client) Take(ctx context.Context, op story.Op, key string, limit int64) (bool, int64, error) {
	call, err := c.k.callOf(op)
	if err != nil {
		return false, 0, err
	}
	r, err := c.do(ctx, call, key, c.k.limitParams(op, limit)...)
	return r.OK, r.Value, err
}

// Taken reads op's count on key with its row's read.
func (c *Client) Taken(ctx context.Context, op story.Op, key string) (int64, error) {
	spec, ok := c.k.ops.Spec(op)
	if !ok {
		_, err := c.k.callOf(op)
		return 0, err
	}
	r, err := c.do(ctx, Call(spec.Read), key)
	return r.Value, err
}

// Claims reads the claims on item with GET /item/{item}.
func (c *Client) Claims(ctx context.Context, item string) (int64, error) {
	r, err := c.do(ctx, CallItem, item)
	return r.Value, err
}

// dial opens a connection to the service, TLS for https with protos as
// ALPN, and returns it with the TCP connection beneath, for peeking. ctx
// bounds it: the caller's warmContext.
func (c *Client) dial(ctx context.Context, protos []string) (conn, raw net.Conn, err error) {
	addr := c.base.Host
	if c.base.Port() == "" {
		addr = net.JoinHostPort(c.base.Hostname(), map[string]string{"http": "80", "https": "443"}[c.base.Scheme])
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
	if c.base.Scheme != "https" {
		return raw, raw, nil
	}
	cfg := c.tls.Clone()
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
func (c *Client) Prepare(ctx context.Context, n int) error {
	mode, err := c.resolve(ctx)
	if err != nil {
		return err
	}
	switch mode {
	case SyncH2:
		_, _, err = c.h2Conns(ctx, n)
		var noH2 *noH2Error
		if errors.As(err, &noH2) {
			err = fmt.Errorf("%s: %w (sync lastbyte works over HTTP/1.1)", c.base.Host, err)
		}
	case SyncLastByte:
		_, err = c.h1Conns(ctx, n)
	default:
		err = c.warmPool(ctx, n)
	}
	return err
}

// resolve settles SyncAuto: h2 when the server speaks HTTP/2 (ALPN on
// https, prior knowledge on http), else lastbyte. The probe's connection
// is kept for the first burst.
func (c *Client) resolve(ctx context.Context) (Sync, error) {
	c.mu.Lock()
	mode, closed := c.mode, c.closed
	c.mu.Unlock()
	if closed {
		return "", errClosed
	}
	if mode != SyncAuto {
		return mode, nil
	}
	hc, err := c.dialH2(ctx)
	var noH2 *noH2Error
	switch {
	case errors.As(err, &noH2):
		mode = SyncLastByte
	case err != nil:
		return "", err
	default:
		mode = SyncH2
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	c.mode = mode
	if hc != nil {
		c.h2 = append(c.h2, hc)
	}
	return mode, nil
}

var errClosed = errors.New("http client closed")

// warmPool opens n connections in the pool whole requests go through (the
// lean one, or net/http's) with a harmless GET each, all at once so that
// each needs its own connection.
func (c *Client) warmPool(ctx context.Context, n int) error {
	err := warmAll(ctx, n, n, func(ctx context.Context, _ int) error {
		ctx, cancel := c.warmContext(ctx)
		defer cancel()
		if c.lean != nil {
			_, err := c.sendLean(ctx, wire{method: http.MethodGet, target: c.warmTarget()})
			switch {
			case errors.Is(err, errTooLarge):
				return nil // the connection was answered, then closed: warm enough
			case err != nil && ctx.Err() != nil:
				return fmt.Errorf("GET %s: %w", c.warmTarget(), context.Cause(ctx))
			}
			return err
		}
		req, err := http.NewRequestWithContext(ctx, http.MethodGet, c.base.Scheme+"://"+c.base.Host+c.warmTarget(), nil)
		if err != nil {
			return err
		}
		resp, err := c.http.Do(req)
		if err != nil {
			return fmt.Errorf("GET %s: %w", c.warmTarget(), stepErr(ctx, unwrapURLError(err)))
		}
		defer resp.Body.Close()
		if _, err := io.Copy(io.Discard, io.LimitReader(resp.Body, MaxAnswerBytes)); err != nil {
			return fmt.Errorf("GET %s: read answer: %w", c.warmTarget(), stepErr(ctx, err))
		}
		return nil
	})
	if err != nil {
		return fmt.Errorf("warm %d connections to %s: %w", n, c.base.Host, err)
	}
	return nil
}

// Stage readies n requests of op on key and returns one function per
// request, which sends the request's final part and waits for its answer
// (targets.Stager). limit is the story's, sent as the op's whole requests
// send it (limitParams): ?limit=L, or ?stock=K for a checkout, when it is
// not the contract's.
func (c *Client) Stage(ctx context.Context, op story.Op, key string, limit int64, n int) ([]func(context.Context) (story.Reply, error), error) {
	call, err := c.k.callOf(op)
	if err != nil {
		return nil, err
	}
	vars := c.k.limitParams(op, limit)
	mode, err := c.resolve(ctx)
	if err != nil {
		return nil, err
	}
	switch mode {
	case SyncH2:
		return c.stageH2(ctx, call, key, n, vars...)
	case SyncLastByte:
		return c.stageH1(ctx, call, key, n, vars...)
	}
	fs := make([]func(context.Context) (story.Reply, error), n)
	for i := range fs {
		fs[i] = func(ctx context.Context) (story.Reply, error) { return c.do(ctx, call, key, vars...) }
	}
	return fs, nil
}

// Close closes every connection and waits for their readers to end.
func (c *Client) Close() error {
	c.mu.Lock()
	c.closed = true
	h1, h2 := c.h1, c.h2
	c.h1, c.h2 = nil, nil
	c.mu.Unlock()
	for _, hc := range h1 {
		hc.close()
	}
	for _, hc := range h2 {
		hc.close()
	}
	c.http.CloseIdleConnections()
	if c.lean != nil {
		c.lean.close()
	}
	return nil
}
