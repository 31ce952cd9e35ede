package burst

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"io"
	"net"
	"net/http"
	"net/url"
	"sync/atomic"
	"syscall"
	"testing"
	"time"
)

// loopbackPair is a TCP connection on loopback: the client end, and the
// server end as accepted. rcvBuf, when not zero, is the server's receive
// buffer, set on the listening socket so that the accepted one has it
// from its first byte.
func loopbackPair(t *testing.T, rcvBuf int) (client *net.TCPConn, server net.Conn) {
	t.Helper()
	lc := net.ListenConfig{Control: func(_, _ string, c syscall.RawConn) error {
		if rcvBuf == 0 {
			return nil
		}
		var serr error
		err := c.Control(func(fd uintptr) {
			serr = syscall.SetsockoptInt(int(fd), syscall.SOL_SOCKET, syscall.SO_RCVBUF, rcvBuf)
		})
		return errors.Join(err, serr)
	}}
	ln, err := lc.Listen(context.Background(), "tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	accepted := make(chan net.Conn, 1)
	go func() {
		c, _ := ln.Accept()
		accepted <- c
	}()
	c, err := net.DialTimeout("tcp", ln.Addr().String(), 10*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	server = <-accepted
	if server == nil {
		t.Fatal("accept failed")
	}
	t.Cleanup(func() { server.Close() })
	return c.(*net.TCPConn), server
}

// TestRawIORequestOverTheSocket: a request the socket cannot take whole
// in the read that sends it (the receiver reads nothing until bytes have
// arrived, and both buffers are far smaller than the request) still goes
// out whole and in order, and its answer is read.
func TestRawIORequestOverTheSocket(t *testing.T) {
	client, server := loopbackPair(t, 4096)
	if err := client.SetWriteBuffer(4096); err != nil {
		t.Fatal(err)
	}
	rw := newLeanIO(client)
	if _, ok := rw.(*rawIO); !ok {
		t.Fatalf("newLeanIO(a TCP connection) = %T, want the raw system calls", rw)
	}
	req := make([]byte, 4<<20)
	for i := range req {
		req[i] = byte(i * 7)
	}
	got := make(chan []byte, 1)
	go func() {
		for !Pending(server) { // the request has begun to arrive
			time.Sleep(time.Millisecond)
		}
		b := make([]byte, len(req))
		if _, err := io.ReadFull(server, b); err != nil {
			got <- nil
			return
		}
		got <- b
		_, _ = server.Write([]byte("answer"))
	}()
	if n, err := rw.Write(req); n != len(req) || err != nil {
		t.Fatalf("Write = %d, %v; want %d, nil", n, err, len(req))
	}
	_ = client.SetDeadline(time.Now().Add(time.Minute)) // bounds a hang, never met otherwise
	answer, err := io.ReadAll(io.LimitReader(rw, int64(len("answer"))))
	if err != nil || string(answer) != "answer" {
		t.Fatalf("read %q, %v; want the answer", answer, err)
	}
	if b := <-got; !bytes.Equal(b, req) {
		t.Errorf("the server read %d bytes unlike the request's %d", len(b), len(req))
	}
}

// TestRawIOErrorsAsNetConn: what the raw reads and writes fail with reads
// as net.Conn's own failures do: the same message past a deadline, a
// timeout to net.Error, io.EOF at the peer's close, and a reset or a
// broken pipe when the peer is gone.
func TestRawIOErrorsAsNetConn(t *testing.T) {
	client, _ := loopbackPair(t, 0)
	rw := newLeanIO(client)
	_ = client.SetDeadline(time.Unix(1, 0))
	_, plain := client.Read(make([]byte, 8))
	_, raw := rw.Read(make([]byte, 8))
	var ne net.Error
	if raw == nil || plain == nil || raw.Error() != plain.Error() || !errors.As(raw, &ne) || !ne.Timeout() {
		t.Errorf("past the deadline: %v; want %v, a timeout", raw, plain)
	}
	_, plain = client.Write([]byte("GET / HTTP/1.1\r\n\r\n"))
	if _, raw := rw.Write([]byte("GET / HTTP/1.1\r\n\r\n")); raw == nil || plain == nil || raw.Error() != plain.Error() || !errors.As(raw, &ne) || !ne.Timeout() {
		t.Errorf("a write past the deadline: %v; want %v, a timeout", raw, plain)
	}

	client, server := loopbackPair(t, 0)
	rw = newLeanIO(client)
	_ = client.SetDeadline(time.Now().Add(time.Minute))
	server.Close()
	if _, err := rw.Read(make([]byte, 8)); err != io.EOF {
		t.Errorf("after the peer's close: %v; want EOF", err)
	}

	client, server = loopbackPair(t, 0)
	rw = newLeanIO(client)
	_ = client.SetDeadline(time.Now().Add(time.Minute))
	_ = server.(*net.TCPConn).SetLinger(0) // close with a reset
	server.Close()
	var err error
	for range 3 { // the first request may go before the reset comes back
		if _, err = rw.Write([]byte("GET / HTTP/1.1\r\n\r\n")); err == nil {
			_, err = rw.Read(make([]byte, 8))
		}
		if err != nil && err != io.EOF {
			break
		}
	}
	if !isClosedConn(err) || !errors.As(err, new(*net.OpError)) {
		t.Errorf("to a reset peer: %v; want a reset or broken pipe, as net.Conn wraps it", err)
	}
}

// TestRawIOHalfClosedWhileIdle: a server that half-closes a keep-alive
// connection after its answer, and goes on reading without answering,
// costs nothing to the next request, however soon it is sent: the close
// is read at once and the request goes again on a fresh connection, as
// net.Conn's read found it.
func TestRawIOHalfClosedWhileIdle(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	var accepted atomic.Int64
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			accepted.Add(1)
			go func() {
				defer c.Close()
				br := bufio.NewReader(c)
				for {
					line, err := br.ReadString('\n')
					if err != nil {
						return
					}
					if line == "\r\n" {
						break
					}
				}
				_, _ = c.Write([]byte("HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok"))
				_ = c.(*net.TCPConn).CloseWrite()
				_, _ = io.Copy(io.Discard, br) // reads on, answers nothing, until the client closes
			}()
		}
	}()
	// However long the connection sat idle, its close unread: at once,
	// or long past the poller's word of the close.
	for _, idle := range []time.Duration{0, 10 * time.Millisecond, 200 * time.Millisecond} {
		t.Run(idle.String(), func(t *testing.T) {
			before := accepted.Load()
			p, err := New(&url.URL{Scheme: "http", Host: ln.Addr().String()}, Config{Sync: SyncNone})
			if err != nil {
				t.Fatal(err)
			}
			defer p.Close()
			for i := range 2 {
				if i == 1 {
					time.Sleep(idle)
				}
				ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
				a, err := p.Send(ctx, Wire{Method: http.MethodGet, Target: "/"})
				cancel()
				if err != nil || string(a.Body) != "ok" {
					t.Fatalf("request %d: %q, %v; want ok", i, a.Body, err)
				}
			}
			if got := accepted.Load() - before; got != 2 {
				t.Errorf("two requests took %d connections, want 2 (the second on a fresh one)", got)
			}
		})
	}
}
