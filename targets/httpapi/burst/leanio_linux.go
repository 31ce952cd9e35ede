package burst

import (
	"errors"
	"io"
	"net"
	"os"
	"syscall"
	"time"
	"unsafe"
)

// idleCheck is how long a connection may sit idle and still have its
// request written inside the read that waits for the answer (rawIO).
const idleCheck = 100 * time.Millisecond

// rawIO reads and writes a lean connection with raw system calls, through
// the connection's own poller (syscall.RawConn), so that deadlines, a
// cancellation and a close still wake a waiting request.
//
// Two costs of net.Conn are left out, both measured on the pinned load
// (issue 38). Each read or write through net.Conn enters its system call
// by way of the scheduler (entersyscall), which wakes the runtime's
// monitor thread whenever every goroutine had been waiting, as a client
// waiting for its server is most of the time: on one core those wake-ups
// and the monitor's polling after each were most of the client's context
// switches. A read or write of a non-blocking socket never blocks, so it
// needs none of that. And the read straight after a request finds no
// answer yet: net.Conn tries it, gets EAGAIN, then waits for the poller.
//
// So Write does not write: it hands the request to the next Read, which
// writes it and then waits for the poller before it reads. The request
// goes out inside the read, after the read has cleared what the poller
// had said of the connection before, so the poller's word that the answer
// came cannot be cleared with it. A request the socket does not take
// whole at once goes the plain way: the rest written as the socket
// allows, then the read tried before waiting.
//
// What came while the connection sat idle is read only when the poller
// next speaks for it: a server that closed an idle connection answers the
// request that reaches it with a reset, which wakes the read (EOF or the
// reset, and the request goes again on a fresh connection, as before).
// One that only half-closed it, and then read the request without
// closing, would leave the read to its deadline: so a connection idle
// for longer than idleCheck goes the plain way too, where the read tried
// first finds the close at once. A connection reused sooner, as a
// closed-model load reuses each, does not.
type rawIO struct {
	conn net.Conn
	rc   syscall.RawConn
	req  []byte    // written by the next Read
	used time.Time // when the last Read returned bytes, or the connection was made

	// One call's state lives here, and the functions handed to rc are
	// made once, by newLeanIO: a closure made at each call, and what it
	// captured, would go to the heap at each call.
	buf        []byte        // the Read's
	send       bool          // the Read writes req first
	n, written int           // read; written of req
	errno      syscall.Errno // the read's, or the write's when writing
	readFn     func(fd uintptr) bool
	writeFn    func(fd uintptr) bool
}

// newLeanIO returns what a lean connection reads and writes through: the
// raw system calls for a TCP connection, conn itself otherwise.
func newLeanIO(conn net.Conn) io.ReadWriter {
	sc, ok := conn.(syscall.Conn)
	if !ok {
		return conn
	}
	rc, err := sc.SyscallConn()
	if err != nil {
		return conn
	}
	r := &rawIO{conn: conn, rc: rc, used: time.Now()}
	r.readFn, r.writeFn = r.readOnce, r.writeOnce
	return r
}

// Write keeps p for the next Read to write; a request still kept is
// written first. Its errors are the next Read's.
func (r *rawIO) Write(p []byte) (int, error) {
	if r.req != nil {
		if err := r.flush(); err != nil {
			return 0, err
		}
	}
	r.req = p
	return len(p), nil
}

// flush writes the kept request, waiting for the socket as it must.
func (r *rawIO) flush() error {
	r.written, r.errno = 0, 0
	err := r.rc.Write(r.writeFn)
	r.req = nil
	return r.opError("write", err, r.errno)
}

// writeOnce is flush's turn at the socket: false when it is to wait.
func (r *rawIO) writeOnce(fd uintptr) bool {
	r.written, r.errno = rawWrite(fd, r.req, r.written)
	return r.errno != syscall.EAGAIN
}

func (r *rawIO) Read(p []byte) (int, error) {
	if len(p) == 0 {
		return 0, nil
	}
	if r.req != nil && time.Since(r.used) > idleCheck {
		if err := r.flush(); err != nil {
			return 0, err
		}
	}
	r.buf, r.send, r.n, r.written, r.errno = p, r.req != nil, 0, 0, 0
	err := r.rc.Read(r.readFn)
	r.buf = nil
	send := r.send
	r.send = false
	switch {
	case err != nil && send: // before the request went, as a write's would have
		r.req = nil
		return 0, r.opError("write", err, 0)
	case send: // the request's write ended the call
		if r.errno != syscall.EAGAIN {
			r.req = nil
			return 0, r.opError("write", nil, r.errno)
		}
		// The socket took a part of the request, or none: the rest
		// goes as it allows, then the read the plain way.
		r.req = r.req[r.written:]
		if err := r.flush(); err != nil {
			return 0, err
		}
		return r.Read(p)
	}
	r.req = nil
	if err := r.opError("read", err, r.errno); err != nil {
		return 0, err
	}
	if r.n == 0 {
		return 0, io.EOF
	}
	r.used = time.Now()
	return r.n, nil
}

// readOnce is Read's turn at the socket: false when it is to wait.
func (r *rawIO) readOnce(fd uintptr) bool {
	if r.send {
		r.written, r.errno = rawWrite(fd, r.req, 0)
		if r.errno != 0 {
			return true // Read goes on from the failure or the part written
		}
		// Written whole: wait for the answer, which cannot be here yet.
		r.send = false
		return false
	}
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
