package burst

import (
	"bufio"
	"errors"
	"io"
	"net"
	"net/http"
	"testing"
	"time"
)

// Conn is one client connection; Dial closes it when the test ends.
type Conn struct {
	net.Conn
	br *bufio.Reader
}

// Dial connects to addr within timeout, or fails the test.
func Dial(t testing.TB, addr string, timeout time.Duration) *Conn {
	t.Helper()
	c, err := net.DialTimeout("tcp", addr, timeout)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	return &Conn{c, bufio.NewReader(c)}
}

// Send writes s as it is, or fails the test.
func (c *Conn) Send(t testing.TB, s string) {
	t.Helper()
	if _, err := io.WriteString(c, s); err != nil {
		t.Fatal(err)
	}
}

// Answer reads one answer within wait, its body too when whole is set,
// and returns its status and headers: a status of 0 when none came in
// time. An answer that is not HTTP fails the test.
func (c *Conn) Answer(t testing.TB, wait time.Duration, whole bool) (int, http.Header, string) {
	t.Helper()
	_ = c.SetReadDeadline(time.Now().Add(wait))
	defer c.SetReadDeadline(time.Time{})
	resp, err := http.ReadResponse(c.br, nil)
	var ne net.Error
	if errors.As(err, &ne) && ne.Timeout() {
		return 0, nil, ""
	}
	if err != nil {
		t.Fatalf("read answer: %v", err)
	}
	var body []byte
	if whole {
		if body, err = io.ReadAll(resp.Body); err != nil {
			t.Fatalf("read body: %v", err)
		}
	}
	return resp.StatusCode, resp.Header, string(body)
}

// Head reads one answer's status line and headers within wait, 0 if none
// came; the body is left unread (a stream's never ends).
func (c *Conn) Head(t testing.TB, wait time.Duration) (int, http.Header) {
	t.Helper()
	status, h, _ := c.Answer(t, wait, false)
	return status, h
}

// Status reads one whole answer within wait and returns its status: 0
// if none came in time.
func (c *Conn) Status(t testing.TB, wait time.Duration) int {
	t.Helper()
	status, _, _ := c.Answer(t, wait, true)
	return status
}

// RoundTrip sends req and returns the status of its answer (Status).
func (c *Conn) RoundTrip(t testing.TB, req string, wait time.Duration) int {
	t.Helper()
	c.Send(t, req)
	return c.Status(t, wait)
}

// ClosedBy says whether the server closes the connection within wait,
// whatever it answered before.
func (c *Conn) ClosedBy(wait time.Duration) bool {
	_ = c.SetReadDeadline(time.Now().Add(wait))
	_, err := io.Copy(io.Discard, c.br)
	var ne net.Error
	return !(errors.As(err, &ne) && ne.Timeout())
}
