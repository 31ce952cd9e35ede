package server

import (
	"context"
	"errors"
	"sync"
)

// Driver is what a Pool needs of a store's driver, whose pool of
// connections has the type P.
type Driver[P any] struct {
	// Open makes a pool that may hold size connections.
	Open func(ctx context.Context, size int) (P, error)
	// Take takes one connection out of p and checks that the server
	// answers on it, and answers how to give it back (nil when there is
	// nothing to give back).
	Take func(ctx context.Context, p P) (release func(), err error)
	// Close closes p and its connections.
	Close func(p P) error
}

// Pool holds a store's pool of connections to its server, and replaces it
// with a larger one when a burst needs more. Its methods are safe for
// concurrent use, but Prepare must not run alongside requests: the pool a
// request took may be closed under it.
type Pool[P any] struct {
	server Server
	driver Driver[P]

	mu   sync.RWMutex
	p    P
	size int
}

// NewPool holds p, a pool of size connections to srv made by d.Open.
func NewPool[P any](srv Server, d Driver[P], p P, size int) *Pool[P] {
	return &Pool[P]{server: srv, driver: d, p: p, size: size}
}

// Get is the pool requests use.
func (h *Pool[P]) Get() P {
	h.mu.RLock()
	defer h.mu.RUnlock()
	return h.p
}

// Prepare makes the pool hold at least n connections, replacing it with a
// larger one when it holds fewer, and opens and checks n of them at once,
// so that a burst of n requests finds them ready. Every connection is held
// until all n were taken, so that they are n distinct ones rather than one
// reused n times. An error of the driver's Open is answered as it is; the
// failures to take a connection are joined, after the server's name.
func (h *Pool[P]) Prepare(ctx context.Context, n int) error {
	p, err := h.grow(ctx, n)
	if err != nil {
		return err
	}
	releases := make([]func(), n)
	errs := make([]error, n)
	var wg sync.WaitGroup
	for i := range n {
		wg.Go(func() { releases[i], errs[i] = h.driver.Take(ctx, p) })
	}
	wg.Wait()
	for _, release := range releases {
		if release != nil {
			release()
		}
	}
	if err := errors.Join(errs...); err != nil {
		return h.server.Errorf("prepare %d connections: %w", n, err)
	}
	return nil
}

// grow answers a pool that may hold n connections: the one held, or a new
// one that replaces it when it holds fewer.
func (h *Pool[P]) grow(ctx context.Context, n int) (P, error) {
	h.mu.Lock()
	defer h.mu.Unlock()
	if n > h.size {
		p, err := h.driver.Open(ctx, n)
		if err != nil {
			var none P
			return none, err
		}
		_ = h.driver.Close(h.p)
		h.p, h.size = p, n
	}
	return h.p, nil
}

// Close closes the pool.
func (h *Pool[P]) Close() error {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.driver.Close(h.p)
}
