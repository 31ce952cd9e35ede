package kv

import (
	"context"
	"errors"
	"math"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"
)

// manualClock is a clock the test moves: Sleep advances it by the whole
// wait at once, so a 60-second TTL passes in no time. It is meant for
// requests made one after another, where it makes every run exact; under
// concurrency it stays race-free but the order of events is the scheduler's.
type manualClock struct {
	mu  sync.Mutex
	now time.Time
}

func newManualClock(start time.Time) *manualClock { return &manualClock{now: start} }

func (c *manualClock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.now
}

func (c *manualClock) Sleep(ctx context.Context, d time.Duration) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	c.Advance(d)
	return nil
}

func (c *manualClock) Advance(d time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.now = c.now.Add(d)
}

var epoch = time.Date(2026, 8, 14, 12, 0, 0, 0, time.UTC)

// newManual returns a namespace on a manual clock with no jitter and no
// missed own writes, after change has adjusted its config.
func newManual(t *testing.T, change func(*Config)) (*Namespace, *manualClock) {
	t.Helper()
	clock := newManualClock(epoch)
	ns := newNamespace(t, func(cfg *Config) {
		cfg.Clock = clock
		cfg.Jitter = 0
		cfg.MissOwnWrite = 0
		if change != nil {
			change(cfg)
		}
	})
	return ns, clock
}

// newNamespace returns a namespace on DefaultConfig after change (nil: none)
// has adjusted it: the one place a test builds one, failing tb when New
// refuses the config.
func newNamespace(tb testing.TB, change func(*Config)) *Namespace {
	tb.Helper()
	cfg := DefaultConfig()
	if change != nil {
		change(&cfg)
	}
	ns, err := New(cfg)
	if err != nil {
		tb.Fatalf("New: %v", err)
	}
	return ns
}

func TestValidate(t *testing.T) {
	tests := []struct {
		name    string
		change  func(*Config)
		wantErr string // "" when the config is valid
	}{
		{"defaults", func(*Config) {}, ""},
		{"minimum TTL", func(c *Config) { c.CacheTTL = MinCacheTTL }, ""},
		{"no latency", func(c *Config) { c.HotRead, c.ColdRead, c.Write = 0, 0, 0 }, ""},
		{"edges", func(c *Config) { c.Jitter, c.MissOwnWrite = 1, 1 }, ""},
		{"one cache", func(c *Config) { c.Locations, c.Machines = 1, 1 }, ""},
		{"no locations", func(c *Config) { c.Locations = 0 }, "locations is 0; want at least 1"},
		{"no machines", func(c *Config) { c.Machines = -1 }, "machines is -1; want at least 1"},
		{"too many caches", func(c *Config) { c.Locations, c.Machines = 1000, 1000 }, "want at most 10000 caches"},
		{"TTL below minimum", func(c *Config) { c.CacheTTL = 29 * time.Second }, "cache-ttl is 29s; want at least 30s"},
		{"zero TTL", func(c *Config) { c.CacheTTL = 0 }, "cache-ttl is 0s"},
		{"negative hot read", func(c *Config) { c.HotRead = -1 }, "hot-read latency"},
		{"negative cold read", func(c *Config) { c.ColdRead = -time.Millisecond }, "cold-read latency is -1ms; want 0 or more"},
		{"negative write", func(c *Config) { c.Write = -time.Second }, "write latency"},
		{"jitter above 1", func(c *Config) { c.Jitter = 1.5 }, "jitter is 1.5; want a fraction from 0 to 1"},
		{"jitter NaN", func(c *Config) { c.Jitter = math.NaN() }, "jitter is NaN"},
		{"miss below 0", func(c *Config) { c.MissOwnWrite = -0.1 }, "miss-own-write is -0.1; want a probability from 0 to 1"},
		{"unknown route", func(c *Config) { c.Route = "anycast" }, `route is "anycast"; want sticky (one client, one location) or spread (any location)`},
		{"no route", func(c *Config) { c.Route = "" }, `route is ""; want sticky`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			cfg := DefaultConfig()
			tt.change(&cfg)
			err := cfg.Validate()
			got := ""
			if err != nil {
				got = err.Error()
			}
			if tt.wantErr == "" && got != "" || !strings.Contains(got, tt.wantErr) {
				t.Errorf("Validate() = %q, want %q", got, tt.wantErr)
			}
			if got != "" && got != strings.ToLower(got[:1])+got[1:] {
				t.Errorf("Validate() = %q, want a lowercase message", got)
			}
			if _, err := New(cfg); (err != nil) != (tt.wantErr != "") {
				t.Errorf("New() error = %v, want error %v", err, tt.wantErr != "")
			}
		})
	}
}

// A "not found" is cached like any value: a location that looked for a key
// before it existed keeps answering "not found" until the entry expires.
func TestCachedNotFoundServedUntilTTL(t *testing.T) {
	tests := []struct {
		name      string
		wait      time.Duration
		wantFound bool
	}{
		{"right after the write", 0, false},
		{"just before expiry", DefaultCacheTTL - time.Millisecond, false},
		{"at expiry", DefaultCacheTTL, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ns, clock := newManual(t, func(c *Config) { c.HotRead, c.ColdRead, c.Write = 0, 0, 0 })
			ctx := context.Background()
			reader, writer := Location{Site: 0}, Location{Site: 1}
			if _, found, err := ns.Get(ctx, reader, "k"); err != nil || found {
				t.Fatalf("first Get = found %v, %v; want not found", found, err)
			}
			if err := ns.Put(ctx, writer, "k", "v"); err != nil {
				t.Fatalf("Put: %v", err)
			}
			clock.Advance(tt.wait)
			_, got, err := ns.Get(ctx, reader, "k")
			if err != nil {
				t.Fatalf("Get: %v", err)
			}
			if got != tt.wantFound {
				t.Errorf("found = %v, want %v", got, tt.wantFound)
			}
		})
	}
}

// A write is visible at once in the location that made it, on all its
// machines; a location that had cached the key sees it only when its entry
// expires; one that never read the key reads the central value.
func TestWriteVisibility(t *testing.T) {
	var (
		writer      = Location{Site: 0, Machine: 0}
		writerTwin  = Location{Site: 0, Machine: 1}
		cachedElse  = Location{Site: 1, Machine: 0}
		neverReader = Location{Site: 2, Machine: 1}
	)
	tests := []struct {
		name   string
		reader Location
		wait   time.Duration
		want   string
	}{
		{"writing machine", writer, 0, "2"},
		{"other machine, same location", writerTwin, 0, "2"},
		{"other location, cached", cachedElse, 0, "1"},
		{"other location, before expiry", cachedElse, DefaultCacheTTL - time.Second, "1"},
		{"other location, after expiry", cachedElse, DefaultCacheTTL, "2"},
		{"other location, never read", neverReader, 0, "2"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ns, clock := newManual(t, nil)
			ctx := context.Background()
			if err := ns.Put(ctx, writer, "k", "1"); err != nil {
				t.Fatal(err)
			}
			for _, loc := range []Location{writer, writerTwin, cachedElse} {
				if v, _, err := ns.Get(ctx, loc, "k"); err != nil || v != "1" {
					t.Fatalf("Get at %v = %q, %v; want 1", loc, v, err)
				}
			}
			if err := ns.Put(ctx, writer, "k", "2"); err != nil {
				t.Fatal(err)
			}
			clock.Advance(tt.wait)
			got, _, err := ns.Get(ctx, tt.reader, "k")
			if err != nil {
				t.Fatal(err)
			}
			if got != tt.want {
				t.Errorf("Get at %v after %v = %q, want %q", tt.reader, tt.wait, got, tt.want)
			}
			if v, _ := ns.Settled("k"); v != "2" {
				t.Errorf("Settled = %q, want 2", v)
			}
		})
	}
}

func TestReadYourWrite(t *testing.T) {
	tests := []struct {
		miss      float64
		wantValue string
		wantFound bool
		wantStats Stats
	}{
		{0, "v", true, Stats{HotReads: 1, ColdReads: 1, Writes: 1}},
		{1, "", false, Stats{HotReads: 1, ColdReads: 1, Writes: 1, Missed: 1}},
	}
	for _, tt := range tests {
		ns, _ := newManual(t, func(c *Config) { c.MissOwnWrite = tt.miss })
		ctx := context.Background()
		loc := Location{Site: 1, Machine: 1}
		if _, _, err := ns.Get(ctx, loc, "k"); err != nil {
			t.Fatal(err)
		}
		if err := ns.Put(ctx, loc, "k", "v"); err != nil {
			t.Fatal(err)
		}
		got, found, err := ns.Get(ctx, loc, "k")
		if err != nil {
			t.Fatal(err)
		}
		if got != tt.wantValue || found != tt.wantFound {
			t.Errorf("miss %v: Get after Put = %q, %v; want %q, %v", tt.miss, got, found, tt.wantValue, tt.wantFound)
		}
		if s := ns.Stats(); s != tt.wantStats {
			t.Errorf("miss %v: Stats = %+v, want %+v", tt.miss, s, tt.wantStats)
		}
	}
}

func TestWriteLimit(t *testing.T) {
	tests := []struct {
		name    string
		limit   bool
		gap     time.Duration
		wantErr error
	}{
		{"second write at once", true, 0, ErrTooManyWrites},
		{"second write within a second", true, 999 * time.Millisecond, ErrTooManyWrites},
		{"second write a second later", true, time.Second, nil},
		{"no limit", false, 0, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ns, clock := newManual(t, func(c *Config) { c.WriteLimit = tt.limit; c.Write = 0 })
			ctx := context.Background()
			if err := ns.Put(ctx, Location{}, "k", "1"); err != nil {
				t.Fatalf("first Put: %v", err)
			}
			clock.Advance(tt.gap)
			err := ns.Delete(ctx, Location{Site: 2}, "k")
			if !errors.Is(err, tt.wantErr) || (err == nil) != (tt.wantErr == nil) {
				t.Fatalf("second write = %v, want %v", err, tt.wantErr)
			}
			_, found := ns.Settled("k")
			if wantFound := tt.wantErr != nil; found != wantFound {
				t.Errorf("Settled found = %v, want %v (a refused write changes nothing)", found, wantFound)
			}
		})
	}
}

// Latency waits end as soon as the context is done; a write that never
// arrived is not applied.
func TestContextCancelsWaits(t *testing.T) {
	cfg := DefaultConfig()
	cfg.HotRead, cfg.ColdRead, cfg.Write = time.Hour, time.Hour, time.Hour
	ns, err := New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	app := NewApp(ns)
	ops := []struct {
		name string
		do   func(ctx context.Context) error
	}{
		{"get", func(ctx context.Context) error { _, _, err := ns.Get(ctx, Location{}, "k"); return err }},
		{"put", func(ctx context.Context) error { return ns.Put(ctx, Location{}, "k", "v") }},
		{"delete", func(ctx context.Context) error { return ns.Delete(ctx, Location{}, "k") }},
		{"list", func(ctx context.Context) error { _, err := ns.List(ctx, Location{}, ""); return err }},
		{"hit", func(ctx context.Context) error { _, err := app.Hit(ctx, "s"); return err }},
		{"consume", func(ctx context.Context) error { _, _, err := app.Consume(ctx, "v", 5); return err }},
		{"checkout", func(ctx context.Context) error { _, err := app.Checkout(ctx, "i", "b"); return err }},
	}
	for _, op := range ops {
		t.Run(op.name, func(t *testing.T) {
			ctx, cancel := context.WithCancel(context.Background())
			done := make(chan error)
			go func() { done <- op.do(ctx) }()
			cancel()
			// Were the wait not cut short, this would block for an hour and
			// the test binary's timeout would report it.
			if got := <-done; !errors.Is(got, context.Canceled) {
				t.Errorf("%s = %v, want context.Canceled", op.name, got)
			}
		})
	}
	if _, found := ns.Settled("k"); found {
		t.Errorf("a cancelled put was applied")
	}
}

func TestRefusesBadKeysAndLocations(t *testing.T) {
	ns, _ := newManual(t, nil)
	ctx := context.Background()
	tests := []struct {
		name    string
		loc     Location
		key     string
		wantErr string
	}{
		{"empty key", Location{}, "", "invalid key"},
		{"dot", Location{}, ".", "invalid key"},
		{"dot dot", Location{}, "..", "invalid key"},
		{"long key", Location{}, strings.Repeat("k", MaxKeyBytes+1), "key of 513 bytes: invalid key (key refused by the store): want at most 512"},
		{"longest key", Location{}, strings.Repeat("k", MaxKeyBytes), ""},
		{"site out of range", Location{Site: 3}, "k", "location 3/0 is outside the namespace's 3 locations × 2 machines"},
		{"machine out of range", Location{Machine: 2}, "k", "outside"},
		{"negative", Location{Site: -1}, "k", "outside"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, _, getErr := ns.Get(ctx, tt.loc, tt.key)
			putErr := ns.Put(ctx, tt.loc, tt.key, "v")
			for _, err := range []error{getErr, putErr} {
				got := ""
				if err != nil {
					got = err.Error()
				}
				if tt.wantErr == "" && got != "" || !strings.Contains(got, tt.wantErr) {
					t.Errorf("error = %q, want %q", got, tt.wantErr)
				}
				if tt.wantErr == "invalid key" && !errors.Is(err, ErrInvalidKey) {
					t.Errorf("error %v does not wrap ErrInvalidKey", err)
				}
			}
		})
	}
}

func TestList(t *testing.T) {
	ns, _ := newManual(t, nil)
	ctx := context.Background()
	for _, k := range []string{"views:b", "views:a", "quota:x", "views:c"} {
		if err := ns.Put(ctx, Location{}, k, "1"); err != nil {
			t.Fatal(err)
		}
	}
	if err := ns.Delete(ctx, Location{}, "views:c"); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		prefix string
		want   []string
	}{
		{"views:", []string{"views:a", "views:b"}},
		{"", []string{"quota:x", "views:a", "views:b"}},
		{"none:", nil},
	}
	for _, tt := range tests {
		got, err := ns.List(ctx, Location{Site: 2}, tt.prefix)
		if err != nil {
			t.Fatal(err)
		}
		if !slices.Equal(got, tt.want) {
			t.Errorf("List(%q) = %q, want %q", tt.prefix, got, tt.want)
		}
	}
}

// The seed alone decides the routes. Spread, every machine of every
// location gets some; sticky, every machine of one location, the home.
func TestRouteIsSeeded(t *testing.T) {
	routes := func(seed int64, route Route) []Location {
		ns := newNamespace(t, func(cfg *Config) { cfg.Seed, cfg.Route = seed, route })
		out := make([]Location, 600)
		for i := range out {
			out[i] = ns.Route()
		}
		return out
	}
	tests := []struct {
		route     Route
		wantSites int
	}{
		{RouteSpread, DefaultLocations},
		{RouteSticky, 1},
	}
	for _, tt := range tests {
		t.Run(string(tt.route), func(t *testing.T) {
			a, b, c := routes(7, tt.route), routes(7, tt.route), routes(8, tt.route)
			if !slices.Equal(a, b) {
				t.Errorf("seed 7 routed differently twice")
			}
			if slices.Equal(a, c) {
				t.Errorf("seeds 7 and 8 routed alike")
			}
			seen, sites := map[Location]int{}, map[int]bool{}
			for _, l := range a {
				seen[l]++
				sites[l.Site] = true
			}
			if got, want := len(seen), tt.wantSites*DefaultMachines; got != want {
				t.Errorf("600 routes reached %d machines, want %d: %v", got, want, seen)
			}
			if got := len(sites); got != tt.wantSites {
				t.Errorf("600 routes reached %d locations, want %d: %v", got, tt.wantSites, seen)
			}
		})
	}
}

// The home location of a sticky route is the seed's pick, and over seeds
// every location is someone's home.
func TestStickyHomeVaries(t *testing.T) {
	homes := map[int]bool{}
	for seed := range int64(50) {
		ns := newNamespace(t, func(cfg *Config) { cfg.Seed = seed })
		for range 20 {
			if l := ns.Route(); l.Site != ns.Home() {
				t.Fatalf("seed %d: sticky route reached %v, not home %d", seed, l, ns.Home())
			}
		}
		homes[ns.Home()] = true
	}
	if len(homes) != DefaultLocations {
		t.Errorf("50 seeds chose homes %v, want all %d locations", homes, DefaultLocations)
	}
}

// With jitter, latencies stay within the band and vary; without, they are
// exact.
func TestLatencyJitter(t *testing.T) {
	tests := []struct {
		jitter   float64
		min, max time.Duration
	}{
		{0, 20 * time.Millisecond, 20 * time.Millisecond},
		{0.2, 16 * time.Millisecond, 24 * time.Millisecond},
		{1, 0, 40 * time.Millisecond},
	}
	for _, tt := range tests {
		ns, _ := newManual(t, func(c *Config) { c.Jitter = tt.jitter })
		distinct := map[time.Duration]bool{}
		for range 200 {
			ns.mu.Lock()
			d := ns.latency(20 * time.Millisecond)
			ns.mu.Unlock()
			if d < tt.min || d > tt.max {
				t.Errorf("jitter %v: latency %v outside [%v, %v]", tt.jitter, d, tt.min, tt.max)
			}
			distinct[d] = true
		}
		if tt.jitter > 0 && len(distinct) < 100 {
			t.Errorf("jitter %v: only %d distinct latencies in 200", tt.jitter, len(distinct))
		}
	}
}
