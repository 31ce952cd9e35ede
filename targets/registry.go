package targets

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/racelab/racelab/targets/clock"
	"github.com/racelab/racelab/targets/httpapi"
)

// Entry is one target in the catalog: a store with one strategy.
type Entry struct {
	// Name is STORE or STORE:STRATEGY, or "http" / "https" for URLs.
	Name string
	// Guarantee says in a few words what the strategy guarantees.
	Guarantee string
	// Holds says whether the strategy is expected to keep the hard rules;
	// a naive strategy is expected to break them.
	Holds bool
	// Abilities lists the story interfaces the opened store implements.
	Abilities Ability
	// Embedded says the target needs no server: it runs inside racelab.
	Embedded bool
	// Open opens the store for spec; the result implements the interfaces
	// in Abilities and may implement Preparer, Retrier and io.Closer.
	Open func(ctx context.Context, spec Spec, o Options) (any, error)
}

// Options are the settings every store may draw on. Build them with the
// With functions; the zero value of a field means its default.
type Options struct {
	Seed        int64
	RedisURL    string
	PostgresURL string
	// Now is the wall clock the stores read the day from.
	Now func() time.Time
	// VirtualTime runs the simulated stores (kv, actor) in virtual time,
	// each on a clock.Virtual of its own starting at Start (DefaultStart
	// when zero): every trial becomes a deterministic discrete-event run
	// decided by the seed. Such a store must then be driven through its
	// clock (as scenarios.Run does), not from arbitrary goroutines, so the
	// default is the real clock. Real stores and HTTP targets always run
	// on the real clock.
	VirtualTime bool
	Start       time.Time

	// --- HTTP targets (http://, https://; package targets/httpapi) ---

	// HTTP says how http and https targets speak to their service: how a
	// burst is released, how the stories map onto the service's API, extra
	// headers, TLS. The zero value is the contract, as tightly synchronized
	// as the server allows.
	HTTP httpapi.Config
}

// Option sets one of the Options.
type Option func(*Options)

// Defaults of the Options, in one place.
const (
	// DefaultRedisURL is where `make services` starts Redis.
	DefaultRedisURL = "redis://127.0.0.1:56379/0"
	// DefaultPostgresURL is where `make services` starts PostgreSQL.
	DefaultPostgresURL = "postgres://racelab@127.0.0.1:55432/racelab?sslmode=disable"
)

// WithSeed sets the seed of every random choice a simulated store makes.
func WithSeed(seed int64) Option { return func(o *Options) { o.Seed = seed } }

// WithRedisURL sets the Redis server's URL; empty keeps the default.
func WithRedisURL(u string) Option { return func(o *Options) { o.RedisURL = u } }

// WithPostgresURL sets the PostgreSQL server's URL; empty keeps the default.
func WithPostgresURL(u string) Option { return func(o *Options) { o.PostgresURL = u } }

// WithClock sets the wall clock stores read the day from.
func WithClock(now func() time.Time) Option { return func(o *Options) { o.Now = now } }

// DefaultStart is where virtual time starts: a fixed instant, so that the
// same seed replays the same run, and far enough from midnight UTC that a
// run's day does not roll over unless it is asked to.
var DefaultStart = time.Date(2026, time.March, 14, 9, 0, 0, 0, time.UTC)

// WithVirtualTime runs the simulated stores in virtual time.
func WithVirtualTime(on bool) Option { return func(o *Options) { o.VirtualTime = on } }

// WithStart sets the instant virtual time starts at.
func WithStart(t time.Time) Option { return func(o *Options) { o.Start = t } }

// simClock is the clock a simulated store runs on: a fresh virtual clock,
// or the real one.
func (o Options) simClock() clock.Clock {
	if !o.VirtualTime {
		return clock.Real{}
	}
	return clock.NewVirtual(cmp.Or(o.Start, DefaultStart))
}

// WithHTTP sets how http and https targets speak to their service.
func WithHTTP(c httpapi.Config) Option { return func(o *Options) { o.HTTP = c } }

func buildOptions(opts []Option) Options {
	o := Options{RedisURL: DefaultRedisURL, PostgresURL: DefaultPostgresURL, Now: time.Now}
	for _, f := range opts {
		f(&o)
	}
	if o.RedisURL == "" {
		o.RedisURL = DefaultRedisURL
	}
	if o.PostgresURL == "" {
		o.PostgresURL = DefaultPostgresURL
	}
	if o.Now == nil {
		o.Now = time.Now
	}
	return o
}

var (
	mu      sync.RWMutex
	catalog = map[string]Entry{}
	order   []string // names in the order they were first registered
)

// Register adds an entry to the catalog, replacing one of the same name. The
// built-in targets register themselves; programs and tests may add their own.
func Register(e Entry) {
	mu.Lock()
	defer mu.Unlock()
	if _, ok := catalog[e.Name]; !ok {
		order = append(order, e.Name)
	}
	catalog[e.Name] = e
}

// Entries returns the catalog in the order it was registered: the built-in
// targets store by store, embedded ones first.
func Entries() []Entry {
	mu.RLock()
	defer mu.RUnlock()
	es := make([]Entry, len(order))
	for i, name := range order {
		es[i] = catalog[name]
	}
	return es
}

// Names returns every target name in the catalog.
func Names() []string {
	var n []string
	for _, e := range Entries() {
		if e.Name == "http" || e.Name == "https" {
			continue // named by URL, not by word
		}
		n = append(n, e.Name)
	}
	return append(n, "http://HOST:PORT")
}

// Lookup parses raw and finds its catalog entry. The error wraps ErrBadSpec
// or is an *UnknownNameError; both are usage errors.
func Lookup(raw string) (Spec, Entry, error) {
	spec, err := Parse(raw)
	if err != nil {
		return Spec{}, Entry{}, err
	}
	mu.RLock()
	e, ok := catalog[spec.Name()]
	if spec.URL != nil {
		e, ok = catalog[spec.Store]
	}
	mu.RUnlock()
	if !ok {
		return Spec{}, Entry{}, &UnknownNameError{Kind: "target", Name: spec.Name(), Known: Names()}
	}
	return spec, e, nil
}

// Open looks raw up and opens it.
func Open(ctx context.Context, raw string, opts ...Option) (*Target, error) {
	spec, e, err := Lookup(raw)
	if err != nil {
		return nil, err
	}
	store, err := e.Open(ctx, spec, buildOptions(opts))
	switch {
	case errors.Is(err, ErrBadSpec):
		return nil, err // already names the target and what would be right
	case err != nil:
		return nil, fmt.Errorf("open %s: %w", spec.Name(), err)
	}
	return &Target{Spec: spec, Entry: e, Store: store}, nil
}
