package burst

import (
	"bufio"
	"net"
	"testing"
)

// TestLeanPoolKeepsAtMostItsBound: the pool keeps maxLeanIdle idle
// connections, maxLeanIdle-1 and maxLeanIdle alike, and closes the one
// past them rather than keep it.
func TestLeanPoolKeepsAtMostItsBound(t *testing.T) {
	var p leanPool
	defer p.close()
	conns := make([]net.Conn, maxLeanIdle+1)
	for i := range conns {
		client, server := net.Pipe()
		defer server.Close()
		conns[i] = server
		p.put(&leanConn{conn: client, br: bufio.NewReader(client)})
		if want := min(i+1, maxLeanIdle); len(p.idle) != want {
			t.Fatalf("after %d put back: %d idle, want %d", i+1, len(p.idle), want)
		}
	}
	// The last one's far end reads the close; a kept one's would block.
	if _, err := conns[maxLeanIdle].Read(make([]byte, 1)); err == nil {
		t.Error("the connection past the bound is still open")
	}
	lc, err := p.take(t.Context(), false)
	if err != nil || lc == nil || !lc.reused {
		t.Errorf("take = %v, %v; want a kept connection marked as used before", lc, err)
	}
}
