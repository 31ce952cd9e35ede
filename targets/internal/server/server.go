package server

import (
	"context"
	"errors"
	"fmt"
	"net"
	"syscall"
	"time"
)

// Server is a real server as a store's messages name it: every message
// starts "KIND at ADDR: ".
type Server struct {
	Kind string // "redis", "postgres"
	Addr string // host:port
	// ErrUnreachable is the store's sentinel, wrapped by every error that
	// says the server did not answer.
	ErrUnreachable error
	// BareNetErrors tells a network failure by the network error's own
	// message rather than by the whole error the driver answered, for a
	// driver whose words around it only repeat the connection settings
	// (pgx: "failed to connect to `user=… database=…`: …").
	BareNetErrors bool
}

// Errorf formats an error about the server: "KIND at ADDR: " and the rest.
func (s Server) Errorf(format string, args ...any) error {
	return fmt.Errorf("%s at %s: "+format, append([]any{s.Kind, s.Addr}, args...)...)
}

// Unreachable describes err, the failure of a first contact that was
// bounded by timeout. A refused connection, a timeout and any other network
// failure are told in one line that wraps s.ErrUnreachable and err; another
// error (the server answered, but with a refusal) only wraps err.
func (s Server) Unreachable(err error, timeout time.Duration) error {
	var netErr net.Error
	switch {
	case errors.Is(err, syscall.ECONNREFUSED):
		return s.unreachable("connection refused", err)
	case errors.Is(err, context.DeadlineExceeded), errors.As(err, &netErr) && netErr.Timeout():
		return s.unreachable(fmt.Sprintf("no answer within %s", timeout), err)
	case errors.As(err, &netErr):
		if s.BareNetErrors {
			return s.unreachable(netErr.Error(), err)
		}
		return s.unreachable(err.Error(), err)
	}
	return s.Errorf("%w", err)
}

func (s Server) unreachable(reason string, err error) error {
	return &unreachableError{server: s.Kind + " at " + s.Addr, reason: reason, sentinel: s.ErrUnreachable, err: err}
}

// unreachableError is a server that did not answer, reported in one line.
type unreachableError struct {
	server, reason string
	sentinel, err  error
}

func (e *unreachableError) Error() string   { return e.server + ": " + e.reason }
func (e *unreachableError) Unwrap() []error { return []error{e.sentinel, e.err} }
