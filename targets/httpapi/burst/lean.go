package burst

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httputil"
	"net/textproto"
	"net/url"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"golang.org/x/net/http/httpguts"
)

// The lean path: whole requests over plain-http HTTP/1.1 keep-alive
// connections, each request written and its answer read by the goroutine
// that makes it. net/http's Transport runs two goroutines per connection
// and hands every request and answer between them over channels, and
// builds a header map per request: under load that bookkeeping cost more
// CPU than the two system calls a request needs (issue 24). The answer is
// read and checked as before; only the way there is shorter. https, HTTP/2
// and a proxy from the environment keep net/http (Pool.lean is nil).

// maxLeanIdle bounds the idle connections a Pool keeps, as net/http's
// MaxIdleConnsPerHost did.
const maxLeanIdle = 1024

// leanConn is one keep-alive connection. Only the goroutine that took it
// from the pool touches it until it is put back.
type leanConn struct {
	conn net.Conn
	// rw reads and writes conn (newLeanIO says how); br reads rw.
	rw       io.ReadWriter
	br       *bufio.Reader
	reused   bool   // it carried an answer before: the server may have closed it since
	deadline bool   // a deadline is set on it
	head     []byte // scratch: an answer's header lines, copied off br
	ends     []int  // scratch: where each header line ends in head
}

// leanPool keeps the idle connections, last put first taken: the warmest
// connection serves the next request.
//
// It grows only as fast as a small server can take it: at most
// growParallel connections are being opened at once (dialled and not yet
// answered), and a request that finds none idle and no room to open one
// waits for whichever comes first, a connection put back or room to open.
// A server with a short listen queue (Python's http.server has 5) drops
// the connections that overflow it, and the client retries each a second,
// then three, seven, fifteen seconds later: 64 opened at once against
// such a server timed out where the same load, grown a few at a time,
// did not (issue 37). Against a server that keeps connections alive, the
// pool still reaches what the load needs within a few round trips.
type leanPool struct {
	mu      sync.Mutex
	idle    []*leanConn
	closed  bool
	opening int           // connections being opened (take said open one)
	changed chan struct{} // closed, and replaced, when a connection is put back or opened
}

// growParallel bounds the connections a leanPool opens at once: fewer
// than the 5 a listen queue as short as Python's http.server's holds
// beside the one being accepted.
const growParallel = 4

// take returns an idle connection, or nil when the caller is to open one
// (and then call opened once it has been answered, or has failed),
// waiting while neither is possible. fresh skips the idle connections.
func (p *leanPool) take(ctx context.Context, fresh bool) (*leanConn, error) {
	for {
		p.mu.Lock()
		if p.closed {
			p.mu.Unlock()
			return nil, errClosed
		}
		if n := len(p.idle); n > 0 && !fresh {
			lc := p.idle[n-1]
			p.idle = p.idle[:n-1]
			p.mu.Unlock()
			return lc, nil
		}
		if p.opening < growParallel {
			p.opening++
			p.mu.Unlock()
			return nil, nil
		}
		if p.changed == nil {
			p.changed = make(chan struct{})
		}
		changed := p.changed
		p.mu.Unlock()
		select {
		case <-changed:
		case <-ctx.Done():
			return nil, context.Cause(ctx)
		}
	}
}

// opened says a connection take let the caller open has had its answer,
// or failed: room for the next.
func (p *leanPool) opened() {
	p.mu.Lock()
	p.opening--
	p.signal()
	p.mu.Unlock()
}

// signal wakes the requests waiting in take; the caller holds mu.
func (p *leanPool) signal() {
	if p.changed != nil {
		close(p.changed)
		p.changed = nil
	}
}

func (p *leanPool) put(lc *leanConn) {
	p.mu.Lock()
	if !p.closed && len(p.idle) < maxLeanIdle {
		lc.reused = true
		p.idle = append(p.idle, lc)
		p.signal()
		lc = nil
	}
	p.mu.Unlock()
	if lc != nil {
		_ = lc.conn.Close()
	}
}

func (p *leanPool) close() {
	p.mu.Lock()
	idle := p.idle
	p.idle, p.closed = nil, true
	p.signal()
	p.mu.Unlock()
	for _, lc := range idle {
		_ = lc.conn.Close()
	}
}

// usesLean says whether whole requests to base go the lean way: plain
// http over HTTP/1.1, with no proxy in the environment for it (net/http
// would have gone through the proxy).
func usesLean(base *url.URL, http2 bool) bool {
	if http2 || base.Scheme != "http" {
		return false
	}
	proxy, err := http.ProxyFromEnvironment(&http.Request{URL: base})
	return err == nil && proxy == nil
}

// sendLean makes w as one whole request on a pooled connection and reads
// its answer. A connection that had served an answer before and fails
// before a byte of this one arrives was closed by the server while idle:
// the request is sent once more on a fresh connection, as net/http does,
// since the server cannot have acted on it.
func (p *Pool) sendLean(ctx context.Context, w Wire) (Answer, error) {
	return p.roundLean(ctx, w, false)
}

// roundLean is sendLean, on a connection of its own when fresh (a
// warm-up's).
func (p *Pool) roundLean(ctx context.Context, w Wire, fresh bool) (Answer, error) {
	for ; ; fresh = true {
		lc, err := p.lean.take(ctx, fresh)
		opening := err == nil && lc == nil
		if opening {
			lc, err = p.dialLean(ctx)
		}
		if err != nil {
			if opening {
				p.lean.opened()
			}
			return Answer{}, fmt.Errorf("%s %s: %w", w.Method, w.Target, err)
		}
		a, keep, stale, err := lc.roundTrip(ctx, p.h1Wire(w), w.Method)
		if err == nil && keep {
			p.lean.put(lc)
		} else {
			_ = lc.conn.Close()
		}
		if opening {
			p.lean.opened()
		}
		if err == nil || !stale || opening || ctx.Err() != nil {
			if err != nil {
				return Answer{}, fmt.Errorf("%s %s: %w", w.Method, w.Target, err)
			}
			a.Arrival = ArrivalOf(a.Header)
			return a, nil
		}
	}
}

func (p *Pool) dialLean(ctx context.Context) (*leanConn, error) {
	conn, _, err := p.dial(ctx, nil)
	if err != nil {
		return nil, err
	}
	rw := newLeanIO(conn)
	return &leanConn{conn: conn, rw: rw, br: bufio.NewReader(rw)}, nil
}

// roundTrip writes req and reads its answer, within ctx: its deadline is
// the connection's, and its end cuts the connection's deadline short.
// keep says the connection may carry another request; stale says it
// failed as a connection the server closed while idle does.
func (lc *leanConn) roundTrip(ctx context.Context, req []byte, method string) (a Answer, keep, stale bool, err error) {
	if d, ok := ctx.Deadline(); ok {
		_ = lc.conn.SetDeadline(d)
		lc.deadline = true
	} else if lc.deadline {
		_ = lc.conn.SetDeadline(time.Time{})
		lc.deadline = false
	}
	var stop func() bool
	if ctx.Done() != nil {
		stop = context.AfterFunc(ctx, func() { _ = lc.conn.SetDeadline(time.Unix(1, 0)) })
	}
	fail := func(what string, err error) (Answer, bool, bool, error) {
		if stop != nil {
			stop()
		}
		if ne := net.Error(nil); errors.As(err, &ne) && ne.Timeout() && lc.deadline {
			// The connection's deadline is ctx's: ctx ends this instant,
			// and its reason is the one to give, as net/http gives it.
			<-ctx.Done()
		}
		if ctx.Err() != nil {
			err = ctx.Err()
		}
		if what != "" {
			err = fmt.Errorf("%s: %w", what, err)
		}
		return Answer{}, false, stale, err
	}
	if _, err := lc.rw.Write(req); err != nil {
		stale = lc.reused && isClosedConn(err)
		return fail("", err)
	}
	if _, err := lc.br.Peek(1); err != nil {
		stale = lc.reused && isClosedConn(err)
		return fail("", err)
	}
	a, keep, err = lc.readAnswer(method)
	if err != nil {
		return fail("read answer", err)
	}
	if stop != nil && !stop() {
		keep = false // the deadline was cut under us: the connection is spent
	}
	// Bytes past the answer were not asked for: the connection is out of
	// step with its requests.
	keep = keep && lc.br.Buffered() == 0
	return a, keep, false, nil
}

// isClosedConn says err is what a connection the peer closed gives.
func isClosedConn(err error) bool {
	return errors.Is(err, io.EOF) || errors.Is(err, syscall.ECONNRESET) || errors.Is(err, syscall.EPIPE)
}

// readAnswer reads one answer off the connection, skipping interim (1xx)
// ones, as net/http does: the status, the headers, the body by its
// length, chunked or up to the close. keep says the connection may carry
// another request.
func (lc *leanConn) readAnswer(method string) (a Answer, keep bool, err error) {
	for interim := 0; ; interim++ {
		a, keep, err = lc.readHead()
		if err != nil {
			return Answer{}, false, err
		}
		if a.Status >= 200 || a.Status == http.StatusSwitchingProtocols {
			break
		}
		if interim == 5 {
			return Answer{}, false, errors.New("too many interim (1xx) answers")
		}
	}
	h := a.Header
	chunked := false
	if te, ok := h["Transfer-Encoding"]; ok {
		if len(te) != 1 || !strings.EqualFold(textproto.TrimString(te[0]), "chunked") {
			return Answer{}, false, fmt.Errorf("transfer encoding %q: only chunked is read", te)
		}
		chunked = true
		keep = keep && h["Content-Length"] == nil // both at once: trust neither past this answer
	}
	switch {
	case method == http.MethodHead || a.Status < 200 || a.Status == http.StatusNoContent || a.Status == http.StatusNotModified:
		keep = keep && a.Status != http.StatusSwitchingProtocols
	case chunked:
		if a.Body, err = readBody(httputil.NewChunkedReader(lc.br)); err != nil {
			return Answer{}, false, err
		}
		if err = lc.skipTrailer(); err != nil {
			return Answer{}, false, err
		}
	case h["Content-Length"] != nil:
		n, err := contentLength(h["Content-Length"])
		if err != nil {
			return Answer{}, false, err
		}
		if n > MaxAnswerBytes {
			return Answer{}, false, errTooLarge
		}
		a.Body = make([]byte, n)
		if _, err := io.ReadFull(lc.br, a.Body); err != nil {
			return Answer{}, false, err
		}
	default:
		// No length: the body runs to the close.
		if a.Body, err = readBody(lc.br); err != nil {
			return Answer{}, false, err
		}
		keep = false
	}
	return a, keep, nil
}

// readHead reads a status line and the headers after it into a; keep
// says the server means to keep the connection open.
func (lc *leanConn) readHead() (a Answer, keep bool, err error) {
	line, err := lc.line()
	if err != nil {
		return Answer{}, false, err
	}
	// HTTP/1.x NNN[ reason]
	if len(line) < 12 || string(line[:7]) != "HTTP/1." || line[8] != ' ' || (len(line) > 12 && line[12] != ' ') {
		return Answer{}, false, fmt.Errorf("malformed status line %q", line)
	}
	minor := line[7]
	code, err := strconv.Atoi(string(line[9:12]))
	if err != nil || code < 100 || (minor != '0' && minor != '1') {
		return Answer{}, false, fmt.Errorf("malformed status line %q", line)
	}
	// The header lines are copied into one buffer and turned into one
	// string, which every name and value is a piece of: one allocation
	// for the text of all of them.
	lc.head, lc.ends = lc.head[:0], lc.ends[:0]
	lines := 0
	for {
		line, err := lc.line()
		if err != nil {
			return Answer{}, false, err
		}
		if len(line) == 0 {
			break
		}
		if line[0] == ' ' || line[0] == '\t' {
			return Answer{}, false, fmt.Errorf("malformed header line %q (folded lines are obsolete)", line)
		}
		if len(lc.head)+len(line) > MaxHeaderBytes {
			return Answer{}, false, fmt.Errorf("answer headers over %d bytes", MaxHeaderBytes)
		}
		lc.head = append(lc.head, line...)
		lc.ends = append(lc.ends, len(lc.head))
		lines++
	}
	text := string(lc.head)
	h := make(http.Header, lines)
	values := make([]string, lines)
	from := 0
	for i, end := range lc.ends {
		kv := text[from:end]
		from = end
		colon := strings.IndexByte(kv, ':')
		if colon <= 0 || !httpguts.ValidHeaderFieldName(kv[:colon]) {
			return Answer{}, false, fmt.Errorf("malformed header line %q", kv)
		}
		name := textproto.CanonicalMIMEHeaderKey(kv[:colon])
		values[i] = textproto.TrimString(kv[colon+1:])
		if vs := h[name]; vs != nil {
			h[name] = append(vs, values[i])
		} else {
			h[name] = values[i : i+1 : i+1]
		}
	}
	a.Status, a.Header = code, h
	keep = minor == '1'
	for _, v := range h["Connection"] {
		for tok := range strings.SplitSeq(v, ",") {
			switch t := textproto.TrimString(tok); {
			case strings.EqualFold(t, "close"):
				return a, false, nil
			case strings.EqualFold(t, "keep-alive"):
				keep = true
			}
		}
	}
	return a, keep, nil
}

// line reads one line without its CRLF (or bare LF); the slice is the
// reader's and good until the next read.
func (lc *leanConn) line() ([]byte, error) {
	line, err := lc.br.ReadSlice('\n')
	if err == bufio.ErrBufferFull {
		return nil, fmt.Errorf("answer header line over %d bytes", lc.br.Size())
	}
	if err != nil {
		if err == io.EOF && len(line) > 0 {
			err = io.ErrUnexpectedEOF
		}
		return nil, err
	}
	line = line[:len(line)-1]
	if n := len(line); n > 0 && line[n-1] == '\r' {
		line = line[:n-1]
	}
	return line, nil
}

// skipTrailer reads a chunked body's trailer lines up to the empty one.
func (lc *leanConn) skipTrailer() error {
	for {
		line, err := lc.line()
		if err != nil {
			return err
		}
		if len(line) == 0 {
			return nil
		}
	}
}

// contentLength reads a Content-Length header: one whole number, or
// several copies of the same one.
func contentLength(vs []string) (int64, error) {
	var n int64 = -1
	for _, v := range vs {
		m, err := strconv.ParseInt(v, 10, 64)
		if err != nil || m < 0 || (n >= 0 && m != n) {
			return 0, fmt.Errorf("content length %q is not one whole number", vs)
		}
		n = m
	}
	return n, nil
}
