package load

import (
	"bufio"
	"context"
	"net"
	"net/http"
	"sync/atomic"
	"syscall"
	"testing"
	"time"
)

// rawServer accepts connections on loopback and hands each to serve
// once its request has been read: a server that misbehaves on the wire.
func rawServer(t *testing.T, serve func(c *net.TCPConn)) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ln.Close() })
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			go func() {
				defer c.Close()
				if _, err := http.ReadRequest(bufio.NewReader(c)); err == nil {
					serve(c.(*net.TCPConn))
				}
			}()
		}
	}()
	return "http://" + ln.Addr().String()
}

// TestErrorKinds: each way a request fails on the wire is told apart, from
// what a real connection returns.
func TestErrorKinds(t *testing.T) {
	for _, tc := range []struct {
		kind  string
		serve func(c *net.TCPConn)
	}{
		{KindClosed, func(c *net.TCPConn) {}},
		{KindCut, func(c *net.TCPConn) {
			c.Write([]byte("HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: 100\r\n\r\n{\"views\":"))
		}},
		{KindReset, func(c *net.TCPConn) { c.SetLinger(0) }},
	} {
		base := rawServer(t, tc.serve)
		client := &http.Client{Transport: &http.Transport{DisableKeepAlives: true}, Timeout: 5 * time.Second}
		var err error
		if resp, e := client.Post(base+"/hit/a", "application/json", nil); e != nil {
			err = e
		} else {
			_, err = bufio.NewReader(resp.Body).ReadString(0)
			resp.Body.Close()
		}
		if got := errorKind(err); got != tc.kind {
			t.Errorf("%v: kind %q, want %q", err, got, tc.kind)
		}
	}
}

// TestErrorKindOutOfFiles: a socket opened past the process's limit of
// open files is racelab's own machine out of descriptors, not "other".
func TestErrorKindOutOfFiles(t *testing.T) {
	var was syscall.Rlimit
	if err := syscall.Getrlimit(syscall.RLIMIT_NOFILE, &was); err != nil {
		t.Skip("no file limit to lower:", err)
	}
	// A new descriptor takes the lowest free number, above standard
	// input, output and error: under a limit of 3 there is none.
	low := was
	low.Cur = 3
	if err := syscall.Setrlimit(syscall.RLIMIT_NOFILE, &low); err != nil {
		t.Skip("cannot lower the file limit:", err)
	}
	_, dialErr := net.Dial("tcp", "127.0.0.1:1")
	if err := syscall.Setrlimit(syscall.RLIMIT_NOFILE, &was); err != nil {
		t.Fatal(err)
	}
	if got := errorKind(dialErr); got != KindFiles {
		t.Errorf("%v: kind %q, want %q", dialErr, got, KindFiles)
	}
}

// TestLoadCountsStatusCodes: a service's answers are counted by HTTP
// status, the failed ones with a status among them; a store that is not a
// service has none.
func TestLoadCountsStatusCodes(t *testing.T) {
	var n atomic.Int64
	base := serveActor(t, func(h http.Handler) http.HandlerFunc {
		return func(w http.ResponseWriter, r *http.Request) {
			if r.Method == http.MethodPost && n.Add(1)%10 == 0 {
				http.Error(w, "busy", http.StatusServiceUnavailable)
				return
			}
			h.ServeHTTP(w, r)
		}
	})
	p := hitsOverHTTP(t, base)
	p.Concurrency, p.Requests, p.Keys = 4, 100, 5
	res, err := Load(context.Background(), p)
	if err != nil {
		t.Fatal(err)
	}
	tg := res.Targets[0]
	if got := tg.StatusCodes; len(got) != 2 || got[200] != 90 || got[503] != 10 {
		t.Errorf("status codes %v; want 90 × 200 and 10 × 503", got)
	}
	if err := res.Check(); err != nil {
		t.Error(err)
	}
	tg.StatusCodes[200] = 100
	if err := res.Check(); err == nil {
		t.Error("110 answers by status of 100 sent: taken")
	}
	p.Targets, p.Options = []string{"actor"}, nil
	if res, err = Load(context.Background(), p); err != nil || res.Targets[0].StatusCodes != nil {
		t.Errorf("the actor, a store: status codes %v, %v", res.Targets[0].StatusCodes, err)
	}
}
