package clock

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"slices"
	"sync"
	"sync/atomic"
	"time"
)

// Virtual is a clock that a deterministic discrete-event scheduler moves.
//
// Goroutines run on it as participants: those Run starts, and those a
// participant starts with Go. Exactly one participant runs at a time. It
// runs until it waits through the clock (Sleep, or a Chan that cannot
// proceed) or returns; then the next wake-up in order takes over. Wake-ups
// are ordered by instant, then by the order they were scheduled, so
// participants made runnable at one instant run in that order. When no
// participant can run at the current instant and a Run is in progress, the
// clock jumps to the earliest pending wake-up. Time never moves while a
// participant runs, however long it computes.
//
// Since a participant's turn ends only where it asks the clock to wait, the
// interleaving of a run is a function of its program alone (and of the
// seeded choices that program makes): the same program gives the same
// history, byte for byte, every time.
//
// Participants run only during a Run; between runs the clock stands still.
// Participants that outlive a run (a store's objects blocked on their
// mailboxes, say) stay parked and resume in the next run. Something done
// from outside between runs, such as closing a Chan or cancelling the
// context a participant waits with, makes them runnable in the next run: a
// Run of no participants, Run(ctx, 0, nil), is the way to let them act on
// it at once (a store's Close does that to end its goroutines).
//
// A Virtual is safe for concurrent use by its participants and, for Now,
// by anyone. The zero value is not usable; call NewVirtual.
type Virtual struct {
	start time.Time

	mu      sync.Mutex
	elapsed time.Duration // the current instant, as time since start
	// now mirrors elapsed for Now, which reads it without mu: a store
	// asks the time several times a request, and the lock was most of
	// the cost of asking (issue 24). Written under mu with elapsed.
	now atomic.Int64

	seq     uint64       // count of wake-ups scheduled: the tie-breaker
	events  eventQueue   // pending wake-ups, earliest first
	running *participant // the participant allowed to run; nil when none is
	run     *run         // the Run in progress, nil between runs
	ids     uint64       // count of participants created: their ids

	// cancellable holds the participants parked with a context that can
	// end, in no order (each knows its place: participant.cancelAt). A
	// slice rather than a map by Done channel: it is walked each time the
	// clock would move on, and a map's iteration and its per-channel
	// allocations were a tenth of an actor trial (issue 24).
	cancellable []*participant
	ended       []*participant // wakeCancelledLocked's scratch

	// workers are the goroutines kept to play participants while Reuse
	// is on (pool.go).
	workers pool
	// spare is the members of the last run that ended, for the next
	// run's: a trial after another then allocates no participants.
	spare []participant
}

// NewVirtual returns a virtual clock standing at start, with no
// participants. The monotonic reading of start, if any, is dropped, so that
// every instant the clock answers prints and compares alike.
func NewVirtual(start time.Time) *Virtual {
	return &Virtual{start: start.Round(0)}
}

// participant is one goroutine scheduled by a Virtual. Every field is
// guarded by the Virtual's mu, except that err is read by the participant
// itself after it is woken (the switch to it orders the read after the
// write).
type participant struct {
	w        *worker         // the goroutine playing it, resumed to give it the turn
	run      *run            // the Run that started it; nil if started by Go
	index    int             // which of run's members it is: it calls run.f(run.ctx, index)
	f        func()          // what it calls if started by Go
	id       uint64          // order of creation, to wake several in a fixed order
	waitCtx  context.Context // the context it is parked with, if that can end
	waitDone <-chan struct{} // waitCtx's Done
	cancelAt int             // its index in Virtual.cancellable while waitDone is set

	// gen counts the participant's waits: it changes when a wait begins to
	// end, so that every other wake-up scheduled for that wait (a timer,
	// a channel, a context) is recognized as stale and dropped.
	gen     uint64
	waiting bool  // not running, not done: parked until a wake-up
	done    bool  // its function has returned
	err     error // why its last wait ended: nil, ErrClosed, a ctx or run error
}

// membersLocked returns n participants for a run: the last run's, if
// there is room, else new ones. A participant used again keeps counting
// its waits on from where it stopped, past every wake-up still pending
// for its last incarnation (a timer its last wait left behind, a place in
// a channel's queue): those are stale, by their wait number, as ever.
func (v *Virtual) membersLocked(n int) []participant {
	ps := v.spare
	v.spare = nil
	if cap(ps) < n {
		return make([]participant, n)
	}
	ps = ps[:n]
	for i := range ps {
		ps[i] = participant{gen: ps[i].gen + 1}
	}
	return ps
}

// initLocked readies p, a participant that has yet to run.
func (v *Virtual) initLocked(p *participant) {
	v.ids++
	p.id, p.waiting = v.ids, true
}

// play calls what p runs: its run's function, or the one Go was given.
func (p *participant) play() {
	if r := p.run; r != nil {
		r.f(r.pctx, p.index)
		return
	}
	p.f()
}

// run is one call of Virtual.Run.
type run struct {
	ctx       context.Context
	pctx      context.Context // ctx as its members get it, marked as the run's
	f         func(ctx context.Context, i int)
	members   []participant // in one allocation, as a run starts many
	remaining int           // members still running
	err       error         // why the run failed: its ctx, or a deadlock
}

// event is a pending wake-up: participant p resumes at instant at, if it is
// still in the wait numbered gen.
type event struct {
	at  time.Duration
	seq uint64
	p   *participant
	gen uint64
}

// runKey marks the context a Run hands its participants, to refuse a
// nested Run that would block the only running participant for good.
type runKey struct{}

var (
	errRunInProgress = errors.New("clock: a virtual run is already in progress")
	errNestedRun     = errors.New("clock: Run called from inside one of the virtual clock's participants")
	errOutsider      = errors.New("clock: virtual clock waited on from outside its participants during a run")
)

// Now is the clock's current instant.
func (v *Virtual) Now() time.Time {
	return v.start.Add(time.Duration(v.now.Load()))
}

// Run starts n participants at the current instant, made runnable in index
// order, each calling f(ctx, i), and returns when all n have returned.
//
// It returns an error wrapping ErrDeadlock if the n cannot all return
// because every one still running is blocked with no wake-up pending; each
// of them is woken with that error first, so that it can return. If ctx is
// done before the run ends, every participant of the run that waits is
// woken with ctx's error, any later wait of theirs fails at once, and Run
// returns ctx.Err() as soon as they have returned.
//
// Participants started with Go do not hold Run up: once its n participants
// have returned and nothing else can run at the current instant, Run
// returns, leaving the others parked (blocked on a Chan, or sleeping past
// the current instant) until the next run. While its n are at work, though,
// time advances to the others' wake-ups too: one that never stops
// scheduling them (a ticker) keeps a run whose members are blocked going,
// where it would otherwise end in a deadlock.
//
// A participant waiting with a context that ends is woken with the
// context's error at the next point where the clock would otherwise move on
// (or declare a deadlock), in the order participants were created: a
// cancel made by a participant thus takes effect at the instant it was
// made, the same way every time. One made between runs takes effect when
// the next Run starts, before its participants do.
//
// Only one Run may be in progress at a time, and f must not call Run.
func (v *Virtual) Run(ctx context.Context, n int, f func(ctx context.Context, i int)) error {
	switch {
	case n < 0:
		return fmt.Errorf("clock: run of %d participants; want 0 or more", n)
	case ctx.Value(runKey{}) == v:
		return errNestedRun
	}
	if err := ctx.Err(); err != nil {
		return err
	}
	v.mu.Lock()
	if v.run != nil {
		v.mu.Unlock()
		return errRunInProgress
	}
	r := &run{ctx: ctx, f: f, members: v.membersLocked(n), remaining: n}
	r.pctx = context.WithValue(ctx, runKey{}, v)
	v.run = r
	v.wakeCancelledLocked()
	for i := range r.members {
		p := &r.members[i]
		p.run, p.index = r, i
		v.initLocked(p)
		v.scheduleLocked(p, v.elapsed)
		v.startLocked(p)
	}
	v.dispatchLocked()
	v.drive(r)
	return r.err
}

// drive plays run r on the calling goroutine, the Run's caller: it
// switches to the participant whose turn it is, and back when its turn
// ends, until the run is over. Whoever ends a turn (a participant that
// waits or returns) picks the next one (dispatchLocked); drive only makes
// the switch, so every hand-off is two direct switches and no wake-up of
// another thread. It is called with mu held and returns with it released.
//
// If r's ctx ends, every member that waits is woken with its error, at the
// next hand-off: a participant's turn is never cut short, on any clock.
func (v *Virtual) drive(r *run) {
	done := r.ctx.Done()
	for {
		p := v.running
		if p == nil { // dispatchLocked found the run over
			v.mu.Unlock()
			return
		}
		v.mu.Unlock()
		w := p.w
		w.resume()
		if w.broken {
			w.finish()
		}
		v.mu.Lock()
		if done == nil || r.err != nil {
			continue
		}
		select {
		case <-done:
			r.err = r.ctx.Err()
			v.failLocked(r) // they run after the one whose turn it is
		default:
		}
	}
}

// Go starts f as a participant, runnable at the current instant after
// every wake-up already scheduled for it. The caller keeps running: f gets
// its turn when the caller next waits. Called from outside the clock's
// participants, f starts with the next run.
func (v *Virtual) Go(f func()) {
	v.mu.Lock()
	p := &participant{f: f}
	v.initLocked(p)
	v.scheduleLocked(p, v.elapsed)
	v.startLocked(p)
	v.mu.Unlock()
}

// Sleep parks the calling participant for d of virtual time and lets the
// others run; a d of zero or less still yields, so that participants
// runnable at the same instant take their turns in order. It returns ctx's
// error at once if ctx is done, and wakes with it if ctx ends during the
// wait (see Run for when).
//
// Called from outside the clock's participants between runs, Sleep runs as
// a Run of one participant: it moves the clock on by d, firing on the way
// the wake-ups of parked participants.
func (v *Virtual) Sleep(ctx context.Context, d time.Duration) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	v.mu.Lock()
	p := v.running
	if p == nil {
		v.mu.Unlock()
		return v.outside(ctx, func(ctx context.Context) error { return v.Sleep(ctx, d) })
	}
	if err := p.runErr(); err != nil {
		v.mu.Unlock()
		return err
	}
	v.scheduleLocked(p, v.later(d))
	return v.parkLocked(ctx, p)
}

// later is the instant d after now, saturating rather than overflowing.
func (v *Virtual) later(d time.Duration) time.Duration {
	const maxDuration = time.Duration(1<<63 - 1)
	switch {
	case d <= 0:
		return v.elapsed
	case d > maxDuration-v.elapsed:
		return maxDuration
	}
	return v.elapsed + d
}

// outside runs op, a blocking call made by a goroutine that is not a
// participant, as a Run of one participant.
func (v *Virtual) outside(ctx context.Context, op func(ctx context.Context) error) error {
	var err error
	rerr := v.Run(ctx, 1, func(ctx context.Context, _ int) { err = op(ctx) })
	switch {
	case errors.Is(rerr, errRunInProgress):
		return errOutsider
	case rerr != nil:
		return rerr
	}
	return err
}

// participate plays participant p on worker w's goroutine, from p's first
// turn: it runs p's function and picks who runs next. It reports whether w is kept to
// play another participant (pool.go); either way, the caller then hands
// control back to the driver.
func (v *Virtual) participate(w *worker, p *participant) (kept bool) {
	returned := false
	// Deferred so that runtime.Goexit (t.FailNow) hands on too; the
	// goroutine then ends, so its worker is not kept. It hands control
	// back here, half way through unwinding, for the driver to end it
	// elsewhere (worker.finish).
	defer func() {
		kept = v.exit(p, w, returned)
		if !returned {
			w.broken = true
			w.yield(struct{}{})
		}
	}()
	p.play()
	returned = true
	return
}

// exit marks the running participant p done and hands the turn on. When
// f returned and Reuse is on, w joins the idle workers first, under the
// same lock, so that the next run finds it however soon it starts.
func (v *Virtual) exit(p *participant, w *worker, returned bool) (kept bool) {
	v.mu.Lock()
	defer v.mu.Unlock()
	p.done = true
	p.waiting = false
	if p.run != nil {
		p.run.remaining--
	}
	if kept = returned && v.workers.on > 0; kept {
		v.workers.idle = append(v.workers.idle, w)
	}
	v.running = nil
	v.dispatchLocked()
	return kept
}

// runErr is the error of p's run if it failed: every wait then fails at
// once, so that a cancelled or deadlocked run ends promptly. The caller
// holds mu.
func (p *participant) runErr() error {
	if p.run == nil {
		return nil
	}
	return p.run.err
}

// scheduleLocked schedules a wake-up of p's current wait at instant at.
func (v *Virtual) scheduleLocked(p *participant, at time.Duration) {
	v.seq++
	v.events.push(event{at: at, seq: v.seq, p: p, gen: p.gen})
}

// wakeLocked ends p's wait number gen with err, making p runnable at the
// current instant, behind every wake-up scheduled before. It reports false,
// and does nothing, if that wait is already over.
func (v *Virtual) wakeLocked(p *participant, gen uint64, err error) bool {
	if !p.waiting || p.gen != gen {
		return false
	}
	p.gen++ // drops the wait's other wake-ups, such as its timer
	p.err = err
	v.unparkLocked(p)
	v.scheduleLocked(p, v.elapsed)
	return true
}

// parkLocked ends the turn of p, the running participant, which has
// arranged its wake-up: it hands the turn on, releases mu, and returns
// when p runs again, with the reason its wait ended. If ctx ends first, p
// is woken with ctx's error (see wakeCancelledLocked).
//
// When p's own wake-up is the next one (a sleep that no other participant
// wakes before), p keeps the turn: the run is the same, with no switch.
func (v *Virtual) parkLocked(ctx context.Context, p *participant) error {
	p.waiting = true
	p.err = nil
	if done := ctx.Done(); done != nil {
		p.waitCtx, p.waitDone, p.cancelAt = ctx, done, len(v.cancellable)
		v.cancellable = append(v.cancellable, p)
	}
	v.running = nil
	v.dispatchLocked()
	next := v.running
	v.mu.Unlock()
	if next != p {
		p.w.yield(struct{}{}) // back when the driver resumes p
	}
	return p.err
}

// unparkLocked forgets the context p was parked with: its wait is over.
func (v *Virtual) unparkLocked(p *participant) {
	if p.waitDone == nil {
		return
	}
	last := len(v.cancellable) - 1
	moved := v.cancellable[last]
	v.cancellable[p.cancelAt], moved.cancelAt = moved, p.cancelAt
	v.cancellable[last] = nil
	v.cancellable = v.cancellable[:last]
	p.waitCtx, p.waitDone = nil, nil
}

// wakeCancelledLocked wakes, in order of creation, the parked participants
// whose context has ended, and reports whether there were any.
//
// Contexts are checked here, at points the program's own course decides,
// rather than by callbacks that other goroutines run when they end: a
// cancel made by a participant then wakes its waiters at the same point of
// the run every time.
func (v *Virtual) wakeCancelledLocked() bool {
	all := v.ended[:0]
	for _, p := range v.cancellable {
		select {
		case <-p.waitDone:
			all = append(all, p)
		default:
		}
	}
	if len(all) == 0 {
		return false
	}
	slices.SortFunc(all, func(a, b *participant) int { return cmp.Compare(a.id, b.id) })
	for _, p := range all {
		v.wakeLocked(p, p.gen, p.waitCtx.Err())
	}
	clear(all)
	v.ended = all[:0]
	return true
}

// failLocked wakes every waiting participant of r with r.err and reports
// whether there was any.
func (v *Virtual) failLocked(r *run) bool {
	woke := false
	for i := range r.members {
		if p := &r.members[i]; v.wakeLocked(p, p.gen, r.err) {
			woke = true
		}
	}
	return woke
}

// dispatchLocked gives the turn to the next participant, if any may run,
// by making it v.running; the driver switches to it (drive). It is called,
// with mu held, whenever no participant is running: by the participant
// that just parked or returned, and by Run before its first turn. It
// leaves v.running nil once the run is over.
//
// The next participant is the earliest valid wake-up. One at the current
// instant runs at once; a later one only while a Run still has members at
// work, time then jumping to it. Between runs, or once a run's members have
// all returned, the clock does not move. A run whose members are blocked
// with nothing pending is deadlocked: they are woken with ErrDeadlock.
func (v *Virtual) dispatchLocked() {
	for {
		for len(v.events) > 0 {
			ev := v.events[0]
			p := ev.p
			if ev.gen != p.gen {
				v.events.pop() // a wake-up for a wait that is already over
				continue
			}
			if ev.at > v.elapsed {
				if r := v.run; r == nil || r.remaining == 0 {
					break
				}
				if v.wakeCancelledLocked() {
					continue // they run first, at the current instant
				}
				v.elapsed = ev.at
				v.now.Store(int64(ev.at))
			}
			v.events.pop()
			p.gen++
			p.waiting = false
			v.unparkLocked(p)
			v.running = p
			return
		}
		r := v.run
		if r == nil {
			return
		}
		if r.remaining == 0 {
			v.run = nil
			v.spare = r.members // all returned: no one plays them any more
			return
		}
		if v.wakeCancelledLocked() {
			continue
		}
		if r.err == nil {
			r.err = r.ctx.Err() // the run was cancelled: that, not a deadlock, stopped it
		}
		if r.err == nil {
			r.err = fmt.Errorf("%w: %d of %d participants blocked with no wake-up pending at %v",
				ErrDeadlock, r.remaining, len(r.members), v.elapsed)
		}
		if !v.failLocked(r) {
			// Members at work, none running, none waiting: impossible
			// unless the clock's own bookkeeping is wrong.
			panic("clock: virtual run has members that neither run nor wait")
		}
	}
}

// eventQueue is a binary min-heap of wake-ups by instant, then by order of
// scheduling. Hand-written rather than container/heap to avoid an interface
// conversion per operation on the scheduler's hottest path.
type eventQueue []event

func (q eventQueue) less(i, j int) bool {
	if q[i].at != q[j].at {
		return q[i].at < q[j].at
	}
	return q[i].seq < q[j].seq
}

func (q *eventQueue) push(e event) {
	*q = append(*q, e)
	h := *q
	for i := len(h) - 1; i > 0; {
		parent := (i - 1) / 2
		if !h.less(i, parent) {
			break
		}
		h[i], h[parent] = h[parent], h[i]
		i = parent
	}
}

func (q *eventQueue) pop() event {
	h := *q
	top := h[0]
	last := len(h) - 1
	h[0] = h[last]
	h[last] = event{} // drop the pointer for the collector
	h = h[:last]
	for i := 0; ; {
		l, r, min := 2*i+1, 2*i+2, i
		if l < len(h) && h.less(l, min) {
			min = l
		}
		if r < len(h) && h.less(r, min) {
			min = r
		}
		if min == i {
			break
		}
		h[i], h[min] = h[min], h[i]
		i = min
	}
	*q = h
	return top
}
