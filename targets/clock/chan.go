package clock

import (
	"context"
	"sync"
)

// Chan is a FIFO channel that waits through a clock. On a *Virtual, a
// participant blocked in Send or Recv yields its turn, and the send or
// receive that unblocks it makes it runnable at the current instant, in
// order; waiting senders and receivers are served first come, first served.
// On any other clock it is a Go channel with a context and a close that
// does not panic.
//
// Unlike a Go channel, a Send on a closed Chan returns ErrClosed, a Close
// wakes blocked senders as well as receivers, and a Send or Recv that can
// proceed at once does so even if its context is done: the context only
// bounds waiting. Close may be called more than once.
type Chan[T any] struct {
	v *Virtual // nil on any other clock

	// On a real clock: ch carries the values, done is closed by Close.
	ch        chan T
	done      chan struct{}
	closeOnce sync.Once

	// On a virtual clock, guarded by v.mu.
	capacity int
	buf      queue[T]
	recvq    queue[*waiter[T]]
	sendq    queue[*waiter[T]]
	closed   bool
	// Room for the first value and the first waiter of each kind, where
	// the queues start: a store's channel often carries one answer to one
	// waiter and is dropped, and it then allocates nothing more
	// (issue 24).
	buf1   [1]T
	recvq1 [1]*waiter[T]
	sendq1 [1]*waiter[T]
}

// waiter is a participant blocked on a virtual Chan: a receiver the value
// is handed to, or a sender with the value it offers. It is valid only as
// long as the participant is still in wait number gen.
type waiter[T any] struct {
	p   *participant
	gen uint64
	val T
}

// NewChan returns a channel holding up to capacity values without a
// receiver (0: every send waits for its receiver), that waits through c. It
// panics if capacity is negative, as make does.
func NewChan[T any](c Clock, capacity int) *Chan[T] {
	if capacity < 0 {
		panic("clock: negative channel capacity")
	}
	if v, ok := c.(*Virtual); ok {
		ch := &Chan[T]{v: v, capacity: capacity}
		ch.buf.items, ch.recvq.items, ch.sendq.items = ch.buf1[:0], ch.recvq1[:0], ch.sendq1[:0]
		return ch
	}
	return &Chan[T]{ch: make(chan T, capacity), done: make(chan struct{})}
}

// Send delivers x: to a waiting receiver, else into the buffer if it has
// room, else it waits for a receiver or for room. It returns ErrClosed if
// the channel is or gets closed first, and ctx's error if ctx ends first.
func (c *Chan[T]) Send(ctx context.Context, x T) error {
	if c.v == nil {
		return c.sendReal(ctx, x)
	}
	v := c.v
	v.mu.Lock()
	p := v.running
	if p == nil {
		v.mu.Unlock()
		return v.outside(ctx, func(ctx context.Context) error { return c.Send(ctx, x) })
	}
	if c.closed {
		v.mu.Unlock()
		return ErrClosed
	}
	for c.recvq.len() > 0 {
		w := c.recvq.pop()
		if w.p.gen != w.gen || !w.p.waiting {
			continue // its wait ended otherwise
		}
		w.val = x
		v.wakeLocked(w.p, w.gen, nil)
		v.mu.Unlock()
		return nil
	}
	if c.buf.len() < c.capacity {
		c.buf.push(x)
		v.mu.Unlock()
		return nil
	}
	if err := waitErr(ctx, p); err != nil {
		v.mu.Unlock()
		return err
	}
	c.sendq.push(&waiter[T]{p: p, gen: p.gen, val: x})
	return v.parkLocked(ctx, p) // nil once a receiver has taken x
}

// Recv takes the oldest value: from the buffer, else from a waiting
// sender, else it waits for a sender. Values sent before Close are still
// received; then it returns ErrClosed. It returns ctx's error if ctx ends
// while it waits.
func (c *Chan[T]) Recv(ctx context.Context) (T, error) {
	var zero T
	if c.v == nil {
		return c.recvReal(ctx)
	}
	v := c.v
	v.mu.Lock()
	p := v.running
	if p == nil {
		v.mu.Unlock()
		var x T
		err := v.outside(ctx, func(ctx context.Context) error {
			var err error
			x, err = c.Recv(ctx)
			return err
		})
		return x, err
	}
	if c.buf.len() > 0 {
		x := c.buf.pop()
		// The room just made goes to the first sender waiting for it.
		for c.sendq.len() > 0 {
			w := c.sendq.pop()
			if v.wakeLocked(w.p, w.gen, nil) {
				c.buf.push(w.val)
				break
			}
		}
		v.mu.Unlock()
		return x, nil
	}
	for c.sendq.len() > 0 {
		w := c.sendq.pop()
		if v.wakeLocked(w.p, w.gen, nil) {
			v.mu.Unlock()
			return w.val, nil
		}
	}
	if c.closed {
		v.mu.Unlock()
		return zero, ErrClosed
	}
	if err := waitErr(ctx, p); err != nil {
		v.mu.Unlock()
		return zero, err
	}
	w := &waiter[T]{p: p, gen: p.gen}
	c.recvq.push(w)
	if err := v.parkLocked(ctx, p); err != nil {
		return zero, err
	}
	return w.val, nil
}

// waitErr is why p may not start waiting: its context is done, or its run
// has failed. The caller holds the clock's mu.
func waitErr(ctx context.Context, p *participant) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	return p.runErr()
}

// Close closes the channel: blocked receivers and senders get ErrClosed,
// buffered values can still be received. It never blocks and may be called
// from anywhere, participant or not. On a virtual clock between runs, the
// participants it wakes take their turns in the next run (Run(ctx, 0, nil)
// lets them do so at once).
func (c *Chan[T]) Close() {
	if c.v == nil {
		c.closeOnce.Do(func() { close(c.done) })
		return
	}
	v := c.v
	v.mu.Lock()
	defer v.mu.Unlock()
	if c.closed {
		return
	}
	c.closed = true
	// The participants woken take their turns when the driver of the run
	// in progress, or of the next one, comes to their wake-ups.
	for _, q := range []*queue[*waiter[T]]{&c.recvq, &c.sendq} {
		for q.len() > 0 {
			w := q.pop()
			v.wakeLocked(w.p, w.gen, ErrClosed)
		}
	}
}

func (c *Chan[T]) sendReal(ctx context.Context, x T) error {
	select {
	case <-c.done:
		return ErrClosed
	default:
	}
	select {
	case c.ch <- x:
		return nil
	default:
	}
	select {
	case c.ch <- x:
		return nil
	case <-c.done:
		return ErrClosed
	case <-ctx.Done():
		return ctx.Err()
	}
}

func (c *Chan[T]) recvReal(ctx context.Context) (T, error) {
	var zero T
	select {
	case x := <-c.ch:
		return x, nil
	default:
	}
	select {
	case x := <-c.ch:
		return x, nil
	case <-c.done:
		select {
		case x := <-c.ch: // sent before the close
			return x, nil
		default:
			return zero, ErrClosed
		}
	case <-ctx.Done():
		return zero, ctx.Err()
	}
}

// queue is a FIFO on a slice.
type queue[T any] struct {
	items []T
	head  int
}

func (q *queue[T]) len() int { return len(q.items) - q.head }

func (q *queue[T]) push(x T) { q.items = append(q.items, x) }

func (q *queue[T]) pop() T {
	var zero T
	x := q.items[q.head]
	q.items[q.head] = zero
	q.head++
	switch {
	case q.head == len(q.items):
		q.items, q.head = q.items[:0], 0
	case q.head >= 32 && 2*q.head >= len(q.items):
		n := copy(q.items, q.items[q.head:])
		clear(q.items[n:])
		q.items, q.head = q.items[:n], 0
	}
	return x
}
