package load

import (
	"context"
	"net"
	"net/http"
	"os"
	"syscall"
	"testing"
	"time"

	"github.com/racelab/racelab/targets"
	"github.com/racelab/racelab/targets/httpapi/server"
)

// shortQueueListener listens on loopback with a listen queue of backlog
// (net.Listen always asks for the system's maximum), as Python's
// http.server does with 5.
func shortQueueListener(t *testing.T, backlog int) net.Listener {
	t.Helper()
	fd, err := syscall.Socket(syscall.AF_INET, syscall.SOCK_STREAM|syscall.SOCK_CLOEXEC, 0)
	if err != nil {
		t.Fatal(err)
	}
	if err := syscall.Bind(fd, &syscall.SockaddrInet4{Addr: [4]byte{127, 0, 0, 1}}); err != nil {
		syscall.Close(fd)
		t.Fatal(err)
	}
	if err := syscall.Listen(fd, backlog); err != nil {
		syscall.Close(fd)
		t.Fatal(err)
	}
	f := os.NewFile(uintptr(fd), "short-queue")
	defer f.Close()
	ln, err := net.FileListener(f)
	if err != nil {
		t.Fatal(err)
	}
	return ln
}

// slowAccepts accepts a connection at a time, pausing before each, as a
// server with one accepting thread does.
type slowAccepts struct {
	net.Listener
	pause time.Duration
}

func (l slowAccepts) Accept() (net.Conn, error) {
	time.Sleep(l.pause)
	return l.Listener.Accept()
}

// TestLoadOnAShortListenQueue (issue 37): a closed load of 64 workers on
// a service like Python's ThreadingHTTPServer (a listen queue of 4, one
// connection a request, accepted one at a time) starts, and every request
// is answered: the client opens connections a few at a time rather than
// 64 at once, which overflowed the queue and left requests waiting out
// the kernel's retries past the timeout (the target was an ERROR at the
// warm-up). How long the warm-up took is a figure in the result.
func TestLoadOnAShortListenQueue(t *testing.T) {
	tg, err := targets.Open(context.Background(), "actor", targets.WithVirtualTime(false))
	if err != nil {
		t.Fatal(err)
	}
	defer tg.Close()
	srv := &http.Server{Handler: server.New(tg.Store)}
	srv.SetKeepAlivesEnabled(false) // HTTP/1.0 style: one connection a request
	ln := shortQueueListener(t, 4)
	served := make(chan struct{})
	go func() { _ = srv.Serve(slowAccepts{ln, time.Millisecond}); close(served) }()
	defer func() { srv.Close(); <-served }()

	p := hitsOverHTTP(t, "http://"+ln.Addr().String())
	p.Concurrency, p.Requests, p.Keys, p.Seed = 64, 400, 16, 3
	res, err := Load(context.Background(), p)
	if err != nil {
		t.Fatal(err)
	}
	lt := res.Targets[0]
	if lt.Error != "" || lt.Errors != 0 || lt.Sent != p.Requests || lt.Answered != p.Requests {
		t.Fatalf("error %q; %d sent, %d answered, %d failed (first kinds %+v); want all %d answered",
			lt.Error, lt.Sent, lt.Answered, lt.Errors, lt.ErrorKinds, p.Requests)
	}
	if w := lt.WarmUp; w == nil || w.Connections != 64 || w.Warmed < 1 || w.Warmed > w.Connections {
		t.Errorf("warm-up %+v; want 1 to 64 of 64 connections warmed", w)
	}
	if lt.Keys.Lost != 0 || lt.Keys.Over != 0 {
		t.Errorf("the actor lost %d and over-counted %d: the load's counts are wrong", lt.Keys.Lost, lt.Keys.Over)
	}
}
