package burst

import (
	"bytes"
	"context"
	"crypto/tls"
	"encoding/binary"
	"errors"
	"fmt"
	"maps"
	"net"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"golang.org/x/net/http2"
	"golang.org/x/net/http2/hpack"
)

// Flow-control settings of racelab's side of an HTTP/2 connection. Answers
// are small, so generous windows mean the server never waits for racelab.
const (
	h2StreamWindow = 1 << 20 // SETTINGS_INITIAL_WINDOW_SIZE racelab grants each stream
	h2ConnWindow   = 1 << 30 // the connection's window, topped up as answers arrive
	h2Refill       = 1 << 20 // give back received bytes once this many have arrived
)

// h2FirstWindow is the flow-control window every HTTP/2 connection starts
// with (RFC 9113 §6.9.2): the bodies racelab sends on one connection
// before the release must fit it, since it does not wait for a server to
// grow it. It caps how many streams with a body one connection carries.
const h2FirstWindow = 65535

// noH2Error says the server does not speak HTTP/2: SyncAuto falls back to
// last-byte synchronization, SyncH2 fails with it.
type noH2Error struct{ why string }

func (e *noH2Error) Error() string { return "server does not speak HTTP/2: " + e.why }

// h2Conn is an HTTP/2 connection racelab frames by hand (with x/net's
// Framer and HPACK), since net/http cannot hold a request's END_STREAM back.
// One goroutine reads every frame; writers take wmu in turn.
type h2Conn struct {
	conn net.Conn
	raw  net.Conn
	wait time.Duration // the pool's DialTimeout, bounding each write

	// wmu serializes writes, so that frames stay whole on the wire and
	// header blocks reach the server in the order the encoder made them.
	// Lock order: wmu before mu.
	wmu    sync.Mutex
	wbuf   bytes.Buffer
	fr     *http2.Framer // writes into wbuf only
	hbuf   bytes.Buffer
	henc   *hpack.Encoder
	nextID uint32

	mu         sync.Mutex // guards what follows; the read loop takes it per frame
	streams    map[uint32]*h2Stream
	maxStreams uint32 // the server's SETTINGS_MAX_CONCURRENT_STREAMS; 0 if unsaid
	pings      map[[8]byte]chan struct{}
	pingSeq    uint64
	unrefilled uint32
	err        error // set once the connection is done for

	settings chan struct{} // closed at the server's first SETTINGS
	done     chan struct{} // closed when the read loop has ended
}

// h2Stream is one request and, once done is closed, its answer.
type h2Stream struct {
	id        uint32
	responded bool // a frame of the answer has arrived (under mu)
	early     bool // it had arrived before the release (set by the release)
	status    int
	header    http.Header
	body      bytes.Buffer
	err       error
	done      chan struct{}
}

// dialH2 opens an HTTP/2 connection (h2c with prior knowledge on http, ALPN
// h2 on https), exchanges settings, and warms it with one harmless GET, all
// within one DialTimeout (see warmContext). A server that turns out not to
// speak HTTP/2 gives a *noH2Error.
func (p *Pool) dialH2(ctx context.Context) (*h2Conn, error) {
	wctx, cancel := p.warmContext(ctx)
	defer cancel()
	conn, raw, err := p.dial(wctx, []string{"h2", "http/1.1"})
	if err != nil {
		return nil, err
	}
	if tc, ok := conn.(*tls.Conn); ok && tc.ConnectionState().NegotiatedProtocol != "h2" {
		conn.Close()
		return nil, &noH2Error{"TLS (ALPN) did not agree on h2"}
	}
	hc := &h2Conn{
		conn:     conn,
		raw:      raw,
		wait:     p.dialWait,
		nextID:   1,
		streams:  map[uint32]*h2Stream{},
		pings:    map[[8]byte]chan struct{}{},
		settings: make(chan struct{}),
		done:     make(chan struct{}),
	}
	hc.fr = http2.NewFramer(&hc.wbuf, nil)
	hc.henc = hpack.NewEncoder(&hc.hbuf)

	hc.wmu.Lock()
	hc.wbuf.WriteString(http2.ClientPreface)
	err = errors.Join(
		hc.fr.WriteSettings(
			http2.Setting{ID: http2.SettingEnablePush, Val: 0},
			http2.Setting{ID: http2.SettingInitialWindowSize, Val: h2StreamWindow},
		),
		hc.fr.WriteWindowUpdate(0, h2ConnWindow-65535),
		hc.flush(),
	)
	hc.wmu.Unlock()
	if err != nil {
		conn.Close()
		return nil, fmt.Errorf("open HTTP/2 connection to %s: %w", p.base.Host, err)
	}
	rfr := http2.NewFramer(nil, conn)
	rfr.ReadMetaHeaders = hpack.NewDecoder(4096, nil)
	rfr.MaxHeaderListSize = 1 << 20
	go hc.readLoop(rfr)

	// A server that speaks HTTP/2 sends its settings at once. One that
	// does not reads the preface as an HTTP/1 request for PRI * with
	// version 2.0 and answers it, most often with 505 or 400: the read
	// loop then fails with a *noH2Error, and SyncAuto falls back to
	// lastbyte. A server that says nothing at all within the wait is not
	// answering: that is its failure, not a fallback, or a silent service
	// would cost a second wait on the HTTP/1.1 connections.
	select {
	case <-hc.settings:
	case <-hc.done:
		hc.close()
		return nil, hc.failure()
	case <-wctx.Done():
		hc.close()
		err := context.Cause(wctx)
		if ctx.Err() == nil {
			err = fmt.Errorf("%w to the HTTP/2 preface (for a server that speaks only HTTP/1.1 and ignores it, sync lastbyte skips it)", err)
		}
		return nil, fmt.Errorf("open HTTP/2 connection to %s: %w", p.base.Host, err)
	}
	if err := hc.warm(wctx, p); err != nil {
		hc.close()
		return nil, fmt.Errorf("warm HTTP/2 connection to %s: GET %s: %w", p.base.Host, p.warmTarget(), stepErr(wctx, err))
	}
	return hc, nil
}

// flush writes what the framer has put in wbuf as one socket write, within
// the pool's DialTimeout; the caller holds wmu. A write blocks only when
// the server stops reading, and then no longer than that.
func (hc *h2Conn) flush() error {
	_ = hc.conn.SetWriteDeadline(time.Now().Add(hc.wait))
	_, err := hc.conn.Write(hc.wbuf.Bytes())
	_ = hc.conn.SetWriteDeadline(time.Time{})
	hc.wbuf.Reset()
	return err
}

// readLoop reads every frame until the connection ends, handing answers to
// their streams and acknowledging what the protocol asks.
func (hc *h2Conn) readLoop(fr *http2.Framer) {
	defer close(hc.done)
	first := true
	for {
		f, err := fr.ReadFrame()
		if err != nil {
			var se http2.StreamError
			if errors.As(err, &se) {
				hc.finish(se.StreamID, fmt.Errorf("stream error: %v", se.Code))
				continue
			}
			if first {
				err = &noH2Error{fmt.Sprintf("its first answer was not HTTP/2 settings (%v)", err)}
			}
			hc.fail(err)
			return
		}
		if first {
			if sf, ok := f.(*http2.SettingsFrame); !ok || sf.IsAck() {
				hc.fail(&noH2Error{fmt.Sprintf("its first frame was %v, not SETTINGS", f.Header().Type)})
				return
			}
			first = false
		}
		switch f := f.(type) {
		case *http2.SettingsFrame:
			hc.onSettings(f)
		case *http2.PingFrame:
			hc.onPing(f)
		case *http2.MetaHeadersFrame:
			hc.onHeaders(f)
		case *http2.DataFrame:
			hc.onData(f)
		case *http2.RSTStreamFrame:
			hc.finish(f.StreamID, fmt.Errorf("server reset the stream: %v", f.ErrCode))
		case *http2.GoAwayFrame:
			hc.onGoAway(f)
		}
	}
}

func (hc *h2Conn) onSettings(f *http2.SettingsFrame) {
	if f.IsAck() {
		return
	}
	hc.wmu.Lock()
	defer hc.wmu.Unlock()
	hc.mu.Lock()
	_ = f.ForeachSetting(func(s http2.Setting) error {
		switch s.ID {
		case http2.SettingMaxConcurrentStreams:
			hc.maxStreams = s.Val
		case http2.SettingHeaderTableSize:
			hc.henc.SetMaxDynamicTableSizeLimit(s.Val)
		}
		return nil
	})
	select {
	case <-hc.settings:
	default:
		close(hc.settings)
	}
	hc.mu.Unlock()
	_ = hc.fr.WriteSettingsAck()
	if err := hc.flush(); err != nil {
		hc.fail(err)
	}
}

func (hc *h2Conn) onPing(f *http2.PingFrame) {
	if f.IsAck() {
		hc.mu.Lock()
		if ch := hc.pings[f.Data]; ch != nil {
			close(ch)
			delete(hc.pings, f.Data)
		}
		hc.mu.Unlock()
		return
	}
	hc.wmu.Lock()
	defer hc.wmu.Unlock()
	_ = hc.fr.WritePing(true, f.Data)
	if err := hc.flush(); err != nil {
		hc.fail(err)
	}
}

func (hc *h2Conn) onHeaders(f *http2.MetaHeadersFrame) {
	hc.mu.Lock()
	defer hc.mu.Unlock()
	s := hc.streams[f.StreamID]
	if s == nil {
		return // abandoned, or the warm-up's trailers
	}
	s.responded = true
	if s.status == 0 {
		status, err := strconv.Atoi(f.PseudoValue("status"))
		if err != nil {
			hc.finishLocked(s, fmt.Errorf("answer without a valid :status"))
			return
		}
		if status >= 100 && status < 200 && !f.StreamEnded() {
			return // informational; the answer follows
		}
		s.status = status
		s.header = http.Header{}
		for _, hf := range f.RegularFields() {
			s.header.Add(hf.Name, hf.Value) // Add canonicalizes the name
		}
	}
	if f.StreamEnded() {
		hc.finishLocked(s, nil)
	}
}

func (hc *h2Conn) onData(f *http2.DataFrame) {
	hc.mu.Lock()
	hc.unrefilled += f.Length
	refill := hc.unrefilled
	if refill >= h2Refill {
		hc.unrefilled = 0
	}
	if s := hc.streams[f.StreamID]; s != nil {
		s.responded = true
		switch {
		case s.body.Len()+len(f.Data()) > MaxAnswerBytes:
			hc.finishLocked(s, fmt.Errorf("answer over %d bytes", MaxAnswerBytes))
		default:
			s.body.Write(f.Data())
			if f.StreamEnded() {
				hc.finishLocked(s, nil)
			}
		}
	}
	hc.mu.Unlock()
	if refill >= h2Refill {
		hc.wmu.Lock()
		defer hc.wmu.Unlock()
		_ = hc.fr.WriteWindowUpdate(0, refill)
		if err := hc.flush(); err != nil {
			hc.fail(err)
		}
	}
}

// onGoAway fails the streams the server will not answer; the others still
// finish, and the connection is replaced before the next burst.
func (hc *h2Conn) onGoAway(f *http2.GoAwayFrame) {
	hc.mu.Lock()
	defer hc.mu.Unlock()
	if hc.err == nil {
		hc.err = fmt.Errorf("server closed the connection (GOAWAY %v)", f.ErrCode)
	}
	for id, s := range hc.streams {
		if id > f.LastStreamID {
			hc.finishLocked(s, hc.err)
		}
	}
}

func (hc *h2Conn) finish(id uint32, err error) {
	hc.mu.Lock()
	defer hc.mu.Unlock()
	if s := hc.streams[id]; s != nil {
		hc.finishLocked(s, err)
	}
}

func (hc *h2Conn) finishLocked(s *h2Stream, err error) {
	s.err = err
	delete(hc.streams, s.id)
	close(s.done)
}

// fail ends the connection: every stream still waiting fails with err.
func (hc *h2Conn) fail(err error) {
	hc.mu.Lock()
	defer hc.mu.Unlock()
	if hc.err == nil {
		hc.err = err
	}
	for _, s := range hc.streams {
		hc.finishLocked(s, hc.err)
	}
	_ = hc.conn.Close()
}

func (hc *h2Conn) failure() error {
	hc.mu.Lock()
	defer hc.mu.Unlock()
	if hc.err == nil {
		return errors.New("connection closed")
	}
	return hc.err
}

// usable says the connection can carry another burst.
func (hc *h2Conn) usable() bool {
	hc.mu.Lock()
	defer hc.mu.Unlock()
	return hc.err == nil
}

// DefaultMaxStreams is how many HTTP/2 streams a connection is taken to
// allow before the server's SETTINGS frame says: as many as racelab serve
// allows (its -max-streams default).
const DefaultMaxStreams = 250

// limit is the most streams the server lets the connection have open.
func (hc *h2Conn) limit() int {
	hc.mu.Lock()
	defer hc.mu.Unlock()
	if hc.maxStreams == 0 {
		return DefaultMaxStreams
	}
	return int(hc.maxStreams)
}

// close closes the connection and waits for its read loop to end.
func (hc *h2Conn) close() {
	hc.fail(errClosed)
	<-hc.done
}

// open starts one stream per request with its HEADERS, and its DATA when
// it has a body, all in one write, holding END_STREAM back unless
// endStream, and returns the streams and the frames that will end them.
func (hc *h2Conn) open(p *Pool, ws []Wire, endStream bool) ([]*h2Stream, []byte, error) {
	n := len(ws)
	hc.wmu.Lock()
	defer hc.wmu.Unlock()
	hc.mu.Lock()
	if hc.err == nil && hc.nextID > 1<<31-1-2*uint32(n) {
		// Stream ids run out after two billion; the next burst gets a
		// fresh connection.
		hc.err = errors.New("stream ids used up")
	}
	if hc.err != nil {
		hc.mu.Unlock()
		return nil, nil, hc.err
	}
	streams := make([]*h2Stream, n)
	for i := range streams {
		streams[i] = &h2Stream{id: hc.nextID, done: make(chan struct{})}
		hc.streams[hc.nextID] = streams[i]
		hc.nextID += 2
	}
	hc.mu.Unlock()

	for i, s := range streams {
		w := ws[i]
		header := p.headerFor(w)
		hc.hbuf.Reset()
		fields := []hpack.HeaderField{
			{Name: ":method", Value: w.Method},
			{Name: ":scheme", Value: p.base.Scheme},
			{Name: ":authority", Value: p.base.Host},
			{Name: ":path", Value: w.Target},
		}
		if !w.sets("User-Agent") {
			fields = append(fields, hpack.HeaderField{Name: "user-agent", Value: UserAgent})
		}
		if !w.sets("Accept") {
			fields = append(fields, hpack.HeaderField{Name: "accept", Value: "application/json"})
		}
		if len(w.Body) > 0 {
			fields = append(fields, hpack.HeaderField{Name: "content-length", Value: strconv.Itoa(len(w.Body))})
		}
		for _, name := range slices.Sorted(maps.Keys(header)) {
			for _, v := range header[name] {
				fields = append(fields, hpack.HeaderField{Name: strings.ToLower(name), Value: v})
			}
		}
		for _, f := range fields {
			_ = hc.henc.WriteField(f)
		}
		if hc.hbuf.Len() > 16384 {
			return nil, nil, fmt.Errorf("request headers over 16 KiB")
		}
		bodied := len(w.Body) > 0
		_ = hc.fr.WriteHeaders(http2.HeadersFrameParam{
			StreamID: s.id, BlockFragment: hc.hbuf.Bytes(), EndHeaders: true, EndStream: endStream && !bodied,
		})
		// The body goes now, in frames the server accepts (16 KiB at
		// most, MaxWireBody in all, within any stream's first window),
		// but for its last byte when the release is to wait: a server
		// reading JSON acts once the object is complete, without waiting
		// for the end of the stream.
		rest := w.Body
		if !endStream && bodied {
			rest = rest[:len(rest)-1]
		}
		for len(rest) > 0 {
			k := min(len(rest), 16384)
			_ = hc.fr.WriteData(s.id, endStream && k == len(rest), rest[:k])
			rest = rest[k:]
		}
	}
	if err := hc.flush(); err != nil {
		hc.fail(err)
		return nil, nil, err
	}
	if endStream {
		return streams, nil, nil
	}
	for i, s := range streams {
		_ = hc.fr.WriteData(s.id, true, ws[i].Body[max(len(ws[i].Body)-1, 0):])
	}
	final := bytes.Clone(hc.wbuf.Bytes())
	hc.wbuf.Reset()
	return streams, final, nil
}

// ping sends a PING and waits for its acknowledgement. The server handles
// a connection's frames in order, so the answer means every HEADERS sent
// before it has been read and its handler started: the streams are staged
// at the server, not only in flight.
func (hc *h2Conn) ping(ctx context.Context, timeout time.Duration) error {
	var data [8]byte
	ack := make(chan struct{})
	hc.wmu.Lock()
	hc.mu.Lock()
	if hc.err != nil {
		hc.mu.Unlock()
		hc.wmu.Unlock()
		return hc.failure()
	}
	hc.pingSeq++
	binary.BigEndian.PutUint64(data[:], hc.pingSeq)
	hc.pings[data] = ack
	hc.mu.Unlock()
	_ = hc.fr.WritePing(false, data)
	err := hc.flush()
	hc.wmu.Unlock()
	if err != nil {
		hc.fail(err)
		return err
	}
	t := time.NewTimer(timeout)
	defer t.Stop()
	select {
	case <-ack:
		return nil
	case <-hc.done:
		return hc.failure()
	case <-ctx.Done():
		return ctx.Err()
	case <-t.C:
		return fmt.Errorf("no answer to PING within %s", timeout)
	}
}

// warm sends one GET of the base URL and waits for its answer.
func (hc *h2Conn) warm(ctx context.Context, p *Pool) error {
	streams, _, err := hc.open(p, []Wire{{Method: http.MethodGet, Target: p.warmTarget()}}, true)
	if err != nil {
		return err
	}
	select {
	case <-streams[0].done:
		return streams[0].err
	case <-ctx.Done():
		hc.cancel(streams[0])
		return ctx.Err()
	}
}

// cancel gives up on a stream: the server is told, and the stream's
// answer, if it comes, is dropped.
func (hc *h2Conn) cancel(s *h2Stream) {
	hc.mu.Lock()
	_, open := hc.streams[s.id]
	if open {
		delete(hc.streams, s.id)
	}
	hc.mu.Unlock()
	if !open {
		return
	}
	hc.wmu.Lock()
	defer hc.wmu.Unlock()
	_ = hc.fr.WriteRSTStream(s.id, http2.ErrCodeCancel)
	if err := hc.flush(); err != nil {
		hc.fail(err)
	}
}

// perConn is how many streams of a burst of n one connection carries, and
// how many connections that takes; the load is spread evenly.
func (p *Pool) perConn(n, serverLimit int) (per, conns int) {
	per = min(p.streams, serverLimit)
	conns = (n + per - 1) / per
	return (n + conns - 1) / conns, conns
}

// h2Conns returns the usable connections of the pool, opening and warming
// enough of them for a burst of n streams.
func (p *Pool) h2Conns(ctx context.Context, n int) ([]*h2Conn, int, error) {
	return p.h2ConnsFor(ctx, n, n)
}

// h2ConnsFor is h2Conns with at most widest streams on one connection.
func (p *Pool) h2ConnsFor(ctx context.Context, n, widest int) ([]*h2Conn, int, error) {
	for attempt := 0; ; attempt++ {
		if attempt == 3 {
			return nil, 0, fmt.Errorf("HTTP/2 connections to %s keep closing", p.base.Host)
		}
		p.mu.Lock()
		if p.closed {
			p.mu.Unlock()
			return nil, 0, errClosed
		}
		live := p.h2[:0]
		var dead []*h2Conn
		for _, hc := range p.h2 {
			if hc.usable() {
				live = append(live, hc)
			} else {
				dead = append(dead, hc)
			}
		}
		p.h2 = live
		limit := DefaultMaxStreams
		if len(live) > 0 {
			limit = live[0].limit()
		}
		per, want := p.perConn(n, min(limit, widest))
		need := want - len(live)
		p.mu.Unlock()
		for _, hc := range dead {
			hc.close()
		}
		if need <= 0 {
			p.mu.Lock()
			conns := slices.Clone(p.h2[:want])
			p.mu.Unlock()
			return conns, per, nil
		}
		fresh := make([]*h2Conn, need)
		err := warmAll(ctx, need, need, func(ctx context.Context, i int) error {
			var err error
			fresh[i], err = p.dialH2(ctx)
			return err
		})
		p.mu.Lock()
		for _, hc := range fresh {
			if hc != nil {
				p.h2 = append(p.h2, hc)
			}
		}
		p.mu.Unlock()
		if err != nil {
			return nil, 0, err
		}
		// Loop: the new connections' limits may ask for more of them.
	}
}

// stageH2 opens a stream per request over as many connections as the
// server's stream limit requires, HEADERS (and body) sent and END_STREAM
// withheld, and returns the functions that release them: the last of them
// to be called writes, on each connection in turn, one packet ending every
// stream on it (see burstLatch); every function then waits for its own
// stream's answer.
func (p *Pool) stageH2(ctx context.Context, ws []Wire) ([]func(context.Context) (Answer, error), error) {
	n := len(ws)
	body := 1
	for _, w := range ws {
		body = max(body, len(w.Body))
	}
	conns, per, err := p.h2ConnsFor(ctx, n, max(h2FirstWindow/body, 1))
	if err != nil {
		return nil, err
	}
	b := &h2Burst{}
	b.latch = newBurstLatch(n, b.release)
	streams := make([]*h2Stream, 0, n)
	owner := make([]*h2Conn, 0, n)
	for _, hc := range conns {
		k := min(per, n-len(streams))
		if k <= 0 {
			break
		}
		group := ws[len(streams) : len(streams)+k]
		ss, final, err := hc.open(p, group, false)
		if err != nil {
			b.abandon()
			return nil, fmt.Errorf("stage %s %s: %w", group[0].Method, group[0].Target, err)
		}
		b.groups = append(b.groups, h2Group{hc: hc, streams: ss, final: final})
		streams = append(streams, ss...)
		for range ss {
			owner = append(owner, hc)
		}
	}
	for _, g := range b.groups {
		if err := g.hc.ping(ctx, p.dialWait); err != nil {
			b.abandon()
			return nil, fmt.Errorf("stage %s %s: %w", ws[0].Method, ws[0].Target, err)
		}
	}
	b.letGo = Hold(2 * p.dialWait)
	b.left.Store(int64(n))
	fs := make([]func(context.Context) (Answer, error), n)
	for i, s := range streams {
		hc, w := owner[i], ws[i]
		fs[i] = func(ctx context.Context) (Answer, error) {
			defer b.done()
			if sent, err := b.latch.arriveThen(ctx, s.done); !sent {
				hc.cancel(s)
				return Answer{}, fmt.Errorf("%s %s: not released: %w", w.Method, w.Target, err)
			} else if err != nil {
				hc.cancel(s)
				return Answer{Early: s.early}, fmt.Errorf("%s %s: no answer: %w", w.Method, w.Target, err)
			}
			if s.err != nil {
				return Answer{Early: s.early}, fmt.Errorf("%s %s: %w", w.Method, w.Target, s.err)
			}
			a := answerOf(s.status, s.header, s.body.Bytes())
			a.Early = s.early
			return a, nil
		}
	}
	return fs, nil
}

// h2Burst is one staged burst: per connection, its streams and the frames
// that end them.
type h2Burst struct {
	latch  *burstLatch
	groups []h2Group
	letGo  func()       // lets the collector run again (Hold)
	left   atomic.Int64 // the burst's functions yet to return
}

// done counts a function of the burst out; the last lets go of the
// collector.
func (b *h2Burst) done() {
	if b.left.Add(-1) == 0 {
		b.letGo()
	}
}

type h2Group struct {
	hc      *h2Conn
	streams []*h2Stream
	final   []byte
}

// release writes each connection's final frames in one socket write,
// connection after connection with nothing in between. A stream already
// answered by then was answered before its request was complete: early.
func (b *h2Burst) release() {
	// Deadlines first, so that nothing but the writes sits between them.
	now := time.Now()
	for _, g := range b.groups {
		_ = g.hc.conn.SetWriteDeadline(now.Add(g.hc.wait))
	}
	for _, g := range b.groups {
		hc := g.hc
		hc.wmu.Lock()
		hc.mu.Lock()
		for _, s := range g.streams {
			s.early = s.responded
		}
		hc.mu.Unlock()
		_, err := hc.conn.Write(g.final)
		hc.wmu.Unlock()
		if err != nil {
			hc.fail(fmt.Errorf("release: %w", err))
		}
	}
}

// abandon resets the streams of a burst that will not be released.
func (b *h2Burst) abandon() {
	for _, g := range b.groups {
		for _, s := range g.streams {
			g.hc.cancel(s)
		}
	}
}
