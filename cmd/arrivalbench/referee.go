package main

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"net"
	"net/http"
	"os"
	"runtime/debug"
	"runtime/pprof"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"
)

// refereeStreams is the referee's SETTINGS_MAX_CONCURRENT_STREAMS: high
// enough that no client is made to split a burst of a few thousand over
// connections, so each splits only as it chooses.
const refereeStreams = 1 << 16

// referee is the neutral server the bursts are measured at: it is neither
// racelab's serve nor any client's, speaks HTTP/1.1 and HTTP/2 with prior
// knowledge on one port (serveReferee), and stamps each POST
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
// address to addrFile once it listens. It speaks HTTP/1.1 (hey, and
// racelab's read-backs) and HTTP/2 with prior knowledge on one port, by
// net/http's own HTTP/2 server: x/net's http2.Server is deprecated for it,
// and from Go 1.27 on only wraps it.
func serveReferee(ctx context.Context, addrFile string) error {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return err
	}
	defer ln.Close()
	var protocols http.Protocols
	protocols.SetHTTP1(true)
	protocols.SetUnencryptedHTTP2(true)
	srv := &http.Server{
		Handler:   newReferee(),
		Protocols: &protocols,
		HTTP2:     &http.HTTP2Config{MaxConcurrentStreams: refereeStreams},
	}
	if err := os.WriteFile(addrFile, []byte(ln.Addr().String()), 0o644); err != nil {
		return err
	}
	stop := context.AfterFunc(ctx, func() { srv.Close() })
	defer stop()
	if err := srv.Serve(ln); !errors.Is(err, http.ErrServerClosed) {
		return err
	}
	return nil
}
