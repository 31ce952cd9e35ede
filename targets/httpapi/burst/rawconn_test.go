package burst

import (
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"
)

// TestConn: a whole request gets its status and body; a half-sent one no
// answer within the wait (status 0, not a failure); and an answer that
// says Connection: close is followed by the close.
func TestConn(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("X-Path", r.URL.Path)
		_, _ = w.Write([]byte("hello"))
	}))
	defer srv.Close()
	addr := strings.TrimPrefix(srv.URL, "http://")

	c := Dial(t, addr, 5*time.Second)
	c.Send(t, "GET /a HTTP/1.1\r\nHost: x\r\n\r\n")
	if status, h, body := c.Answer(t, 5*time.Second, true); status != 200 || h.Get("X-Path") != "/a" || body != "hello" {
		t.Errorf("whole request: %d %v %q; want 200, X-Path /a, hello", status, h, body)
	}
	c.Send(t, "GET /b HTTP/1.1\r\n") // no blank line: the head is not over
	if status := c.Status(t, 100*time.Millisecond); status != 0 {
		t.Errorf("half a request: status %d; want 0, no answer", status)
	}
	if status := c.RoundTrip(t, "Host: x\r\nConnection: close\r\n\r\n", 5*time.Second); status != 200 {
		t.Errorf("the rest of it: status %d; want 200", status)
	}
	if !c.ClosedBy(5 * time.Second) {
		t.Error("after Connection: close, the server did not close the connection")
	}
}
