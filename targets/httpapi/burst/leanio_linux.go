package burst

import (
	"errors"
	"io"
	"net"
	"os"
	"syscall"
	"unsafe"
)

// rawIO reads and writes a lean connection with raw system calls, through
// the connection's own poller (syscall.RawConn), so that deadlines, a
// cancellation and a close still wake a waiting request.
//
// net.Conn enters each read and write by way of the scheduler
// (entersyscall), which wakes the runtime's monitor thread whenever every
// goroutine had been waiting, as a client waiting for its server is most
// of the time: measured on the pinned load (issue 38), those wake-ups
// and the monitor's polling after each were most of the client's context
// switches. A read or write of a non-blocking socket never blocks, so it
// needs none of that: RawSyscall, and the poller when the socket says
// EAGAIN.
//
// Each read tries the socket before it waits, as net.Conn's does: a
// close that came while the connection sat idle is read at once (EOF, and
// the request goes again on a fresh connection), since the poller's word
// of it may have been spent before this read began.
type rawIO struct {
	conn net.Conn
	rc   syscall.RawConn

	// One call's state lives here, and the functions handed to rc are
	// made once, by newLeanIO: a closure made at each call, and what it
	// captured, would go to the heap at each call.
	buf        []byte        // the Read's, or the Write's
	n, written int           // read; written of buf
	errno      syscall.Errno // the last call's
	readFn     func(fd uintptr) bool
	writeFn    func(fd uintptr) bool
}

// newLeanIO returns what a lean connection reads and writes through: the
// raw system calls for a TCP connection, conn itself otherwise.
func newLeanIO(conn net.Conn) io.ReadWriter {
	rc := rawConnOf(conn)
	if rc == nil {
		return conn
	}
	r := &rawIO{conn: conn, rc: rc}
	r.readFn, r.writeFn = r.readOnce, r.writeOnce
	return r
}

// Write writes p whole, waiting for the socket as it must.
func (r *rawIO) Write(p []byte) (int, error) {
	r.buf, r.written, r.errno = p, 0, 0
	err := r.rc.Write(r.writeFn)
	n := r.written
	r.buf = nil
	return n, r.opError("write", err, r.errno)
}

// writeOnce is Write's turn at the socket: false when it is to wait.
func (r *rawIO) writeOnce(fd uintptr) bool {
	r.written, r.errno = rawWrite(fd, r.buf, r.written)
	return r.errno != syscall.EAGAIN
}

func (r *rawIO) Read(p []byte) (int, error) {
	if len(p) == 0 {
		return 0, nil
	}
	r.buf, r.n, r.errno = p, 0, 0
	err := r.rc.Read(r.readFn)
	r.buf = nil
	if err := r.opError("read", err, r.errno); err != nil {
		return 0, err
	}
	if r.n == 0 {
		return 0, io.EOF
	}
	return r.n, nil
}

// readOnce is Read's turn at the socket: false when it is to wait.
func (r *rawIO) readOnce(fd uintptr) bool {
	for {
		m, _, e := syscall.RawSyscall(syscall.SYS_READ, fd, uintptr(unsafe.Pointer(&r.buf[0])), uintptr(len(r.buf)))
		switch e {
		case syscall.EINTR:
			continue
		case syscall.EAGAIN:
			return false
		}
		r.n, r.errno = int(m), e
		return true
	}
}

// rawWrite writes p from its byte n on, until all of it is written or
// the socket takes no more (EAGAIN) or fails, and returns how far it got.
func rawWrite(fd uintptr, p []byte, n int) (int, syscall.Errno) {
	for n < len(p) {
		m, _, e := syscall.RawSyscall(syscall.SYS_WRITE, fd, uintptr(unsafe.Pointer(&p[n])), uintptr(len(p)-n))
		switch e {
		case 0:
			n += int(m)
		case syscall.EINTR:
		default:
			return n, e
		}
	}
	return n, 0
}

// opError is err, or errno when err is nil, as net.Conn would have given
// it: the same wrapping, so that the messages, and what errors.Is and
// net.Error find in them, are the same either way. nil when neither.
func (r *rawIO) opError(op string, err error, errno syscall.Errno) error {
	switch {
	case err != nil:
		var oe *net.OpError
		if errors.As(err, &oe) {
			err = oe.Err // RawConn's own wrapping, "raw-read"
		}
	case errno != 0:
		err = os.NewSyscallError(op, errno)
	default:
		return nil
	}
	return &net.OpError{Op: op, Net: r.conn.LocalAddr().Network(), Source: r.conn.LocalAddr(), Addr: r.conn.RemoteAddr(), Err: err}
}
