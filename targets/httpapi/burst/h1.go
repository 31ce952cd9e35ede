package burst

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"maps"
	"net"
	"net/http"
	"slices"
	"strconv"
	"time"
)

// dialParallel bounds the connections opened at once, so that preparing a
// burst of thousands does not overrun the server's accept queue.
const dialParallel = 16

// h1Conn is an HTTP/1.1 connection that carries one request of each burst.
// Between Stage and the release it holds a request written but its last
// byte; only the staged function that owns it touches it then.
type h1Conn struct {
	conn   net.Conn
	raw    net.Conn // the TCP connection, beneath TLS on https
	br     *bufio.Reader
	staged bool // a request but its last byte is on the wire
	broken bool // the connection cannot carry another request
}

// dialH1 opens an HTTP/1.1 connection and warms it with one harmless GET,
// all within one DialTimeout (see warmContext).
func (p *Pool) dialH1(ctx context.Context) (*h1Conn, error) {
	wctx, cancel := p.warmContext(ctx)
	defer cancel()
	conn, raw, err := p.dial(wctx, []string{"http/1.1"})
	if err != nil {
		return nil, err
	}
	hc := &h1Conn{conn: conn, raw: raw, br: bufio.NewReader(conn)}
	kept, err := hc.warm(wctx, p)
	if err != nil {
		hc.close()
		return nil, err
	}
	if kept {
		return hc, nil
	}
	// The server closes a connection after one answer: a fresh, unwarmed
	// connection is the best it allows. It is a connection of its own, so
	// it gets a DialTimeout of its own.
	hc.close()
	fctx, cancel := p.warmContext(ctx)
	defer cancel()
	if conn, raw, err = p.dial(fctx, []string{"http/1.1"}); err != nil {
		return nil, err
	}
	return &h1Conn{conn: conn, raw: raw, br: bufio.NewReader(conn)}, nil
}

// warm sends a GET of the base URL and reads its answer, whatever it is,
// so that the server has accepted the connection and started serving it
// before any burst. It reports whether the server keeps the connection.
// ctx bounds it (the connection's warmContext): when ctx ends, the
// connection's deadline is cut and the step fails with ctx's cause.
func (hc *h1Conn) warm(ctx context.Context, p *Pool) (kept bool, err error) {
	stop := unblockOnDone(ctx, hc.conn)
	fail := func(err error) (bool, error) {
		stop()
		return false, fmt.Errorf("warm connection to %s: GET %s: %w", p.base.Host, p.warmTarget(), stepErr(ctx, err))
	}
	if _, err := hc.conn.Write(p.h1Request(http.MethodGet, p.warmTarget())); err != nil {
		return fail(err)
	}
	resp, err := http.ReadResponse(hc.br, &http.Request{Method: http.MethodGet})
	if err != nil {
		return fail(err)
	}
	n, err := io.Copy(io.Discard, io.LimitReader(resp.Body, MaxAnswerBytes+1))
	resp.Body.Close()
	if err != nil && ctx.Err() != nil {
		return fail(err) // the body stalled past the wait
	}
	if !stop() {
		return fail(ctx.Err()) // the deadline was cut as the answer came: the connection is spent
	}
	return err == nil && n <= MaxAnswerBytes && !resp.Close, nil
}

// h1Request is the bytes of a request with no body.
func (p *Pool) h1Request(method, target string) []byte {
	return p.h1Wire(Wire{Method: method, Target: target})
}

// h1Wire is the bytes of a request: the pool's headers with the
// request's own over them, and its body.
func (p *Pool) h1Wire(w Wire) []byte {
	header := p.headerFor(w)
	// Appends rather than fmt: a load writes one of these a request.
	b := make([]byte, 0, 160+len(w.Target)+len(w.Body))
	b = append(append(append(append(append(b, w.Method...), ' '), w.Target...), " HTTP/1.1\r\nHost: "...), p.base.Host...)
	b = append(b, "\r\n"...)
	if !w.sets("User-Agent") {
		b = append(b, "User-Agent: "+UserAgent+"\r\n"...)
	}
	if !w.sets("Accept") {
		b = append(b, "Accept: application/json\r\n"...)
	}
	if len(w.Body) > 0 || w.Method != http.MethodGet && w.Method != http.MethodHead {
		b = append(strconv.AppendInt(append(b, "Content-Length: "...), int64(len(w.Body)), 10), "\r\n"...)
	}
	if len(header) > 0 {
		for _, name := range slices.Sorted(maps.Keys(header)) {
			for _, v := range header[name] {
				b = append(append(append(append(b, name...), ": "...), v...), "\r\n"...)
			}
		}
	}
	return append(append(b, "\r\n"...), w.Body...)
}

// usable says the connection is idle and the server has neither closed it
// nor sent anything unasked.
func (hc *h1Conn) usable() bool {
	return !hc.staged && !hc.broken && hc.br.Buffered() == 0 && !Pending(hc.raw)
}

// answered says an answer, or the server's closing, is waiting to be read.
func (hc *h1Conn) answered() bool { return hc.br.Buffered() > 0 || Pending(hc.raw) }

func (hc *h1Conn) close() {
	hc.broken = true
	_ = hc.conn.Close()
}

// h1Conns returns n usable connections, the first n of the pool, opening
// and warming what is missing and dropping what went stale.
func (p *Pool) h1Conns(ctx context.Context, n int) ([]*h1Conn, error) {
	p.mu.Lock()
	if p.closed {
		p.mu.Unlock()
		return nil, errClosed
	}
	live := p.h1[:0]
	for _, hc := range p.h1 {
		if hc.usable() {
			live = append(live, hc)
		} else {
			hc.close()
		}
	}
	p.h1 = live
	need := n - len(live)
	p.mu.Unlock()

	fresh := make([]*h1Conn, max(need, 0))
	// One reason is clearer than n copies of it, and the first failure
	// calls off the rest (see warmAll).
	err := warmAll(ctx, len(fresh), dialParallel, func(ctx context.Context, i int) error {
		var err error
		fresh[i], err = p.dialH1(ctx)
		return err
	})

	p.mu.Lock()
	defer p.mu.Unlock()
	for _, hc := range fresh {
		if hc != nil {
			p.h1 = append(p.h1, hc)
		}
	}
	if p.closed {
		return nil, errClosed
	}
	if err != nil {
		return nil, err
	}
	return slices.Clone(p.h1[:n]), nil
}

// stageH1 writes each request but its last byte on a warmed
// connection of its own and returns the functions that release them: the
// last of them to be called writes every last byte, one connection after
// another from one goroutine (see burstLatch); every function then reads
// its own answer.
func (p *Pool) stageH1(ctx context.Context, ws []Wire) ([]func(context.Context) (Answer, error), error) {
	n := len(ws)
	conns, err := p.h1Conns(ctx, n)
	if err != nil {
		return nil, err
	}
	b := &h1Burst{conns: conns, last: make([][]byte, n), wait: p.dialWait, early: make([]bool, n), sent: make([]error, n)}
	b.latch = newBurstLatch(n, b.release)
	fs := make([]func(context.Context) (Answer, error), n)
	for i, hc := range conns {
		w := ws[i]
		req := p.h1Wire(w)
		head := req[:len(req)-1]
		b.last[i] = req[len(req)-1:]
		// A write blocks only when the server reads nothing; DialTimeout
		// or the end of ctx, whichever comes first, unblocks it.
		_ = hc.conn.SetWriteDeadline(time.Now().Add(p.dialWait))
		stop := unblockOnDone(ctx, hc.conn)
		_, err := hc.conn.Write(head)
		armed := stop()
		_ = hc.conn.SetWriteDeadline(time.Time{})
		hc.staged = true
		if err == nil && !armed {
			err = ctx.Err() // written, but the deadline was cut: the connection is spent
		}
		if err != nil {
			hc.broken = true
			return nil, fmt.Errorf("stage %s %s: %w", w.Method, w.Target, stepErr(ctx, err))
		}
		fs[i] = func(ctx context.Context) (Answer, error) {
			if err := b.latch.arrive(ctx); err != nil {
				hc.broken = true // its last byte may yet go out, unread
				return Answer{}, fmt.Errorf("%s %s: not released: %w", w.Method, w.Target, err)
			}
			a, err := hc.answer(ctx, w, b.sent[i])
			a.Early = b.early[i]
			return a, err
		}
	}
	return fs, nil
}

// h1Burst is one staged HTTP/1.1 burst: a connection per request, each
// holding back its last byte.
type h1Burst struct {
	latch *burstLatch
	conns []*h1Conn
	last  [][]byte      // per request: its last byte
	wait  time.Duration // the pool's DialTimeout, bounding the writes
	early []bool        // per request: answered before its last byte went out
	sent  []error       // per request: the last byte's write failed
}

// release writes each connection's last byte. An answer already waiting
// on a connection before its byte went out means the server did not wait
// for the whole request: that request is early.
func (b *h1Burst) release() {
	// Deadlines first, so that nothing but the writes sits between them.
	deadline := time.Now().Add(b.wait)
	for _, hc := range b.conns {
		_ = hc.conn.SetWriteDeadline(deadline)
	}
	for i, hc := range b.conns {
		b.early[i] = hc.answered()
		hc.staged = false
		_, b.sent[i] = hc.conn.Write(b.last[i])
	}
}

// answer reads the answer to the request whose last byte release sent.
func (hc *h1Conn) answer(ctx context.Context, w Wire, sent error) (Answer, error) {
	if d, ok := ctx.Deadline(); ok {
		_ = hc.conn.SetDeadline(d)
	}
	// Cancelling ctx unblocks the read; the connection is then spent.
	stop := context.AfterFunc(ctx, func() { _ = hc.conn.SetDeadline(time.Unix(1, 0)) })
	fail := func(what string, err error) (Answer, error) {
		stop()
		hc.broken = true
		if ctx.Err() != nil {
			err = ctx.Err()
		}
		return Answer{}, fmt.Errorf("%s %s: %s: %w", w.Method, w.Target, what, err)
	}
	if sent != nil {
		return fail("send", sent)
	}
	resp, err := http.ReadResponse(hc.br, &http.Request{Method: w.Method})
	if err != nil {
		return fail("read answer", err)
	}
	body, err := readBody(resp.Body)
	resp.Body.Close()
	if err != nil {
		return fail("read answer", err)
	}
	if !stop() {
		hc.broken = true // the deadline was cut to the past under us
	}
	_ = hc.conn.SetDeadline(time.Time{})
	hc.broken = hc.broken || resp.Close
	return answerOf(resp.StatusCode, resp.Header, body), nil
}
