// Package rawconn is an HTTP/1.1 client connection a test drives byte by
// byte: it writes what it likes (half a request, a stream's start) and
// reads answers within a wait of its own, telling no answer from a bad
// one. The server's guard tests use it where net/http's client would
// hide what they look at: a connection accepted but not served, or
// closed after its answer.
package rawconn
