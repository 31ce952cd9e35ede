package targets

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"slices"
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
	// Kind is a value of the type Open returns, such as (*kv.App)(nil):
	// what the target can play is read off its method set (a
	// scenario's Plays), without opening it.
	Kind any
	// Embedded says the target needs no server: it runs inside racelab.
	Embedded bool
	// Shared says Open hands out a store that someone else opened and
	// will close, such as a store racelab serve is serving while its
	// classroom page fires a burst at it: Target.Close leaves it open.
	Shared bool
	// Server, for a store that lives on a server of its own, is the
	// setting of where: entries of one store share it.
	Server *Server
	// Open opens the store for spec; the result has Kind's type and may
	// implement Preparer, Retrier and io.Closer.
	Open func(ctx context.Context, spec Spec, o Options) (any, error)
}

// A Server is where a store runs when it needs a server, as a setting its
// catalog entries declare: a command offers the setting (cmd: --redis-url)
// and the entry reads it from Options, so a new server-backed store is one
// entry and nothing else.
type Server struct {
	// Setting names the URL's setting: "redis-url".
	Setting string
	// Env is the environment variable a command takes its default from.
	Env string
	// Default is the URL when none is given: where `make services`
	// starts the server.
	Default string
	// What says what the server is for, in a few words: "Redis server
	// for redis".
	What string
	// Clean deletes what racelab's stores keep on the server at url in
	// scope (what interrupted and sharded runs left), and answers how
	// many of Unit ("key", "row") it deleted, and how many in scope it
	// kept as used too recently (CleanScope.Idle).
	Clean func(ctx context.Context, url string, scope CleanScope) (removed, kept int64, err error)
	Unit  string
}

// URL is the server's URL in o: the one given, else the default.
func (s *Server) URL(o Options) string { return cmp.Or(o.URLs[s.Setting], s.Default) }

// Servers lists the servers the catalog's entries need, each once, in
// the order of the entries.
func (c *Catalog) Servers() []*Server {
	var out []*Server
	for _, e := range c.entries {
		if e.Server != nil && !slices.ContainsFunc(out, func(s *Server) bool { return s.Setting == e.Server.Setting }) {
			out = append(out, e.Server)
		}
	}
	return out
}

// Options are the settings every store may draw on. Build them with the
// With functions; the zero value of a field means its default.
type Options struct {
	Seed int64
	// URLs are the servers' URLs, by their setting (Server.Setting); a
	// server not named takes its default.
	URLs map[string]string
	// Now is the wall clock the stores read the day from.
	Now func() time.Time
	// VirtualTime runs the simulated stores (kv, actor) in virtual time,
	// each on a clock.Virtual of its own starting at Start (DefaultStart
	// when zero): every trial becomes a deterministic discrete-event run
	// decided by the seed. Such a store must then be driven through its
	// clock (as engine.Run does), not from arbitrary goroutines, so the
	// default is the real clock. Real stores run on it too unless
	// VirtualServers is set; HTTP targets always do.
	VirtualTime bool
	Start       time.Time
	// VirtualServers, with VirtualTime, puts the real stores (sqlite,
	// redis, postgres) on a virtual clock of their own too, for a story
	// whose time scale is minutes to hours (stale-plan): there the race is
	// between a cached read and the clock, not between requests in flight,
	// and an afternoon of downloads takes milliseconds. Requests then run
	// one at a time, so no story of simultaneous requests asks for it.
	VirtualServers bool

	// --- HTTP targets (http://, https://; package targets/httpapi) ---

	// HTTP says how http and https targets speak to their service: how a
	// burst is released, how the stories map onto the service's API, extra
	// headers, TLS. The zero value is the contract, as tightly synchronized
	// as the server allows.
	HTTP httpapi.Config

	// shared, when set, is the clock every simulated store opened with
	// these options runs on (the hybrid's two halves).
	shared clock.Clock
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

// WithServerURL sets the URL of the server of setting; empty keeps the
// default.
func WithServerURL(setting, url string) Option {
	return func(o *Options) {
		if o.URLs == nil {
			o.URLs = map[string]string{}
		}
		o.URLs[setting] = url
	}
}

// WithRedisURL sets the Redis server's URL; empty keeps the default.
func WithRedisURL(u string) Option { return WithServerURL(RedisServer.Setting, u) }

// WithPostgresURL sets the PostgreSQL server's URL; empty keeps the default.
func WithPostgresURL(u string) Option { return WithServerURL(PostgresServer.Setting, u) }

// WithClock sets the wall clock stores read the day from.
func WithClock(now func() time.Time) Option { return func(o *Options) { o.Now = now } }

// DefaultStart is where virtual time starts: a fixed instant, so that the
// same seed replays the same run, and far enough from midnight UTC that a
// run's day does not roll over unless it is asked to.
var DefaultStart = time.Date(2026, time.March, 14, 9, 0, 0, 0, time.UTC)

// WithVirtualTime runs the simulated stores in virtual time.
func WithVirtualTime(on bool) Option { return func(o *Options) { o.VirtualTime = on } }

// WithVirtualServers runs the real stores in virtual time too, when
// virtual time is on (see Options.VirtualServers).
func WithVirtualServers(on bool) Option { return func(o *Options) { o.VirtualServers = on } }

// WithStart sets the instant virtual time starts at.
func WithStart(t time.Time) Option { return func(o *Options) { o.Start = t } }

// simClock is the clock a simulated store runs on: a fresh virtual clock,
// or the real one.
func (o Options) simClock() clock.Clock {
	if o.shared != nil {
		return o.shared
	}
	if !o.VirtualTime {
		return clock.Real{}
	}
	return clock.NewVirtual(cmp.Or(o.Start, DefaultStart))
}

// serverClock is the clock a real store runs on: a fresh virtual clock
// when the servers are in virtual time, nil for the real clock (the store
// then reads the day from Now).
func (o Options) serverClock() *clock.Virtual {
	if !o.VirtualTime || !o.VirtualServers {
		return nil
	}
	return clock.NewVirtual(cmp.Or(o.Start, DefaultStart))
}

// WithHTTP sets how http and https targets speak to their service.
func WithHTTP(c httpapi.Config) Option { return func(o *Options) { o.HTTP = c } }

// WithName gives the target opened the name the user gave it (-t
// NAME=SPEC): an http target keeps it (httpapi.Config.Name) for a race
// file's {{target.name}} and --db TARGET.NAME=URL.
func WithName(name string) Option { return func(o *Options) { o.HTTP.Name = name } }

func buildOptions(opts []Option) Options {
	o := Options{Now: time.Now}
	for _, f := range opts {
		f(&o)
	}
	if o.Now == nil {
		o.Now = time.Now
	}
	return o
}

// Catalog is a set of targets by name, in the order they were added. The
// built-in one is Builtin(); a program or a test that needs another
// target builds its own with With, and passes it where targets are looked
// up (engine.Plan.Catalog), instead of changing a shared one.
type Catalog struct {
	entries []Entry
}

// NewCatalog is a catalog of es, in order; a later entry replaces an
// earlier one of the same name.
func NewCatalog(es ...Entry) *Catalog {
	return (&Catalog{}).With(es...)
}

// With is a copy of c with es added; c is not changed.
func (c *Catalog) With(es ...Entry) *Catalog {
	out := &Catalog{entries: slices.Clone(c.entries)}
	for _, e := range es {
		if i := slices.IndexFunc(out.entries, func(x Entry) bool { return x.Name == e.Name }); i >= 0 {
			out.entries[i] = e
			continue
		}
		out.entries = append(out.entries, e)
	}
	return out
}

// Entries returns the catalog in the order it was built: the built-in
// targets store by store, embedded ones first.
func (c *Catalog) Entries() []Entry { return slices.Clone(c.entries) }

// Names returns every target name in the catalog, URLs as one pattern.
func (c *Catalog) Names() []string {
	var n []string
	for _, e := range c.entries {
		if ByURL(e.Name) {
			continue // named by URL, not by word
		}
		n = append(n, e.Name)
	}
	return append(n, "http://HOST:PORT")
}

// Lookup parses raw and finds its catalog entry. The error wraps ErrBadSpec
// or is an *UnknownNameError; both are usage errors.
func (c *Catalog) Lookup(raw string) (Spec, Entry, error) {
	spec, err := Parse(raw)
	if err != nil {
		return Spec{}, Entry{}, err
	}
	name := spec.Name()
	if spec.URL != nil {
		name = spec.Store
	}
	for _, e := range c.entries {
		if e.Name == name {
			if spec.Store == SQLStore {
				// One entry stands for every database: its guarantee is
				// the level this URL runs its transactions at.
				e.Guarantee = databaseGuarantee(spec)
			}
			return spec, e, nil
		}
	}
	return Spec{}, Entry{}, &UnknownNameError{Kind: "target", Name: spec.Name(), Known: c.Names()}
}

// Open looks raw up and opens it.
func (c *Catalog) Open(ctx context.Context, raw string, opts ...Option) (*Target, error) {
	spec, e, err := c.Lookup(raw)
	if err != nil {
		return nil, err
	}
	return OpenEntry(ctx, spec, e, opts...)
}

// OpenEntry opens a spec already looked up, without parsing it again.
func OpenEntry(ctx context.Context, spec Spec, e Entry, opts ...Option) (*Target, error) {
	store, err := e.Open(ctx, spec, buildOptions(opts))
	switch {
	case errors.Is(err, ErrBadSpec):
		return nil, err // already names the target and what would be right
	case err != nil:
		return nil, fmt.Errorf("open %s: %w", spec.Name(), err)
	}
	return &Target{Spec: spec, Entry: e, Store: store}, nil
}

// builtin is the built-in catalog, built once and never changed.
var builtin = NewCatalog(builtinEntries()...)

// Builtin is the catalog of racelab's own targets.
func Builtin() *Catalog { return builtin }

// Entries is Builtin().Entries().
func Entries() []Entry { return builtin.Entries() }

// Names is Builtin().Names().
func Names() []string { return builtin.Names() }

// Lookup is Builtin().Lookup(raw).
func Lookup(raw string) (Spec, Entry, error) { return builtin.Lookup(raw) }

// Open is Builtin().Open(ctx, raw, opts...).
func Open(ctx context.Context, raw string, opts ...Option) (*Target, error) {
	return builtin.Open(ctx, raw, opts...)
}
