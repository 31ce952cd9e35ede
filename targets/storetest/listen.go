package storetest

import (
	"io"
	"net"
	"sync"
	"sync/atomic"
	"testing"
)

// SilentListener accepts connections on a loopback port, reads whatever
// comes and never answers: the service that holds a run at its warm-up. It
// returns the listener's address; the listener, its connections and the
// goroutines reading them all end at cleanup.
func SilentListener(tb testing.TB) string {
	addr, _ := Listener(tb, func(conn net.Conn) { _, _ = io.Copy(io.Discard, conn) })
	return addr
}

// Listener accepts connections on a loopback port and runs serve on each,
// in a goroutine of its own: a service written by hand, byte by byte, that
// can answer what no Go server would. It returns the listener's address
// and the count of connections accepted so far. At cleanup the listener
// and every connection are closed and the goroutines waited for, so serve
// must return once its connection is closed.
func Listener(tb testing.TB, serve func(conn net.Conn)) (string, *atomic.Int64) {
	tb.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		tb.Fatal(err)
	}
	var (
		mu       sync.Mutex
		conns    []net.Conn
		wg       sync.WaitGroup
		accepted atomic.Int64
	)
	wg.Go(func() {
		for {
			conn, err := ln.Accept()
			if err != nil {
				return
			}
			accepted.Add(1)
			mu.Lock()
			conns = append(conns, conn)
			mu.Unlock()
			wg.Go(func() {
				defer conn.Close()
				serve(conn)
			})
		}
	})
	tb.Cleanup(func() {
		ln.Close()
		mu.Lock()
		for _, c := range conns {
			c.Close()
		}
		mu.Unlock()
		wg.Wait()
	})
	return ln.Addr().String(), &accepted
}
