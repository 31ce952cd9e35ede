package kv

import (
	"context"
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/racelab/racelab/targets/clock"
	"github.com/racelab/racelab/targets/faults"
	"github.com/racelab/racelab/targets/story"
)

// Location is where a request runs: one machine in one network location.
// Each has its own cache.
type Location struct {
	// Site is the network location, from 0 to Config.Locations-1.
	Site int
	// Machine is the machine within the site, from 0 to Config.Machines-1.
	Machine int
}

// String names the location as "site/machine", e.g. "2/0".
func (l Location) String() string { return fmt.Sprintf("%d/%d", l.Site, l.Machine) }

// Stats counts what a namespace has done, to show why a race went the way
// it went.
type Stats struct {
	HotReads  int64 // reads answered from a cache, possibly stale
	ColdReads int64 // reads that reached the central store and filled a cache
	Writes    int64 // puts and deletes applied to the central store
	Missed    int64 // applied writes the writing location's caches did not take
	Throttled int64 // writes refused with ErrTooManyWrites
}

// entry is one cached read result. A missing key is cached too (found is
// false), which is why a key created elsewhere can stay invisible.
type entry struct {
	value   string
	found   bool
	cached  time.Time // when the cache took it
	expires time.Time
}

// Namespace is a simulated Workers KV namespace: one central store and a
// cache per (location, machine). It is safe for concurrent use; every piece
// of shared state sits behind mu, so the updates it loses are lost by its
// own rules, never by a data race.
type Namespace struct {
	cfg   Config
	clock Clock

	// home is the location every request reaches with RouteSticky.
	home int
	// faults injects Config.Faults; nil when there are none.
	faults *faults.Injector

	mu        sync.Mutex
	rng       *rand.Rand
	central   map[string]string
	expires   map[string]time.Time // keys written with an expiry, and when it comes
	caches    []map[string]entry   // indexed by site*Machines + machine
	lastWrite map[string]time.Time
	stats     Stats
}

// New returns an empty namespace, or the error Validate finds in cfg.
func New(cfg Config) (*Namespace, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	c := cfg.Clock
	if c == nil {
		c = clock.Real{}
	}
	caches := make([]map[string]entry, cfg.Locations*cfg.Machines)
	for i := range caches {
		caches[i] = make(map[string]entry)
	}
	// The second PCG word is a fixed odd constant: the seed alone decides
	// the stream, and seed 0 still gives a well-mixed one.
	// The home location comes from a stream of its own, so that choosing
	// it takes nothing from the stream every operation draws on.
	home := rand.New(rand.NewPCG(uint64(cfg.Seed), 0x6a09e667f3bcc909)).IntN(cfg.Locations)
	return &Namespace{
		cfg:       cfg,
		clock:     c,
		home:      home,
		faults:    faults.New(cfg.Faults, c),
		rng:       rand.New(rand.NewPCG(uint64(cfg.Seed), 0x9e3779b97f4a7c15)),
		central:   make(map[string]string),
		expires:   make(map[string]time.Time),
		caches:    caches,
		lastWrite: make(map[string]time.Time),
	}, nil
}

// Forget drops every trace of key: its central value, every location's
// cached copy and its last write. It is racelab's bookkeeping, not an
// operation of the platform (that would be Delete, which is a write):
// the engine forgets a trial's keys once it has judged the trial.
func (ns *Namespace) Forget(key string) {
	ns.mu.Lock()
	defer ns.mu.Unlock()
	delete(ns.central, key)
	delete(ns.expires, key)
	delete(ns.lastWrite, key)
	for _, c := range ns.caches {
		delete(c, key)
	}
}

// ForgetPrefix forgets every key that starts with prefix, as Forget does.
func (ns *Namespace) ForgetPrefix(prefix string) {
	ns.mu.Lock()
	var keys []string
	for k := range ns.central {
		if strings.HasPrefix(k, prefix) {
			keys = append(keys, k)
		}
	}
	for _, c := range ns.caches {
		for k := range c {
			if strings.HasPrefix(k, prefix) {
				keys = append(keys, k)
			}
		}
	}
	ns.mu.Unlock()
	for _, k := range keys {
		ns.Forget(k)
	}
}

// Config returns the settings the namespace was made with.
func (ns *Namespace) Config() Config { return ns.cfg }

// Clock is the clock the namespace waits on: Config.Clock, or the real
// clock. A caller runs a burst on it with clock.Run.
func (ns *Namespace) Clock() Clock { return ns.clock }

// Now is the namespace's clock's current instant. Workers running on the
// namespace read the time here, so that a virtual clock governs them too.
func (ns *Namespace) Now() time.Time { return ns.clock.Now() }

// Stats returns the counts so far.
func (ns *Namespace) Stats() Stats {
	ns.mu.Lock()
	defer ns.mu.Unlock()
	return ns.stats
}

// Route picks the location that serves the next request, as the platform's
// routing would: the caller does not choose it. With RouteSticky it is a
// machine of the home location, with RouteSpread a machine of any
// location; the pick comes from the seeded source.
func (ns *Namespace) Route() Location {
	ns.mu.Lock()
	defer ns.mu.Unlock()
	if ns.cfg.Route == RouteSticky {
		return Location{Site: ns.home, Machine: ns.rng.IntN(ns.cfg.Machines)}
	}
	n := ns.rng.IntN(ns.cfg.Locations * ns.cfg.Machines)
	return Location{Site: n / ns.cfg.Machines, Machine: n % ns.cfg.Machines}
}

// StartTrial marks the start of a trial, from which an outage window of
// Config.Faults is measured.
func (ns *Namespace) StartTrial() { ns.faults.StartTrial() }

// Home is the location a sticky route reaches.
func (ns *Namespace) Home() int { return ns.home }

// Get reads key as seen from loc. A live cache entry answers after a hot
// read, even if it is stale or says "not found"; otherwise the read goes to
// the central store, answers what it holds when the cold-read latency ends,
// and caches that for CacheTTL.
//
// With a story.Recorder in ctx it records a read step when the answer
// arrives: the value (or "not found"), whether a cache served it, how long
// ago that cache took it, and whether the central store has moved on since.
func (ns *Namespace) Get(ctx context.Context, loc Location, key string) (value string, found bool, err error) {
	return ns.GetCached(ctx, loc, key, ns.cfg.CacheTTL)
}

// GetCached is Get with the Worker's own cacheTtl: how long this read's
// answer stays in the location's cache (at least MinCacheTTL, as the
// platform requires).
func (ns *Namespace) GetCached(ctx context.Context, loc Location, key string, cacheTTL time.Duration) (value string, found bool, err error) {
	return ns.getCached(ctx, loc, key, max(cacheTTL, MinCacheTTL))
}

// getCached is GetCached with cacheTTL as given, below the platform's
// minimum too: Config.PlanCacheTTL, shortened for tests on the real clock.
func (ns *Namespace) getCached(ctx context.Context, loc Location, key string, cacheTTL time.Duration) (value string, found bool, err error) {
	if err := ns.check(loc, key); err != nil {
		return "", false, err
	}
	if err := ns.faults.Before(ctx, "get"); err != nil {
		return "", false, err
	}
	ns.mu.Lock()
	cache := ns.caches[ns.index(loc)]
	e, hot := cache[key]
	if hot && !ns.clock.Now().Before(e.expires) {
		delete(cache, key)
		hot = false
	}
	var d time.Duration
	if hot {
		d = ns.latency(ns.cfg.HotRead)
		ns.stats.HotReads++
	} else {
		d = ns.latency(ns.cfg.ColdRead)
		ns.stats.ColdReads++
	}
	ns.mu.Unlock()

	if err := ns.clock.Sleep(ctx, d); err != nil {
		return "", false, err
	}
	tracing := story.Tracing(ctx)
	if hot && !tracing {
		// The answer is the entry as found: the cache is on the machine
		// itself, so nothing can change it on the way.
		return e.value, e.found, nil
	}
	ns.mu.Lock()
	now := ns.clock.Now()
	var note string
	if hot {
		central, inCentral := ns.central[key]
		note = cacheHitNote(now, e, central, inCentral)
	} else {
		ns.expire(key, now)
		e.value, e.found = ns.central[key]
		e.cached, e.expires = now, now.Add(cacheTTL)
		if at, ok := ns.expires[key]; ok && at.Before(e.expires) {
			e.expires = at // an expired key is not served from a cache either
		}
		cache[key] = e
		note = "cache miss: read the central store"
	}
	ns.mu.Unlock()
	if tracing {
		if !e.found {
			note = story.NotFound + ", " + note
		}
		story.Trace(ctx, story.Step{At: now, Op: story.OpRead, Key: key, Value: e.value, Note: note})
	}
	return e.value, e.found, nil
}

// cacheHitNote says, for a read served from e at now, how old the entry is
// and whether the central store, holding central (if inCentral), has moved
// on: how stale the answer is.
func cacheHitNote(now time.Time, e entry, central string, inCentral bool) string {
	note := fmt.Sprintf("cache hit, cached %v ago", now.Sub(e.cached))
	switch {
	case inCentral == e.found && central == e.value:
		return note + ", current"
	case !inCentral:
		return note + ", stale: the central store has none"
	}
	return note + ", stale: the central store holds " + central
}

// Put writes value under key from loc. The write takes the write latency to
// reach the central store, where the last one to arrive wins. The writing
// location's caches then hold value, unless the MissOwnWrite draw says they
// keep what they had; other locations keep their entries until these expire.
// A write cancelled through ctx before it arrives is not applied.
//
// With a story.Recorder in ctx it records a write step when the write is
// issued and, when it arrives, a write-lands step naming the value it
// replaced (the write it erased), or a refuse step for a 429.
func (ns *Namespace) Put(ctx context.Context, loc Location, key, value string) error {
	return ns.write(ctx, "put", loc, key, value, true, 0)
}

// PutExpiring is Put with an expirationTtl: the key is gone ttl after the
// write lands, from the central store and from every cache, with nothing
// left for anyone to clean up. The platform refuses a ttl under 60
// seconds; so does PutExpiring.
func (ns *Namespace) PutExpiring(ctx context.Context, loc Location, key, value string, ttl time.Duration) error {
	if ttl < MinExpirationTTL {
		return fmt.Errorf("put %q: expiration ttl %v: %w: want at least %v", key, ttl, ErrInvalidKey, MinExpirationTTL)
	}
	return ns.write(ctx, "put", loc, key, value, true, ttl)
}

// Delete removes key from loc, by the same rules as Put: the writing
// location's caches learn "not found", other locations may keep serving the
// old value until their entries expire. Its trace steps are Put's, noted
// "delete", with no value.
func (ns *Namespace) Delete(ctx context.Context, loc Location, key string) error {
	return ns.write(ctx, "delete", loc, key, "", false, 0)
}

// expire removes key once its expiry has come. The caller holds mu.
func (ns *Namespace) expire(key string, now time.Time) {
	if at, ok := ns.expires[key]; ok && !now.Before(at) {
		delete(ns.central, key)
		delete(ns.expires, key)
	}
}

func (ns *Namespace) write(ctx context.Context, op string, loc Location, key, value string, found bool, ttl time.Duration) error {
	if err := ns.check(loc, key); err != nil {
		return err
	}
	if err := ns.faults.Before(ctx, op); err != nil {
		return err
	}
	// Draw everything up front, in one critical section, so that each
	// operation takes a fixed slice of the seeded stream.
	ns.mu.Lock()
	d := ns.latency(ns.cfg.Write)
	missed := ns.rng.Float64() < ns.cfg.MissOwnWrite
	ns.mu.Unlock()

	tracing := story.Tracing(ctx)
	if tracing {
		note := ""
		if !found {
			note = op
		}
		story.Trace(ctx, story.Step{At: ns.clock.Now(), Op: story.OpWrite, Key: key, Value: value, Note: note})
	}
	if err := ns.clock.Sleep(ctx, d); err != nil {
		return err
	}

	ns.mu.Lock()
	now := ns.clock.Now()
	if ns.cfg.WriteLimit {
		if last, ok := ns.lastWrite[key]; ok && now.Sub(last) < WriteInterval {
			ns.stats.Throttled++
			ns.mu.Unlock()
			if tracing {
				story.Trace(ctx, story.Step{At: now, Op: story.OpRefuse, Key: key, Value: value,
					Note: fmt.Sprintf("429: the key was written %v before", now.Sub(last))})
			}
			return fmt.Errorf("%s %q: %w", op, key, ErrTooManyWrites)
		}
		ns.lastWrite[key] = now
	}
	ns.expire(key, now)
	old, had := ns.central[key]
	if found {
		ns.central[key] = value
	} else {
		delete(ns.central, key)
	}
	delete(ns.expires, key)
	if ttl > 0 {
		ns.expires[key] = now.Add(ttl)
	}
	ns.stats.Writes++
	if missed {
		ns.stats.Missed++
	} else {
		e := entry{value: value, found: found, cached: now, expires: now.Add(ns.cfg.CacheTTL)}
		if ttl > 0 && ttl < ns.cfg.CacheTTL {
			e.expires = now.Add(ttl)
		}
		for m := range ns.cfg.Machines {
			ns.caches[ns.index(Location{Site: loc.Site, Machine: m})][key] = e
		}
	}
	ns.mu.Unlock()
	if tracing {
		story.Trace(ctx, story.Step{At: now, Op: story.OpWriteLands, Key: key, Value: value, Note: landingNote(found, old, had, missed)})
	}
	return nil
}

// landingNote says what a write landing in the central store erased, and
// whether the writing location's caches missed it.
func landingNote(found bool, old string, had, missed bool) string {
	var note string
	switch {
	case had && found:
		note = "replaced " + old
	case had:
		note = "deleted " + old
	case found:
		note = "created"
	default:
		note = "nothing to delete"
	}
	if missed {
		note += "; the writing location's caches missed it"
	}
	return note
}

// List answers the keys starting with prefix, sorted, as the central store
// holds them when the cold-read latency ends. Unlike Get it is not cached
// and not paged (the platform pages by 1000 keys); the stories never list.
func (ns *Namespace) List(ctx context.Context, loc Location, prefix string) ([]string, error) {
	if err := ns.check(loc, "-"); err != nil {
		return nil, err
	}
	ns.mu.Lock()
	d := ns.latency(ns.cfg.ColdRead)
	ns.mu.Unlock()

	if err := ns.clock.Sleep(ctx, d); err != nil {
		return nil, err
	}
	ns.mu.Lock()
	defer ns.mu.Unlock()
	var keys []string
	now := ns.clock.Now()
	for k := range ns.central {
		ns.expire(k, now)
		if _, ok := ns.central[k]; ok && strings.HasPrefix(k, prefix) {
			keys = append(keys, k)
		}
	}
	slices.Sort(keys)
	return keys, nil
}

// Settled answers the value the central store holds for key: what every
// location sees once its cached entry has expired. It takes no time and
// fills no cache, so it is the way to read what the store counted.
func (ns *Namespace) Settled(key string) (string, bool) {
	ns.mu.Lock()
	defer ns.mu.Unlock()
	ns.expire(key, ns.clock.Now())
	v, ok := ns.central[key]
	return v, ok
}

// check refuses a location outside the namespace and a key the platform
// would refuse.
func (ns *Namespace) check(loc Location, key string) error {
	if loc.Site < 0 || loc.Site >= ns.cfg.Locations || loc.Machine < 0 || loc.Machine >= ns.cfg.Machines {
		return fmt.Errorf("location %v is outside the namespace's %d locations × %d machines", loc, ns.cfg.Locations, ns.cfg.Machines)
	}
	switch {
	case key == "", key == ".", key == "..":
		return fmt.Errorf("key %q: %w: empty, \".\" and \"..\" are not allowed", key, ErrInvalidKey)
	case len(key) > MaxKeyBytes:
		return fmt.Errorf("key of %d bytes: %w: want at most %d", len(key), ErrInvalidKey, MaxKeyBytes)
	}
	return nil
}

func (ns *Namespace) index(loc Location) int { return loc.Site*ns.cfg.Machines + loc.Machine }

// latency spreads d by the configured jitter. The caller holds mu.
func (ns *Namespace) latency(d time.Duration) time.Duration {
	if ns.cfg.Jitter == 0 || d == 0 {
		return d
	}
	f := 1 + ns.cfg.Jitter*(2*ns.rng.Float64()-1)
	return time.Duration(float64(d) * f)
}
