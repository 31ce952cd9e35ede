// Package peek looks at a socket without reading from it: whether the peer
// has sent bytes not yet read, or closed. A burst's HTTP/1.1 requests are
// staged with their last byte withheld, and an answer already waiting
// before the release says the server did not wait for that byte.
package peek
