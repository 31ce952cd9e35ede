//go:build !(linux || darwin || freebsd || netbsd || openbsd || dragonfly)

package burst

import "net"

// Pending cannot peek at a socket on this system, so it never reports an
// HTTP/1.1 answer as early; HTTP/2 bursts still do.
func Pending(net.Conn) bool { return false }
