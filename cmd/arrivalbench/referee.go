package main

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"io"
	"net"
	"net/http"
	"os"
	"runtime"
	"runtime/debug"
	"runtime/pprof"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"golang.org/x/net/http2"
)

// refereeStreams is the referee's SETTINGS_MAX_CONCURRENT_STREAMS: high
// enough that no client is made to split a burst of a few thousand over
// connections, so each splits only as it chooses.
const refereeStreams = 1 << 16

// referee is the neutral server the bursts are measured at: it is neither
// racelab's serve nor any client's, speaks HTTP/1.1 and HTTP/2 with prior
// knowledge (golang.org/x/net/http2) on one port, and stamps each POST
// /hit/{key} when its handler has read the request's last byte, the same
// way for every client. It answers the contract's hit and get, so that
// racelab run judges it like any service, and GET /referee/bursts lists the
// keys hit since the last such call, with how far apart their requests
// arrived.
type referee struct {
	mu    sync.Mutex
	views map[string]int64
	fresh map[string]*arrivals // keys hit since the last /referee/bursts
}

type arrivals struct {
	n           int
	first, last time.Time
	at          []time.Time
}

// burstStat is one key's arrivals, as /referee/bursts answers them.
type burstStat struct {
	Key      string `json:"key"`
	Requests int    `json:"requests"`
	Spread   int64  `json:"spread_ns"`
	// Deciles are how long after the first the 10th, 20th, … 90th
	// percent of the requests had arrived: where a spread comes from.
	Deciles []int64 `json:"deciles_ns"`
}

func newReferee() *referee {
	return &referee{views: map[string]int64{}, fresh: map[string]*arrivals{}}
}

func (rf *referee) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	// The request is whole once its body has ended: the stamp comes
	// first, before anything the handler does with it. The handler is
	// lean (no pooled copy buffer, answers written by hand) because on
	// one core the referee's own work per request is what spreads a
	// burst's stamps: it is the same for every client, and the less
	// it is, the more the stamps say about the client.
	var buf [64]byte
	var err error
	for err == nil {
		_, err = r.Body.Read(buf[:])
	}
	at := time.Now()
	if err != io.EOF {
		http.Error(w, err.Error(), http.StatusBadRequest)
		return
	}
	// Then yield, as spread's referee does: the handlers a burst's last
	// frames woke together all take their stamps before any spends time
	// on its answer, so the spread is the server reading the frames, not
	// its handlers' work one after another (about 20 µs each on one
	// core, which put the floor of 1,000 at 45 ms; issue 38).
	runtime.Gosched()
	w.Header().Set("Content-Type", "application/json")
	switch key, isHit := strings.CutPrefix(r.URL.Path, "/hit/"); {
	case isHit && r.Method == http.MethodPost && key != "":
		rf.mu.Lock()
		rf.views[key]++
		v := rf.views[key]
		a := rf.fresh[key]
		if a == nil {
			a = &arrivals{first: at, last: at}
			rf.fresh[key] = a
		}
		a.n++
		a.at = append(a.at, at)
		if at.Before(a.first) {
			a.first = at
		}
		if at.After(a.last) {
			a.last = at
		}
		rf.mu.Unlock()
		writeViews(w, key, v)
	case strings.HasPrefix(r.URL.Path, "/get/") && r.Method == http.MethodGet:
		key := strings.TrimPrefix(r.URL.Path, "/get/")
		rf.mu.Lock()
		v := rf.views[key]
		rf.mu.Unlock()
		writeViews(w, key, v)
	case r.URL.Path == "/referee/bursts":
		rf.mu.Lock()
		out := make([]burstStat, 0, len(rf.fresh))
		for k, a := range rf.fresh {
			slices.SortFunc(a.at, time.Time.Compare)
			st := burstStat{Key: k, Requests: a.n, Spread: a.last.Sub(a.first).Nanoseconds()}
			for d := 1; d < 10; d++ {
				st.Deciles = append(st.Deciles, a.at[d*(len(a.at)-1)/10].Sub(a.first).Nanoseconds())
			}
			out = append(out, st)
		}
		clear(rf.fresh)
		rf.mu.Unlock()
		_ = json.NewEncoder(w).Encode(out)
	case r.URL.Path == "/" && r.Method == http.MethodGet:
		_, _ = io.WriteString(w, "{}\n") // a client's warm-up
	default:
		w.WriteHeader(http.StatusNotFound)
		_, _ = io.WriteString(w, `{"error":"not found"}`+"\n")
	}
}

// writeViews answers {"slug":key,"views":v}, as the contract's hit and get.
func writeViews(w http.ResponseWriter, key string, v int64) {
	b := append(make([]byte, 0, 64+len(key)), `{"slug":`...)
	b = strconv.AppendQuote(b, key)
	b = append(b, `,"views":`...)
	b = strconv.AppendInt(b, v, 10)
	b = append(b, "}\n"...)
	w.Header().Set("Content-Length", strconv.Itoa(len(b)))
	_, _ = w.Write(b)
}

// refereeProcess is the referee as a process of its own (serve-referee),
// the settings of the whole process first.
func refereeProcess(ctx context.Context, addrFile string) error {
	// The referee is the instrument: its own collections would land in
	// some bursts and not others, whichever client fired them. It runs
	// with the collector off (a burst of 1,000 leaves a few MB), but for
	// a memory limit.
	debug.SetGCPercent(-1)
	debug.SetMemoryLimit(1 << 30)
	if prof := os.Getenv("ARRIVALBENCH_REFEREE_CPUPROFILE"); prof != "" {
		// Where the referee's time goes, for `go tool pprof`.
		f, err := os.Create(prof)
		if err != nil {
			return err
		}
		defer f.Close()
		if err := pprof.StartCPUProfile(f); err != nil {
			return err
		}
		defer pprof.StopCPUProfile()
	}
	return serveReferee(ctx, addrFile)
}

// serveReferee runs the referee on 127.0.0.1 until ctx ends, writing its
// address to addrFile once it listens. A connection that opens with the
// HTTP/2 preface is served by golang.org/x/net/http2's Server; any other
// by net/http as HTTP/1.1 (hey, and racelab's read-backs).
//
// x/net's Server is deprecated for net/http's own HTTP/2 server, but on
// Go 1.26 it is the leaner of the two at this: pinned under chrt, in
// runs of make bench-floor ten minutes apart, the floor's bursts of 1,000
// spread 45 ms at it against 74 ms at net/http's, racelab's 20–23 ms
// against 38–42 ms; the less the instrument adds, the more its stamps say
// about the client. From Go 1.27 on it wraps
// net/http's, and the figures will move with it.
func serveReferee(ctx context.Context, addrFile string) error {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return err
	}
	defer ln.Close()
	rf := newReferee()
	//lint:ignore SA1019 the leaner server on Go 1.26; see above
	h2 := &http2.Server{MaxConcurrentStreams: refereeStreams}
	h1 := &http.Server{Handler: rf}
	h1conns := &connListener{addr: ln.Addr(), conns: make(chan net.Conn), done: make(chan struct{})}
	go func() { _ = h1.Serve(h1conns) }()
	defer h1.Close()
	defer h1conns.Close()
	if err := os.WriteFile(addrFile, []byte(ln.Addr().String()), 0o644); err != nil {
		return err
	}
	stop := context.AfterFunc(ctx, func() { ln.Close() })
	defer stop()
	for {
		conn, err := ln.Accept()
		if err != nil {
			if ctx.Err() != nil {
				return nil
			}
			return err
		}
		go func() {
			br := bufio.NewReader(conn)
			head, err := br.Peek(len(http2.ClientPreface))
			pc := &peekedConn{Conn: conn, r: br}
			switch {
			case err == nil && string(head) == http2.ClientPreface:
				//lint:ignore SA1019 the leaner server on Go 1.26; see serveReferee
				h2.ServeConn(pc, &http2.ServeConnOpts{Context: ctx, Handler: rf})
			case len(head) > 0:
				select {
				case h1conns.conns <- pc:
				case <-h1conns.done:
					conn.Close()
				}
			default:
				conn.Close()
			}
		}()
	}
}

// peekedConn is a connection whose first bytes were peeked at.
type peekedConn struct {
	net.Conn
	r *bufio.Reader
}

func (c *peekedConn) Read(p []byte) (int, error) { return c.r.Read(p) }

// connListener hands net/http the connections that are not HTTP/2.
type connListener struct {
	addr  net.Addr
	conns chan net.Conn
	once  sync.Once
	done  chan struct{}
}

func (l *connListener) Accept() (net.Conn, error) {
	select {
	case c := <-l.conns:
		return c, nil
	case <-l.done:
		return nil, errors.New("referee closed")
	}
}

func (l *connListener) Close() error {
	l.once.Do(func() { close(l.done) })
	return nil
}

func (l *connListener) Addr() net.Addr { return l.addr }
