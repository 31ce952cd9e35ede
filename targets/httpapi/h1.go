package httpapi

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

	"github.com/racelab/racelab/targets/httpapi/burst"
	"github.com/racelab/racelab/targets/story"
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
func (c *Client) dialH1(ctx context.Context) (*h1Conn, error) {
	wctx, cancel := c.warmContext(ctx)
	defer cancel()
	conn, raw, err := c.dial(wctx, []string{"http/1.1"})
	if err != nil {
		return nil, err
	}
	hc := &h1Conn{conn: conn, raw: raw, br: bufio.NewReader(conn)}
	kept, err := hc.warm(wctx, c)
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
	fctx, cancel := c.warmContext(ctx)
	defer cancel()
	if conn, raw, err = c.dial(fctx, []string{"http/1.1"}); err != nil {
		return nil, err
	}
	return &h1Conn{conn: conn, raw: raw, br: bufio.NewReader(conn)}, nil
}

// warm sends a GET of the base URL and reads its answer, whatever it is,
// so that the server has accepted the connection and started serving it
// before any burst. It reports whether the server keeps the connection.
// ctx bounds it (the connection's warmContext): when ctx ends, the
// connection's deadline is cut and the step fails with ctx's cause.
func (hc *h1Conn) warm(ctx context.Context, c *Client) (kept bool, err error) {
	stop := unblockOnDone(ctx, hc.conn)
	fail := func(err error) (bool, error) {
		stop()
		return false, fmt.Errorf("warm connection to %s: GET %s: %w", c.base.Host, c.warmTarget(), stepErr(ctx, err))
	}
	if _, err := hc.conn.Write(c.h1Request(http.MethodGet, c.warmTarget())); err != nil {
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
func (c *Client) h1Request(method, target string) []byte {
	return c.h1Wire(wire{method: method, target: target})
}

// h1Wire is the bytes of a request: the client's headers with the
// request's own over them, and its body.
func (c *Client) h1Wire(w wire) []byte {
	header := c.headerFor(w)
	// Appends rather than fmt: a load writes one of these a request.
	b := make([]byte, 0, 160+len(w.target)+len(w.body))
	b = append(append(append(append(append(b, w.method...), ' '), w.target...), " HTTP/1.1\r\nHost: "...), c.base.Host...)
	b = append(b, "\r\n"...)
	if !w.sets("User-Agent") {
		b = append(b, "User-Agent: "+UserAgent+"\r\n"...)
	}
	if !w.sets("Accept") {
		b = append(b, "Accept: application/json\r\n"...)
	}
	if len(w.body) > 0 || w.method != http.MethodGet && w.method != http.MethodHead {
		b = append(strconv.AppendInt(append(b, "Content-Length: "...), int64(len(w.body)), 10), "\r\n"...)
	}
	if len(header) > 0 {
		for _, name := range slices.Sorted(maps.Keys(header)) {
			for _, v := range header[name] {
				b = append(append(append(append(b, name...), ": "...), v...), "\r\n"...)
			}
		}
	}
	return append(append(b, "\r\n"...), w.body...)
}

// usable says the connection is idle and the server has neither closed it
// nor sent anything unasked.
func (hc *h1Conn) usable() bool {
	return !hc.staged && !hc.broken && hc.br.Buffered() == 0 && !burst.Pending(hc.raw)
}

// answered says an answer, or the server's closing, is waiting to be read.
func (hc *h1Conn) answered() bool { return hc.br.Buffered() > 0 || burst.Pending(hc.raw) }

func (hc *h1Conn) close() {
	hc.broken = true
	_ = hc.conn.Close()
}

// h1Conns returns n usable connections, the first n of the pool, opening
// and warming what is missing and dropping what went stale.
func (c *Client) h1Conns(ctx context.Context, n int) ([]*h1Conn, error) {
	c.mu.Lock()
	if c.closed {
		c.mu.Unlock()
		return nil, errClosed
	}
	live := c.h1[:0]
	for _, hc := range c.h1 {
		if hc.usable() {
			live = append(live, hc)
		} else {
			hc.close()
		}
	}
	c.h1 = live
	need := n - len(live)
	c.mu.Unlock()

	fresh := make([]*h1Conn, max(need, 0))
	// One reason is clearer than n copies of it, and the first failure
	// calls off the rest (see warmAll).
	err := warmAll(ctx, len(fresh), dialParallel, func(ctx context.Context, i int) error {
		var err error
		fresh[i], err = c.dialH1(ctx)
		return err
	})

	c.mu.Lock()
	defer c.mu.Unlock()
	for _, hc := range fresh {
		if hc != nil {
			c.h1 = append(c.h1, hc)
		}
	}
	if c.closed {
		return nil, errClosed
	}
	if err != nil {
		return nil, err
	}
	return slices.Clone(c.h1[:n]), nil
}

// stageH1 writes n requests but their last byte, each on its own warmed
// connection, and returns the functions that release them (see
// stageH1Wires), each judging its answer by call's route.
func (c *Client) stageH1(ctx context.Context, call Call, key string, n int, vars ...param) ([]func(context.Context) (story.Reply, error), error) {
	fs, err := c.stageH1Wires(ctx, repeatWire(c.wireOf(call, key, vars...), n))
	return c.judged(fs, call, key, vars...), err
}

// stageH1Wires writes each request but its last byte on a warmed
// connection of its own and returns the functions that release them: the
// last of them to be called writes every last byte, one connection after
// another from one goroutine (see burstLatch); every function then reads
// its own answer.
func (c *Client) stageH1Wires(ctx context.Context, ws []wire) ([]stagedWire, error) {
	n := len(ws)
	conns, err := c.h1Conns(ctx, n)
	if err != nil {
		return nil, err
	}
	b := &h1Burst{conns: conns, last: make([][]byte, n), wait: c.dialWait, early: make([]bool, n), sent: make([]error, n)}
	b.latch = newBurstLatch(n, b.release)
	fs := make([]stagedWire, n)
	for i, hc := range conns {
		w := ws[i]
		req := c.h1Wire(w)
		head := req[:len(req)-1]
		b.last[i] = req[len(req)-1:]
		// A write blocks only when the server reads nothing; DialTimeout
		// or the end of ctx, whichever comes first, unblocks it.
		_ = hc.conn.SetWriteDeadline(time.Now().Add(c.dialWait))
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
			return nil, fmt.Errorf("stage %s %s: %w", w.method, w.target, stepErr(ctx, err))
		}
		fs[i] = func(ctx context.Context) (answer, bool, error) {
			if err := b.latch.arrive(ctx); err != nil {
				hc.broken = true // its last byte may yet go out, unread
				return answer{}, false, fmt.Errorf("%s %s: not released: %w", w.method, w.target, err)
			}
			a, err := hc.answer(ctx, w, b.sent[i])
			return a, b.early[i], err
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
	wait  time.Duration // the client's DialTimeout, bounding the writes
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
func (hc *h1Conn) answer(ctx context.Context, w wire, sent error) (answer, error) {
	if d, ok := ctx.Deadline(); ok {
		_ = hc.conn.SetDeadline(d)
	}
	// Cancelling ctx unblocks the read; the connection is then spent.
	stop := context.AfterFunc(ctx, func() { _ = hc.conn.SetDeadline(time.Unix(1, 0)) })
	fail := func(what string, err error) (answer, error) {
		stop()
		hc.broken = true
		if ctx.Err() != nil {
			err = ctx.Err()
		}
		return answer{}, fmt.Errorf("%s %s: %s: %w", w.method, w.target, what, err)
	}
	if sent != nil {
		return fail("send", sent)
	}
	resp, err := http.ReadResponse(hc.br, &http.Request{Method: w.method})
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
	return answer{resp.StatusCode, resp.Header, body}, nil
}
