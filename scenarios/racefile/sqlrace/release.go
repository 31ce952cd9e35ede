package sqlrace

import (
	"context"
	"fmt"
	"sync"
	"time"
)

// OrderStep is one item of an order, transaction.step: statement Step
// (from 1) of transaction Tx (from 0), or its End, "commit" or
// "rollback".
type OrderStep struct {
	Tx, Step int
	End      string
}

func (o OrderStep) String() string {
	if o.End != "" {
		return fmt.Sprintf("%d.%s", o.Tx, o.End)
	}
	return fmt.Sprintf("%d.%d", o.Tx, o.Step)
}

// Release makes the functions that run begun transactions together, one
// each, to be called at the burst's release: each runs its transaction,
// meeting the others at their barriers, and returns when it has ended.
// With an order (the whole burst's, Tx numbering runs from 0), the first
// called replays it once every one has been called, and each waits for
// the replay. Each records its timeline in the recorder its context
// carries.
func Release(runs []*Run, order []OrderStep) []func(context.Context) {
	b := newBarriers(runs)
	var start sync.Once
	ordered := make(chan struct{})
	var called sync.WaitGroup
	called.Add(len(runs))
	fs := make([]func(context.Context), len(runs))
	for j, r := range runs {
		fs[j] = func(ctx context.Context) {
			r.trace(ctx)
			called.Done()
			if order != nil {
				// Every transaction's lane is in place before the order
				// starts: a traced replay records each from its first
				// step.
				called.Wait()
			}
			start.Do(func() {
				now := time.Now()
				for _, r := range runs {
					r.mu.Lock()
					r.t0 = now
					r.mu.Unlock()
				}
				if order != nil {
					go func() {
						defer close(ordered)
						replay(ctx, runs, order)
					}()
				}
			})
			if order != nil {
				<-ordered
				return
			}
			r.run(ctx, b)
		}
	}
	return fs
}

// replay runs an order, one step at a time: each goes to its
// transaction's own goroutine (its connection), and the next is taken
// when it is done or blocked. A blocked statement goes on when the lock
// is released; a deadlock is the database's to break.
func replay(ctx context.Context, runs []*Run, order []OrderStep) {
	type op struct {
		o    OrderStep
		done chan struct{}
	}
	queues := make([]chan op, len(runs))
	var wg sync.WaitGroup
	for i, r := range runs {
		queues[i] = make(chan op, len(order))
		stmts := r.def.statements()
		wg.Go(func() {
			defer r.tx.End()
			for o := range queues[i] {
				r.mu.Lock()
				over := r.finished
				r.mu.Unlock()
				var once sync.Once
				signal := func() { once.Do(func() { close(o.done) }) }
				onBlocked := func(on bool) {
					if on {
						signal()
					}
				}
				switch {
				case over:
				case o.o.End != "":
					r.finish(r.commit(o.o.End, onBlocked), o.o.End)
				default:
					if err := r.statement(ctx, o.o.Step, stmts[o.o.Step-1], onBlocked); err != nil {
						r.finish(err, "")
					}
				}
				signal()
			}
		})
	}
	for _, o := range order {
		x := op{o, make(chan struct{})}
		queues[o.Tx] <- x
		// Done, blocked, or still behind its transaction's blocked
		// statement: the order goes on either way.
		select {
		case <-x.done:
		case <-time.After(BlockedAfter + BlockedAfter/4):
		case <-ctx.Done():
		}
	}
	for _, q := range queues {
		close(q)
	}
	wg.Wait()
}

// barriers are the points (barrier: true) where the transactions wait
// for each other: barrier k is passed when every transaction has reached
// it, is blocked on a lock, has fewer barriers, or is over.
type barriers struct {
	mu       sync.Mutex
	reached  []int // barriers reached, by transaction
	has      []int // barriers it has
	blockedT []bool
	over     []bool
	open     []chan struct{}
}

func newBarriers(runs []*Run) *barriers {
	b := &barriers{reached: make([]int, len(runs)), has: make([]int, len(runs)), blockedT: make([]bool, len(runs)), over: make([]bool, len(runs))}
	most := 0
	for j, r := range runs {
		b.has[j] = r.def.barriers()
		most = max(most, b.has[j])
	}
	for range most {
		b.open = append(b.open, make(chan struct{}))
	}
	return b
}

// index is transaction i's slot: its number in the burst, from the
// first of those staged together.
func (b *barriers) index(i int) int { return i % len(b.reached) }

// arrive waits at barrier k until it opens.
func (b *barriers) arrive(ctx context.Context, i, k int) error {
	b.mu.Lock()
	j := b.index(i)
	b.reached[j] = max(b.reached[j], k+1)
	b.check()
	ch := b.open[k]
	b.mu.Unlock()
	select {
	case <-ch:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

func (b *barriers) blocked(i int, on bool) {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.blockedT[b.index(i)] = on
	b.check()
}

func (b *barriers) done(i int) {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.over[b.index(i)] = true
	b.check()
}

// check opens every barrier that may open now, in order; b.mu is held.
func (b *barriers) check() {
	for k, ch := range b.open {
		select {
		case <-ch:
			continue // open already
		default:
		}
		for j := range b.reached {
			if b.reached[j] <= k && k < b.has[j] && !b.blockedT[j] && !b.over[j] {
				return
			}
		}
		close(ch)
	}
}
