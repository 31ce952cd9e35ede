package burst

import (
	"context"
	"fmt"
	"sync"
)

// Gate stages a burst of requests made by code of the caller's own, a
// story's request function, which makes its request as it always does
// (through a client over the Pool, down to Send): each of the burst's n
// calls runs in a goroutine of its own under a context of the gate's
// (StageCalls), and Send, asked under it, stages the request rather than
// send it whole, and waits for the release. Once every call has sent its
// request, or returned without one, the requests are staged together
// (Pool.Stage); StageCalls's release functions then send each one's final
// part, the last of them every one's, and hand each call its answer.
//
// A call's first request under the gate's context is the one staged; any
// other it makes, after it or at the same time, goes whole. A Gate is for
// one burst: make another for the next (Pool.Gate).
type Gate struct {
	pool  *Pool
	slots []slot

	mu      sync.Mutex
	open    int           // slots neither sent nor done
	settled chan struct{} // closed once open is 0
	failed  chan struct{} // closed when the burst is not staged: err says why
	err     error
}

// slot is one call of the burst.
type slot struct {
	state  slotState // under Gate.mu
	wire   Wire      // set before state becomes sent
	run    context.Context
	cancel context.CancelCauseFunc
	// staged releases the wire: Pool.Stage's function for it, nil for a
	// call that sent nothing.
	staged func(context.Context) (Answer, error)
	answer chan sent // the staged request's answer, for the call; buffered
}

type slotState int

const (
	slotOpen slotState = iota // the call has sent nothing yet
	slotSent                  // its request waits to be staged, or released
	slotDone                  // it returned without sending a request
)

// sent is a staged request's answer, as its release got it.
type sent struct {
	a   Answer
	err error
}

// gateKey is the context key of a call's slot.
type gateKey struct{}

// gateCall is what a call's context carries: its gate and its index.
type gateCall struct {
	g *Gate
	j int
}

// Gate makes the gate of a burst of n calls over p (see Gate).
func (p *Pool) Gate(n int) *Gate {
	g := &Gate{pool: p, slots: make([]slot, n), open: n, settled: make(chan struct{}), failed: make(chan struct{})}
	if n == 0 {
		close(g.settled)
	}
	return g
}

// StageCalls stages the burst of g: it runs call(ctx, j) for every j below
// g's n at once, each in a goroutine of its own under a context that
// stages the request the call sends through g's pool, and returns once
// every request is staged, or when ctx ends, or when the burst could not
// be staged (then with why, once every call has returned).
//
// release(ctx, j) then releases call j's request, within ctx, the last of
// them all to be called sending every one's final part (Pool.Stage), and
// returns what the call returned along with its raw answer, for its
// arrival and whether it came early (a zero Answer for a call that sent
// nothing). Call release once for every j: a call's goroutine lives until
// its release, or until the ctx StageCalls was given ends. Once ctx
// passed to release ends, so does the context of any further request the
// call makes. A panic in call is call's own to recover.
func StageCalls[T any](ctx context.Context, g *Gate, call func(ctx context.Context, j int) T) (release func(ctx context.Context, j int) (T, Answer), err error) {
	n := len(g.slots)
	results := make([]T, n)
	done := make([]chan struct{}, n)
	for j := range n {
		done[j] = make(chan struct{})
		s := &g.slots[j]
		s.run = ctx
		var cctx context.Context
		cctx, s.cancel = context.WithCancelCause(context.WithValue(ctx, gateKey{}, gateCall{g, j}))
		s.answer = make(chan sent, 1)
		go func() {
			defer close(done[j])
			defer g.returned(j)
			results[j] = call(cctx, j)
		}()
	}
	if err := g.ready(ctx); err != nil {
		for _, d := range done {
			<-d
		}
		return nil, err
	}
	return func(ctx context.Context, j int) (T, Answer) {
		a := g.release(ctx, j)
		<-done[j]
		return results[j], a
	}, nil
}

// callOf is the gate call ctx belongs to, if it belongs to one of p's.
func callOf(ctx context.Context, p *Pool) (gateCall, bool) {
	c, ok := ctx.Value(gateKey{}).(gateCall)
	return c, ok && c.g.pool == p
}

// send stages w as call j's request and waits for its release; staged
// is false when call j has sent its request already, and w is to go whole.
func (g *Gate) send(j int, w Wire) (a Answer, staged bool, err error) {
	s := &g.slots[j]
	g.mu.Lock()
	if s.state != slotOpen {
		g.mu.Unlock()
		return Answer{}, false, nil
	}
	s.wire, s.state = w, slotSent
	g.settleLocked()
	g.mu.Unlock()
	select {
	case r := <-s.answer:
		return r.a, true, r.err
	case <-g.failed:
		return Answer{}, true, fmt.Errorf("%s %s: not staged: %w", w.Method, w.Target, g.err)
	case <-s.run.Done():
		return Answer{}, true, fmt.Errorf("%s %s: not released: %w", w.Method, w.Target, context.Cause(s.run))
	}
}

// returned says call j has returned: a call that sent nothing has had its
// answer without the wire. Its context is let go.
func (g *Gate) returned(j int) {
	s := &g.slots[j]
	s.cancel(context.Canceled)
	g.mu.Lock()
	defer g.mu.Unlock()
	if s.state == slotOpen {
		s.state = slotDone
		g.settleLocked()
	}
}

// settleLocked counts one slot settled; the caller holds mu.
func (g *Gate) settleLocked() {
	if g.open--; g.open == 0 {
		close(g.settled)
	}
}

// ready waits until every call has sent its request or returned without
// one, and stages the requests sent. A failure, or the end of ctx first,
// is every waiting call's too.
func (g *Gate) ready(ctx context.Context) error {
	select {
	case <-g.settled:
	case <-ctx.Done():
		g.fail(context.Cause(ctx))
		return context.Cause(ctx)
	}
	var ws []Wire
	var at []int
	for j := range g.slots {
		if s := &g.slots[j]; s.state == slotSent {
			ws, at = append(ws, s.wire), append(at, j)
		}
	}
	if len(ws) == 0 {
		return nil
	}
	fs, err := g.pool.Stage(ctx, ws)
	if err != nil {
		g.fail(err)
		return err
	}
	for k, j := range at {
		g.slots[j].staged = fs[k]
	}
	return nil
}

// fail calls the burst off: every call waiting for its release is told
// err.
func (g *Gate) fail(err error) {
	g.err = err
	close(g.failed)
}

// release releases call j's request within ctx, hands the call its answer
// and returns it; a call that sent nothing has none. Once ctx ends, the
// call's own context ends too.
func (g *Gate) release(ctx context.Context, j int) Answer {
	s := &g.slots[j]
	if s.staged == nil {
		return Answer{}
	}
	context.AfterFunc(ctx, func() { s.cancel(context.Cause(ctx)) })
	a, err := s.staged(ctx)
	s.answer <- sent{a, err}
	return a
}
