package actor

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"sync"
	"time"

	"github.com/racelab/racelab/targets/clock"
	"github.com/racelab/racelab/targets/faults"
	"github.com/racelab/racelab/targets/story"
)

// The strategies an object can follow between reading its state and writing
// it back.
const (
	// StrategyDefault reads, decides and writes within one delivery, so the
	// input gate keeps the whole update together.
	StrategyDefault = ""
	// StrategyAwaitFetch awaits outside I/O between the read and the write.
	// The input gate opens during that await, other requests for the same
	// key interleave, and updates are lost.
	StrategyAwaitFetch = "await-fetch"
)

// Defaults for the durations a Config leaves at zero.
const (
	// DefaultStorageLatency is how long an object awaits its own storage on
	// each read and each write: an in-memory cache hit is faster, a cold
	// read slower; a millisecond keeps bursts short while still giving the
	// other requests time to pile up at the gate.
	DefaultStorageLatency = time.Millisecond
	// DefaultFetchLatency is how long await-fetch waits on outside I/O, a
	// quick subrequest to another service. Five storage round trips fit
	// into it, which is ample for a burst to slip in between read and write.
	DefaultFetchLatency = 5 * time.Millisecond
)

// Stock is how many of each item exist: every item is one of a kind.
const Stock = 1

// ErrClosed is returned by every request made to, or still waiting on, a
// Store that has been closed.
var ErrClosed = errors.New("actor store closed")

// Config sets up a Store. The zero value is the default strategy with the
// default latencies on the real clock.
type Config struct {
	// Strategy is StrategyDefault or StrategyAwaitFetch.
	Strategy string
	// StorageLatency is how long an object awaits its own storage on each
	// read and write, with its input gate closed. Zero means
	// DefaultStorageLatency; a negative value means no wait at all.
	StorageLatency time.Duration
	// FetchLatency is how long StrategyAwaitFetch awaits outside I/O
	// between read and write, with the input gate open. Zero means
	// DefaultFetchLatency; a negative value means the fetch completes at
	// once, though its continuation still queues behind waiting requests.
	FetchLatency time.Duration
	// Now tells the time for the quota's UTC day; nil means Clock.Now. It
	// is called from many objects at once, so it must be safe for
	// concurrent use.
	Now func() time.Time
	// Clock is what objects wait on, for storage and for fetches; nil means
	// the real clock. With a *clock.Virtual the objects are its
	// participants, and requests must be made from its participants
	// (clock.Run) or one at a time from outside its runs; a burst is then a
	// deterministic sequence of events. Close the store from outside runs.
	Clock clock.Clock
	// Faults are failures to inject into the stories' requests (not into
	// the reads of what was counted): the object unreachable at a rate,
	// during an outage, or slow now and then. The zero value injects none.
	Faults faults.Config
}

// Store is a namespace of simulated Durable Objects, one per key and story.
// Objects are created on their first request and live until Close, keeping
// their storage for as long as the Store is open. A Store is safe for
// concurrent use; it must be closed to stop its goroutines.
type Store struct {
	strategy       string
	storageLatency time.Duration
	fetchLatency   time.Duration
	clock          clock.Clock
	now            func() time.Time
	faults         *faults.Injector // nil: none

	// ctx ends when the store closes: every object, fetch and wait in the
	// store watches it.
	ctx    context.Context
	cancel context.CancelFunc
	wg     sync.WaitGroup // object goroutines and fetches in flight

	mu      sync.Mutex
	closed  bool
	objects map[address]*object
	capped  map[story.Op]bool // the ops of stories' own played here (Take)
	// answers are the answer channels of the requests in flight, closed
	// by Close so that their callers stop waiting.
	answers map[closer]struct{}
}

// closer is an answer channel, whatever it carries.
type closer interface{ Close() }

// New returns a Store following cfg. It panics if cfg.Strategy is not one of
// the strategies above: names typed by users are checked by the caller, so
// an unknown one here is a programming error.
func New(cfg Config) *Store {
	switch cfg.Strategy {
	case StrategyDefault, StrategyAwaitFetch:
	default:
		panic(fmt.Sprintf("actor: unknown strategy %q", cfg.Strategy))
	}
	c := cfg.Clock
	if c == nil {
		c = clock.Real{}
	}
	now := cfg.Now
	if now == nil {
		now = c.Now
	}
	ctx, cancel := context.WithCancel(context.Background())
	return &Store{
		strategy:       cfg.Strategy,
		storageLatency: orDefault(cfg.StorageLatency, DefaultStorageLatency),
		fetchLatency:   orDefault(cfg.FetchLatency, DefaultFetchLatency),
		clock:          c,
		now:            now,
		faults:         faults.New(cfg.Faults, c),
		ctx:            ctx,
		cancel:         cancel,
		objects:        make(map[address]*object),
		answers:        make(map[closer]struct{}),
	}
}

// Clock is the clock the store's objects wait on: Config.Clock, or the
// real clock. A caller runs a burst on it with clock.Run.
func (s *Store) Clock() clock.Clock { return s.clock }

// StartTrial marks the start of a trial, from which an outage window of
// Config.Faults is measured: see targets.TrialStarter.
func (s *Store) StartTrial() { s.faults.StartTrial() }

// reach is a request reaching its object, where an injected fault meets
// it: the error names the request, verb and key ("hit \"post\""). They
// are formatted only on a fault: a request that reaches its object pays
// for no words.
func (s *Store) reach(ctx context.Context, verb, key string) error {
	if err := s.faults.Before(ctx, "reach the object"); err != nil {
		return fmt.Errorf("%s %q: %w", verb, key, err)
	}
	return nil
}

func orDefault(d, def time.Duration) time.Duration {
	switch {
	case d == 0:
		return def
	case d < 0:
		return 0
	}
	return d
}

// Prepare does nothing but report a closed store: an object costs one
// goroutine started on its key's first request, far less than a request's
// first storage round trip, so there is nothing worth warming up.
func (s *Store) Prepare(ctx context.Context, n int) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed {
		return ErrClosed
	}
	return ctx.Err()
}

// Close stops every object and every fetch in flight and waits for their
// goroutines to end. Requests still waiting fail with ErrClosed. Close may be
// called more than once. On a virtual clock, call it from outside runs: it
// lets the objects, parked between runs, see the close at once.
func (s *Store) Close() error {
	s.mu.Lock()
	var objects map[address]*object
	var answers map[closer]struct{}
	if !s.closed {
		s.closed = true
		s.cancel()
		objects, answers = s.objects, s.answers
		s.objects, s.answers = nil, nil
	}
	s.mu.Unlock()
	// The requests waiting to be delivered, or for their answers, take
	// ErrClosed.
	for _, o := range objects {
		o.mailbox.Close()
	}
	for a := range answers {
		a.Close()
	}
	if v, ok := s.clock.(*clock.Virtual); ok {
		// A run of no participants wakes the parked ones whose context
		// ended, and lets them return. It fails only during a run, when
		// that run's turns do the same.
		_ = v.Run(context.Background(), 0, nil)
	}
	s.wg.Wait()
	return nil
}

// Forget stops the objects that own key in every story and drops their
// storage: see targets.Forgetter. No request may be in flight on key.
func (s *Store) Forget(key string) {
	s.mu.Lock()
	var gone []*object
	owners := []address{{counters, key}, {quotas, key}, {items, key}, {limiters, key}}
	for op := range s.capped {
		owners = append(owners, address{capped, string(op) + ":" + key})
	}
	for _, a := range owners {
		if o := s.objects[a]; o != nil {
			delete(s.objects, a)
			gone = append(gone, o)
		}
	}
	s.mu.Unlock()
	if len(gone) == 0 {
		return
	}
	for _, o := range gone {
		o.mailbox.Close() // its run loop takes ErrClosed and returns
	}
	if v, ok := s.clock.(*clock.Virtual); ok {
		// As in Close: a run of no participants lets the parked objects
		// see their closed mailboxes and return.
		_ = v.Run(context.Background(), 0, nil)
	}
}

// namespace separates the stories' objects, like the class bindings of a
// Worker: the counter "a" and the visitor "a" are different objects.
type namespace uint8

const (
	counters namespace = iota
	quotas
	items
	limiters
	capped // an op of a story's own: its name is the op's word and the key
)

// address names one object: its namespace and the key it owns.
type address struct {
	ns   namespace
	name string
}

// String names the object in trace steps, like the key a KV store would
// use: "views:post", "quota:visitor", "item:painting", and an op of a
// story's own by its word: "reserve:gala".
func (a address) String() string {
	return [...]string{counters: "views:", quotas: "quota:", items: "item:", limiters: "rl:", capped: ""}[a.ns] + a.name
}

// object is one simulated Durable Object. Its goroutine (run) is the only
// one that touches storage, so the object needs no lock.
type object struct {
	s       *Store
	addr    address
	mailbox *clock.Chan[func(*object)] // unbuffered: a request is delivered when the object takes it
	storage map[string]any
}

// object returns the object that owns addr, creating it and starting its
// goroutine on first use. answer, if not nil, is the channel a request to
// it waits on: Close closes it, until the request drops it (settle).
func (s *Store) object(addr address, answer closer) (*object, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed {
		return nil, ErrClosed
	}
	if answer != nil {
		s.answers[answer] = struct{}{}
	}
	o := s.objects[addr]
	if o == nil {
		o = &object{s: s, addr: addr, mailbox: clock.NewChan[func(*object)](s.clock, 0), storage: make(map[string]any)}
		s.objects[addr] = o
		s.wg.Add(1)
		clock.Go(s.clock, o.run)
	}
	return o, nil
}

// run delivers requests and continuations one at a time. A handler runs to
// its end before the next one is taken, storage awaits included: that is
// the input gate.
func (o *object) run() {
	defer o.s.wg.Done()
	// Checked before each take so that a closed store stops taking work
	// even when its mailbox has more waiting.
	for o.s.ctx.Err() == nil {
		handle, err := o.mailbox.Recv(o.s.ctx)
		if err != nil {
			return
		}
		handle(o)
	}
}

// load reads key from the object's storage, awaiting the storage round trip
// with the input gate closed. It answers the zero value for a key never
// written, and open is false when the store closed during the await, in
// which case the handler must stop without answering.
func load[T any](o *object, key string) (v T, open bool) {
	if !o.s.sleep(o.s.storageLatency) {
		return v, false
	}
	v, _ = o.storage[key].(T)
	return v, true
}

// read answers the value stored under key in the object at addr, and
// records the read as word tells it: the one shape of the reads that only
// look (Views, Paid), so that each is traced alike.
func read[T any](ctx context.Context, s *Store, addr address, key string, word func(T) string) (T, error) {
	return call(ctx, s, addr, func(o *object, reply func(T)) {
		if v, open := load[T](o, key); open {
			o.record(ctx, story.OpRead, word(v), "")
			reply(v)
		}
	})
}

// save writes key to the object's storage, awaiting the storage round trip
// with the input gate closed. It reports false when the store closed during
// the await; the write is then lost along with the store.
func (o *object) save(key string, v any) bool {
	if !o.s.sleep(o.s.storageLatency) {
		return false
	}
	o.storage[key] = v
	return true
}

// resume runs the rest of a request's update, the part after its read.
// Under the default strategy the rest runs at once, in the same delivery,
// so nothing can come between the read and the write. Under await-fetch the
// object first awaits outside I/O: the handler returns, the gate opens and
// the object takes other requests, and the rest comes back through the
// mailbox as a continuation once the fetch completes, queueing behind
// whatever arrived in the meantime.
//
// The fetch is recorded as a step of the request whose context is ctx.
func (o *object) resume(ctx context.Context, rest func(*object)) {
	if o.s.strategy != StrategyAwaitFetch {
		rest(o)
		return
	}
	o.record(ctx, story.OpFetch, "", fmt.Sprintf("outside I/O for %v, input gate open", o.s.fetchLatency))
	o.s.wg.Add(1) // the object's own count keeps the group above zero
	clock.Go(o.s.clock, func() {
		defer o.s.wg.Done()
		if !o.s.sleep(o.s.fetchLatency) {
			return
		}
		_ = o.mailbox.Send(o.s.ctx, rest) // fails only when the store closes
	})
}

// sleep waits for d on the store's clock and reports false if the store
// closed first. A d of zero does not wait, so it takes no turn on a
// virtual clock either.
func (s *Store) sleep(d time.Duration) bool {
	if d <= 0 {
		return s.ctx.Err() == nil
	}
	return s.clock.Sleep(s.ctx, d) == nil
}

// record adds a step on this object to the trace of the request whose
// context is ctx, stamped with the store's clock.
func (o *object) record(ctx context.Context, op, value, note string) {
	if story.Tracing(ctx) {
		story.Trace(ctx, story.Step{At: o.s.clock.Now(), Op: op, Key: o.addr.String(), Value: value, Note: note})
	}
}

// itoa formats a count for a trace step.
func itoa(n int64) string { return strconv.FormatInt(n, 10) }

// call delivers one request to the object at addr and waits for its answer.
// The handler gets the object and a reply function to call at most once,
// possibly from a later continuation. A request not yet delivered is
// withdrawn when ctx ends; one already delivered runs to its end regardless,
// as it would on the platform, but its caller stops waiting.
func call[T any](ctx context.Context, s *Store, addr address, handle func(o *object, reply func(T))) (T, error) {
	var zero T
	if err := ctx.Err(); err != nil {
		return zero, err
	}
	// Buffered so that a late reply never blocks the object.
	answer := clock.NewChan[T](s.clock, 1)
	o, err := s.object(addr, answer)
	if err != nil {
		return zero, err
	}
	defer s.settle(answer)
	request := func(o *object) {
		handle(o, func(v T) { _ = answer.Send(o.s.ctx, v) })
	}
	// The caller waits until its own context ends or the store closes:
	// Close closes the mailbox and the answer channel. (A context made to
	// end with either, per request, was a tenth of an actor trial's
	// time in virtual time; issue 24.)
	if err := o.mailbox.Send(ctx, request); err != nil {
		return zero, s.failure(ctx, err)
	}
	// An answer already given is taken even if the store has just closed.
	v, err := answer.Recv(ctx)
	if err != nil {
		return zero, s.failure(ctx, err)
	}
	return v, nil
}

// settle drops the answer channel of a request that waits no more.
func (s *Store) settle(answer closer) {
	s.mu.Lock()
	delete(s.answers, answer) // a no-op once Close took them
	s.mu.Unlock()
}

// failure is the error a request reports when its wait ended early: the
// caller's context's, or ErrClosed.
func (s *Store) failure(ctx context.Context, err error) error {
	if ctx.Err() != nil {
		return ctx.Err()
	}
	if s.ctx.Err() != nil || errors.Is(err, clock.ErrClosed) {
		return ErrClosed
	}
	return err
}

// today is the UTC day that a quota counts downloads in.
func (s *Store) today() string {
	return s.now().UTC().Format(time.DateOnly)
}
