package actor

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"
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
	// Now tells the time for the quota's UTC day; nil means time.Now. It is
	// called from many objects at once, so it must be safe for concurrent
	// use.
	Now func() time.Time
}

// Store is a namespace of simulated Durable Objects, one per key and story.
// Objects are created on their first request and live until Close, keeping
// their storage for as long as the Store is open. A Store is safe for
// concurrent use; it must be closed to stop its goroutines.
type Store struct {
	strategy       string
	storageLatency time.Duration
	fetchLatency   time.Duration
	now            func() time.Time

	stop chan struct{}  // closed by Close
	wg   sync.WaitGroup // object goroutines and fetches in flight

	mu      sync.Mutex
	closed  bool
	objects map[address]*object
}

// New returns a Store following cfg. It panics if cfg.Strategy is not one of
// the strategies above: names typed by users are checked by the caller, so
// an unknown one here is a programming error.
func New(cfg Config) *Store {
	switch cfg.Strategy {
	case StrategyDefault, StrategyAwaitFetch:
	default:
		panic(fmt.Sprintf("actor: unknown strategy %q", cfg.Strategy))
	}
	s := &Store{
		strategy:       cfg.Strategy,
		storageLatency: orDefault(cfg.StorageLatency, DefaultStorageLatency),
		fetchLatency:   orDefault(cfg.FetchLatency, DefaultFetchLatency),
		now:            cfg.Now,
		stop:           make(chan struct{}),
		objects:        make(map[address]*object),
	}
	if s.now == nil {
		s.now = time.Now
	}
	return s
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
// called more than once.
func (s *Store) Close() error {
	s.mu.Lock()
	if !s.closed {
		s.closed = true
		close(s.stop)
		s.objects = nil
	}
	s.mu.Unlock()
	s.wg.Wait()
	return nil
}

// namespace separates the stories' objects, like the class bindings of a
// Worker: the counter "a" and the visitor "a" are different objects.
type namespace uint8

const (
	counters namespace = iota
	quotas
	items
)

// address names one object: its namespace and the key it owns.
type address struct {
	ns   namespace
	name string
}

// object is one simulated Durable Object. Its goroutine (run) is the only
// one that touches storage, so the object needs no lock.
type object struct {
	s       *Store
	mailbox chan func(*object) // unbuffered: a request is delivered when the object takes it
	storage map[string]any
}

// object returns the object that owns addr, creating it and starting its
// goroutine on first use.
func (s *Store) object(addr address) (*object, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed {
		return nil, ErrClosed
	}
	o := s.objects[addr]
	if o == nil {
		o = &object{s: s, mailbox: make(chan func(*object)), storage: make(map[string]any)}
		s.objects[addr] = o
		s.wg.Add(1)
		go o.run()
	}
	return o, nil
}

// run delivers requests and continuations one at a time. A handler runs to
// its end before the next one is taken, storage awaits included: that is
// the input gate.
func (o *object) run() {
	defer o.s.wg.Done()
	for {
		// Checked first so that a closed store stops taking work even when
		// its mailbox has more waiting.
		select {
		case <-o.s.stop:
			return
		default:
		}
		select {
		case <-o.s.stop:
			return
		case handle := <-o.mailbox:
			handle(o)
		}
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
func (o *object) resume(rest func(*object)) {
	if o.s.strategy != StrategyAwaitFetch {
		rest(o)
		return
	}
	o.s.wg.Add(1) // the object's own count keeps the group above zero
	go func() {
		defer o.s.wg.Done()
		if !o.s.sleep(o.s.fetchLatency) {
			return
		}
		select {
		case o.mailbox <- rest:
		case <-o.s.stop:
		}
	}()
}

// sleep waits for d and reports false if the store closed first.
func (s *Store) sleep(d time.Duration) bool {
	if d <= 0 {
		select {
		case <-s.stop:
			return false
		default:
			return true
		}
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return true
	case <-s.stop:
		return false
	}
}

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
	o, err := s.object(addr)
	if err != nil {
		return zero, err
	}
	answer := make(chan T, 1) // buffered so that a late reply never blocks the object
	request := func(o *object) {
		handle(o, func(v T) { answer <- v })
	}
	select {
	case o.mailbox <- request:
	case <-s.stop:
		return zero, ErrClosed
	case <-ctx.Done():
		return zero, ctx.Err()
	}
	select {
	case v := <-answer:
		return v, nil
	case <-s.stop:
		select {
		case v := <-answer: // answered just before the store closed
			return v, nil
		default:
			return zero, ErrClosed
		}
	case <-ctx.Done():
		return zero, ctx.Err()
	}
}

// today is the UTC day that a quota counts downloads in.
func (s *Store) today() string {
	return s.now().UTC().Format(time.DateOnly)
}
