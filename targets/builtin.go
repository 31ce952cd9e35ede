package targets

import (
	"context"
	"errors"
	"fmt"
	"net/url"
	"time"

	"github.com/racelab/racelab/internal/usage"
	"github.com/racelab/racelab/targets/actor"
	"github.com/racelab/racelab/targets/faults"
	"github.com/racelab/racelab/targets/httpapi"
	"github.com/racelab/racelab/targets/internal/server"
	"github.com/racelab/racelab/targets/kv"
	"github.com/racelab/racelab/targets/postgres"
	"github.com/racelab/racelab/targets/redis"
	"github.com/racelab/racelab/targets/sqldb"
	"github.com/racelab/racelab/targets/sqlite"
	"github.com/racelab/racelab/targets/story"
)

// allStories is what every built-in store plays: every story, checked
// here, beside the one place that wires them in.
type allStories interface {
	story.Counter
	story.Quota
	story.Stocked
	story.Limiter
	story.Plans
}

var (
	_ allStories = (*kv.App)(nil)
	_ allStories = (*actor.Store)(nil)
	_ allStories = (*sqlite.Store)(nil)
	_ allStories = (*redis.Store)(nil)
	_ allStories = (*postgres.Store)(nil)
	_ allStories = (*httpapi.Client)(nil)
	// What each also does for the engine.
	_ Forgetter    = (*kv.App)(nil)
	_ TrialStarter = (*kv.App)(nil)
	_ TrialStarter = (*actor.Store)(nil)
	_ Forgetter    = (*actor.Store)(nil)
	_ Preparer     = (*actor.Store)(nil)
	_ Preparer     = (*sqlite.Store)(nil)
	_ Preparer     = (*redis.Store)(nil)
	_ Preparer     = (*postgres.Store)(nil)
	_ Preparer     = (*httpapi.Client)(nil)
	_ Retrier      = (*redis.Store)(nil)
	_ Retrier      = (*postgres.Store)(nil)
	_ Stager       = (*httpapi.Client)(nil)
	_ Forgetter    = (*Hybrid)(nil)
	// The real stores run on a clock of their own, virtual for a story on
	// the scale of hours (Options.VirtualServers).
	_ Clocked = (*sqlite.Store)(nil)
	_ Clocked = (*redis.Store)(nil)
	_ Clocked = (*postgres.Store)(nil)
)

// builtinEntries are racelab's own targets, store by store, embedded ones
// first; Kind is each store's type, for what it can play.
func builtinEntries() []Entry {
	return []Entry{
		{Name: "kv", Guarantee: "none: read, then write; reads cached", Embedded: true, Kind: (*kv.App)(nil), Open: openKV},
		{Name: "actor", Guarantee: "one request at a time per key", Holds: true, Embedded: true, Kind: (*actor.Store)(nil), Open: openActor(actor.StrategyDefault)},
		{Name: "actor:await-fetch", Guarantee: "none: fetch awaited between read and write", Embedded: true, Kind: (*actor.Store)(nil), Open: openActor(actor.StrategyAwaitFetch)},
		{Name: "hybrid", Guarantee: "quota in one object; plan read from KV", Embedded: true, Kind: (*Hybrid)(nil), Open: openHybrid},
		{Name: "sqlite", Guarantee: "one atomic upsert (as on D1, Cloudflare's SQLite)", Holds: true, Embedded: true, Kind: (*sqlite.Store)(nil), Open: openSQLite("")},
		{Name: "sqlite:naive", Guarantee: "none: SELECT, then UPDATE", Embedded: true, Kind: (*sqlite.Store)(nil), Open: openSQLite("naive")},
		{Name: "redis", Guarantee: "INCR, Lua check-and-increment, SET NX", Holds: true, Kind: (*redis.Store)(nil), Server: RedisServer, Open: openRedis("")},
		{Name: "redis:naive", Guarantee: "none: GET, then SET", Kind: (*redis.Store)(nil), Server: RedisServer, Open: openRedis("naive")},
		{Name: "redis:watch", Guarantee: "WATCH/MULTI/EXEC, retried", Holds: true, Kind: (*redis.Store)(nil), Server: RedisServer, Open: openRedis("watch")},
		{Name: "postgres", Guarantee: "one atomic statement", Holds: true, Kind: (*postgres.Store)(nil), Server: PostgresServer, Open: openPostgres("")},
		{Name: "postgres:naive", Guarantee: "none: SELECT, then UPDATE", Kind: (*postgres.Store)(nil), Server: PostgresServer, Open: openPostgres("naive")},
		{Name: "postgres:for-update", Guarantee: "row lock: SELECT FOR UPDATE", Holds: true, Kind: (*postgres.Store)(nil), Server: PostgresServer, Open: openPostgres("for-update")},
		{Name: "postgres:serializable", Guarantee: "SERIALIZABLE, retried on 40001", Holds: true, Kind: (*postgres.Store)(nil), Server: PostgresServer, Open: openPostgres("serializable")},
		{Name: SQLStore, Guarantee: "the race file's transactions, at the level its URL names (isolation=)", Holds: true, Kind: (*sqldb.DB)(nil), Open: openDatabase},
		{Name: "http", Guarantee: "whatever the service does", Holds: true, Kind: (*httpapi.Client)(nil), Open: openHTTP},
		{Name: "https", Guarantee: "whatever the service does", Holds: true, Kind: (*httpapi.Client)(nil), Open: openHTTP},
	}
}

func openKV(_ context.Context, spec Spec, o Options) (any, error) {
	cfg := kv.DefaultConfig()
	var latency = cfg.ColdRead
	route := string(cfg.Route)
	if err := bind(spec, append([]param{
		stringParam("route", &route),
		intParam("locations", &cfg.Locations),
		intParam("machines", &cfg.Machines),
		durationParam("cache-ttl", &cfg.CacheTTL),
		planCacheParam(&cfg.PlanCacheTTL),
		durationParam("latency", &latency),
		durationParam("hot-read", &cfg.HotRead),
		durationParam("cold-read", &cfg.ColdRead),
		durationParam("write", &cfg.Write),
		floatParam("jitter", &cfg.Jitter),
		floatParam("miss-own-write", &cfg.MissOwnWrite),
		boolParam("write-limit", &cfg.WriteLimit),
	}, faultParams(&cfg.Faults)...)...); err != nil {
		return nil, err
	}
	// latency is shorthand for the two slow operations at once.
	if spec.Params.Has("latency") {
		if !spec.Params.Has("cold-read") {
			cfg.ColdRead = latency
		}
		if !spec.Params.Has("write") {
			cfg.Write = latency
		}
	}
	cfg.Route = kv.Route(route)
	cfg.Seed, cfg.Faults.Seed = o.Seed, o.Seed
	cfg.Clock = o.simClock()
	if err := cfg.Validate(); err != nil {
		return nil, badSpec("target kv: %v", err)
	}
	ns, err := kv.New(cfg)
	if err != nil {
		return nil, err
	}
	return kv.NewApp(ns), nil
}

func openActor(strategy string) func(context.Context, Spec, Options) (any, error) {
	return func(_ context.Context, spec Spec, o Options) (any, error) {
		// The quota's day comes from the actor's own clock, virtual or real.
		cfg := actor.Config{Strategy: strategy, Clock: o.simClock()}
		cfg.Faults.Seed = o.Seed
		ps := append([]param{durationParam("storage-latency", &cfg.StorageLatency)}, faultParams(&cfg.Faults)...)
		if strategy == actor.StrategyAwaitFetch {
			ps = append(ps, durationParam("fetch-latency", &cfg.FetchLatency))
		}
		if err := bind(spec, ps...); err != nil {
			return nil, err
		}
		return actor.New(cfg), nil
	}
}

// faultParams are the simulated stores' fault injection: fail (an error
// rate), outage (FROM-TO after the start of each trial), spike (a rate of
// latency spikes) and spike-latency.
func faultParams(f *faults.Config) []param {
	return []param{
		floatParam("fail", &f.Fail),
		windowParam("outage", &f.Outage),
		floatParam("spike", &f.Spike),
		durationParam("spike-latency", &f.SpikeLatency),
	}
}

// openHybrid opens a KV namespace and an actor store on one clock: the
// object decides the quota, KV serves the plan.
func openHybrid(ctx context.Context, spec Spec, o Options) (any, error) {
	c := o.simClock()
	o.shared = c
	// The plan is KV's, and so is its cache: hybrid?plan-cache=1s
	// shortens it as kv?plan-cache=1s does, for runs on the real clock.
	var planCache time.Duration
	if err := bind(spec, durationParam("plan-cache", &planCache)); err != nil {
		return nil, err
	}
	kvSpec := Spec{Store: "kv", Params: url.Values{}}
	if spec.Params.Has("plan-cache") {
		kvSpec.Params.Set("plan-cache", spec.Params.Get("plan-cache"))
	}
	app, err := openKV(ctx, kvSpec, o)
	if err != nil {
		return nil, err
	}
	objects, err := openActor(actor.StrategyDefault)(ctx, Spec{Store: "actor"}, o)
	if err != nil {
		return nil, err
	}
	return NewHybrid(app.(*kv.App), objects.(*actor.Store), c), nil
}

func openSQLite(strategy string) func(context.Context, Spec, Options) (any, error) {
	return func(ctx context.Context, spec Spec, o Options) (any, error) {
		cfg := sqlite.Config{Strategy: strategy, Now: o.Now}
		if c := o.serverClock(); c != nil {
			cfg.Clock, cfg.Now = c, c.Now
		}
		ps := []param{stringParam("path", &cfg.Path)}
		if strategy == "naive" {
			ps = append(ps, durationParam("think-time", &cfg.ThinkTime), planCacheParam(&cfg.PlanCacheTTL))
		}
		if err := bind(spec, ps...); err != nil {
			return nil, err
		}
		return sqlite.Open(ctx, cfg)
	}
}

// DefaultThinkTime is the pause a naive server-store strategy takes between
// its read and its write, standing in for the application's own work
// (decoding, checks, rendering). Without it a loopback round trip is often
// shorter than the spread of goroutine start-up on two cores, and the race
// shows in some trials only; the strategy is no less wrong for that.
const DefaultThinkTime = time.Millisecond

// thinkTime is the think-time parameter: the default for naive strategies,
// none for the others unless asked.
func thinkTime(strategy string, d *time.Duration) param {
	if strategy == "naive" {
		*d = DefaultThinkTime
	}
	return durationParam("think-time", d)
}

// planCacheParam is kv's, the hybrid's and a naive real store's plan-cache parameter: how long
// the server keeps a read of a subscription plan (stale-plan's exposure),
// story.PlanCacheTTL unless set. plan-cache=0s keeps none: the store's
// Config says that with a negative TTL, since its zero is the default.
func planCacheParam(ttl *time.Duration) param {
	p := durationParam("plan-cache", ttl)
	set := p.set
	p.set = func(v string) error {
		if err := set(v); err != nil {
			return err
		}
		if *ttl == 0 {
			*ttl = -1
		}
		return nil
	}
	return p
}

// The servers of the real stores.
var (
	RedisServer = &Server{Setting: "redis-url", Env: "RACELAB_REDIS_URL", Default: DefaultRedisURL, What: "Redis server for redis",
		Unit: "key", Clean: func(ctx context.Context, url string, scope CleanScope) (int64, int64, error) {
			return redis.CleanScoped(ctx, server.Config{URL: url}, scope)
		}}
	PostgresServer = &Server{Setting: "postgres-url", Env: "RACELAB_POSTGRES_URL", Default: DefaultPostgresURL, What: "PostgreSQL server for postgres",
		Unit: "row", Clean: func(ctx context.Context, url string, scope CleanScope) (int64, int64, error) {
			return postgres.CleanScoped(ctx, server.Config{URL: url}, scope)
		}}
)

// CleanScope says which keys and rows Clean removes (see its fields).
type CleanScope = server.CleanScope

// RunKey is what every key of run id holds, for CleanScope.Within.
func RunKey(id string) string { return server.RunKey(id) }

// Cleaned is what Clean did on one server.
type Cleaned struct {
	Server  *Server
	Removed int64
	// Kept counts the keys or rows in scope spared as used too recently.
	Kept int64
	Err  error // nil when it was cleaned
}

// Clean deletes what racelab's stores left in scope on every server of cat
// that can be cleaned, at the URLs o gives (else their defaults): the keys
// and rows of interrupted runs, of sharded runs once verified, of a serve
// stopped. A malformed URL is a usage error, returned at once; a server
// that fails is said in its Cleaned, and the others are still cleaned.
func Clean(ctx context.Context, cat *Catalog, scope CleanScope, opts ...Option) ([]Cleaned, error) {
	var o Options
	for _, opt := range opts {
		opt(&o)
	}
	var out []Cleaned
	for _, srv := range cat.Servers() {
		if srv.Clean == nil {
			continue
		}
		n, kept, err := srv.Clean(ctx, srv.URL(o), scope)
		var bad *server.URLError
		if errors.As(err, &bad) {
			return out, badServerURL(srv, bad.URL, bad.Reason)
		}
		if err != nil && !errors.Is(err, context.Canceled) {
			err = fmt.Errorf("%w; is it running? (`make services` starts it, or set %s)", err, srv.Env)
		}
		out = append(out, Cleaned{Server: srv, Removed: n, Kept: kept, Err: err})
	}
	return out, nil
}

func openRedis(strategy string) func(context.Context, Spec, Options) (any, error) {
	return openServer(strategy, RedisServer, redis.Open, redis.ErrUnreachable)
}

func openPostgres(strategy string) func(context.Context, Spec, Options) (any, error) {
	return openServer(strategy, PostgresServer, postgres.Open, postgres.ErrUnreachable)
}

// openServer opens a store on a server: its URL from the options (flag
// and env say where it came from), a malformed one a usage error, an
// unreachable server said with how to start one.
func openServer[S any](strategy string, srv *Server, open func(context.Context, server.Config) (S, error),
	unreachable error) func(context.Context, Spec, Options) (any, error) {
	return func(ctx context.Context, spec Spec, o Options) (any, error) {
		cfg := server.Config{URL: srv.URL(o), Strategy: strategy, Now: o.Now}
		if c := o.serverClock(); c != nil {
			cfg.Clock, cfg.Now = c, c.Now
		}
		ps := []param{thinkTime(strategy, &cfg.ThinkTime)}
		if strategy == "naive" {
			ps = append(ps, planCacheParam(&cfg.PlanCacheTTL))
		}
		if err := bind(spec, ps...); err != nil {
			return nil, err
		}
		s, err := open(ctx, cfg)
		var bad *server.URLError
		switch {
		case errors.As(err, &bad):
			return nil, badServerURL(srv, bad.URL, bad.Reason)
		case errors.Is(err, unreachable):
			return nil, fmt.Errorf("%w; start it with `make services` or set %s", err, srv.Env)
		case err != nil:
			return nil, err
		}
		return s, nil
	}
}

// badServerURL is the usage error for a server URL that cannot be used: one
// line naming where it came from, the value (its password hidden by the
// store package), what is wrong and a URL that would do. The hint to start
// the servers is left out on purpose: no server would help a typo.
func badServerURL(srv *Server, value, reason string) error {
	return fmt.Errorf("%w%.0w", usage.Fieldf(srv.Setting, "{} (or %s) %q is not usable: %s; want e.g. %s", srv.Env, value, reason, srv.Default), ErrBadSpec)
}

// openHTTP builds the client of an http or https target. The URL's query
// belongs to the service and goes with every request; racelab's own HTTP
// settings come from o.HTTP (run's flags), never from the URL. Nothing is
// dialled here: Prepare does it, and an unreachable service is a target
// error, not a usage error.
func openHTTP(_ context.Context, spec Spec, o Options) (any, error) {
	c, err := httpapi.New(spec.URL, o.HTTP)
	if err != nil {
		return nil, badSpec("target %s: %v", spec.Name(), err)
	}
	return c, nil
}
