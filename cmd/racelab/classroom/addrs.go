package classroom

import (
	"net"
	"strconv"
)

// Addrs lists the HOST:PORT addresses a room reaches a server listening
// on addr at, for the page's curl lines: addr itself, or, when it listens
// on every interface (--public with :8787 or 0.0.0.0:8787), the
// machine's own addresses, IPv4 first, since "0.0.0.0" in a curl line
// reaches nobody's server but the student's own.
func Addrs(addr net.Addr) []string {
	tcp, ok := addr.(*net.TCPAddr)
	if !ok {
		return []string{addr.String()}
	}
	if !tcp.IP.IsUnspecified() {
		return []string{tcp.String()}
	}
	port := strconv.Itoa(tcp.Port)
	var v4, v6 []string
	if ifaces, err := net.InterfaceAddrs(); err == nil {
		for _, a := range ifaces {
			ipn, ok := a.(*net.IPNet)
			if !ok || ipn.IP.IsLoopback() || !ipn.IP.IsGlobalUnicast() {
				continue
			}
			if ipn.IP.To4() != nil {
				v4 = append(v4, net.JoinHostPort(ipn.IP.String(), port))
			} else if tcp.IP.To4() == nil {
				v6 = append(v6, net.JoinHostPort(ipn.IP.String(), port))
			}
		}
	}
	out := append(v4, v6...)
	if len(out) == 0 {
		out = []string{net.JoinHostPort("127.0.0.1", port)}
	}
	return out
}
