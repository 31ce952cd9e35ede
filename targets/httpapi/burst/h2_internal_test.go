package burst

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"sync"
	"testing"
	"time"
)

// h2cServer serves h2c (and HTTP/1.1) on loopback, letting a connection
// have maxStreams streams open; each POST is answered once its whole body
// is read, with the body's length.
func h2cServer(t *testing.T, maxStreams int) string {
	t.Helper()
	var p http.Protocols
	p.SetUnencryptedHTTP2(true)
	p.SetHTTP1(true)
	srv := &http.Server{
		Protocols: &p,
		HTTP2:     &http.HTTP2Config{MaxConcurrentStreams: maxStreams},
		Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			b, err := io.ReadAll(r.Body)
			if err != nil {
				http.Error(w, err.Error(), http.StatusBadRequest)
				return
			}
			fmt.Fprintf(w, `{"read":%d}`, len(b))
		}),
	}
	return serveLoopback(t, srv)
}

// serveLoopback serves srv on a free loopback port until the test ends,
// and returns its base URL.
func serveLoopback(t *testing.T, srv *http.Server) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	served := make(chan struct{})
	go func() { srv.Serve(ln); close(served) }()
	t.Cleanup(func() { srv.Close(); <-served })
	return "http://" + ln.Addr().String()
}

// TestBurstConnections: a burst goes over as few HTTP/2 connections as
// the server's stream limit (on loopback the pool's own, DefaultStreams,
// is higher: TestStreamsByHost) and the first flow-control window of the bodies allow, each at the edge
// of its limit; every request arrives whole and is answered.
func TestBurstConnections(t *testing.T) {
	for _, tc := range []struct {
		name            string
		serverLimit     int
		n, body         int
		conns, widestOn int // connections used, and the most streams on one
	}{
		{"a thousand on one connection when the server allows them", 1000, 1000, 0, 1, 1000},
		{"the server's limit", 50, 50, 0, 1, 50},
		{"one over the server's limit", 50, 51, 0, 2, 26},
		{"bodies that fill the first window", 1000, 10, 6553, 1, 10},
		{"one body too many for it", 1000, 11, 6553, 2, 6},
		{"bodies a byte too long for ten", 1000, 10, 6554, 2, 5},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p := testPool(t, h2cServer(t, tc.serverLimit), SyncH2)
			ws := make([]Wire, tc.n)
			for i := range ws {
				ws[i] = Wire{Method: http.MethodPost, Target: fmt.Sprintf("/p/%d", i), Body: bytes.Repeat([]byte("x"), tc.body)}
			}
			// The server's limit is learned from the first connection.
			if err := p.Prepare(t.Context(), 1); err != nil {
				t.Fatal(err)
			}
			fs, err := p.stageH2(t.Context(), ws)
			if err != nil {
				t.Fatal(err)
			}
			var wg sync.WaitGroup
			for i, f := range fs {
				wg.Go(func() {
					ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
					defer cancel()
					a, err := f(ctx)
					if want := fmt.Sprintf(`{"read":%d}`, tc.body); err != nil || a.Early || a.Status != 200 || string(a.Body) != want {
						t.Errorf("request %d: %d %s, early %t, err %v; want 200 %s", i, a.Status, a.Body, a.Early, err, want)
					}
				})
			}
			wg.Wait()
			widest := 0
			for _, hc := range p.h2 {
				widest = max(widest, int(hc.nextID-1)/2-1) // less the warm-up's GET
			}
			if len(p.h2) != tc.conns || widest != tc.widestOn {
				t.Errorf("%d connections, at most %d streams on one; want %d and %d", len(p.h2), widest, tc.conns, tc.widestOn)
			}
		})
	}
}

// TestStreamsByHost: on loopback a connection carries as many streams as
// one segment's worth of final frames (the server's limit binds first in
// practice); a remote host gets DefaultRemoteStreams; a Config's own
// Streams wins either way.
func TestStreamsByHost(t *testing.T) {
	for _, tc := range []struct {
		base    string
		streams int
		want    int
	}{
		{"http://127.0.0.1:8080", 0, DefaultStreams},
		{"http://localhost", 0, DefaultStreams},
		{"http://[::1]:80", 0, DefaultStreams},
		{"https://shop.example", 0, DefaultRemoteStreams},
		{"http://10.0.0.7:8080", 0, DefaultRemoteStreams},
		{"http://127.0.0.1:8080", 7, 7},
		{"https://shop.example", 7, 7},
	} {
		u, err := url.Parse(tc.base)
		if err != nil {
			t.Fatal(err)
		}
		p, err := New(u, Config{Streams: tc.streams})
		if err != nil {
			t.Fatal(err)
		}
		if p.streams != tc.want {
			t.Errorf("%s with Streams %d: %d streams a connection, want %d", tc.base, tc.streams, p.streams, tc.want)
		}
	}
	// The final frames of DefaultStreams streams, each with a body's last
	// byte, fit one loopback segment; one more would not.
	if f := DefaultStreams * (h2FrameHeader + 1); f > loopbackSegment || f+h2FrameHeader+1 <= loopbackSegment {
		t.Errorf("DefaultStreams %d: final frames of %d bytes against a segment of %d", DefaultStreams, f, loopbackSegment)
	}
}
