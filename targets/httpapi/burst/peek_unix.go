//go:build linux || darwin || freebsd || netbsd || openbsd || dragonfly

package burst

import (
	"net"
	"syscall"
)

// Pending reports whether the peer has sent anything not yet read, or has
// closed, by peeking at the socket without waiting and without consuming.
// It tells a staged request answered before its release: a server that
// answers an incomplete request was not held back by the withheld byte.
func Pending(conn net.Conn) bool {
	rc := rawConnOf(conn)
	if rc == nil {
		return false
	}
	var buf [1]byte
	got := false
	_ = rc.Read(func(fd uintptr) bool {
		n, _, err := syscall.Recvfrom(int(fd), buf[:], syscall.MSG_PEEK|syscall.MSG_DONTWAIT)
		got = n > 0 || n == 0 && err == nil // bytes, or the peer's FIN
		return true                         // never wait
	})
	return got
}

// rawConnOf is conn's socket, to read and write it with system calls of
// racelab's own through its poller; nil for a connection that has none
// (a TLS one, a pipe in a test).
func rawConnOf(conn net.Conn) syscall.RawConn {
	sc, ok := conn.(syscall.Conn)
	if !ok {
		return nil
	}
	rc, err := sc.SyscallConn()
	if err != nil {
		return nil
	}
	return rc
}
