package server

import (
	"net"
	"time"
)

// What guarded_test, an outside test package so that it can serve through
// httpapitest (which imports this package), needs of the unexported.

// ReadHeaderTimeoutOf is the read-header timeout that s serves with.
func ReadHeaderTimeoutOf(s Server) time.Duration {
	srv, ln := s.httpServer(nopListener{})
	ln.Close()
	return srv.ReadHeaderTimeout
}

// WithShedIdleAfter is s with d as the idle time after which a kept-alive
// connection gives up its slot, instead of shedIdleAfter's 5 s.
func WithShedIdleAfter(s Server, d time.Duration) Server {
	s.shedIdleAfter = d
	return s
}

// nopListener stands in for a listener where only the server's settings
// are read.
type nopListener struct{}

func (nopListener) Accept() (net.Conn, error) { return nil, net.ErrClosed }
func (nopListener) Close() error              { return nil }
func (nopListener) Addr() net.Addr            { return &net.TCPAddr{IP: net.IPv4(127, 0, 0, 1)} }
