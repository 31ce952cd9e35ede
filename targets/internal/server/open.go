package server

import (
	"context"
	"time"
)

// Kind is what sets one store on a real server apart when it opens: its
// names, its defaults and its driver. redis and postgres each declare one,
// so that the steps of opening (defaults, URL, pool, first contact) are
// written once, in Open, and cannot drift apart between the two.
type Kind[P any] struct {
	// Name is the server's kind in messages: "redis", "postgres".
	Name string
	// Strategies lists every strategy the store accepts, and Naive is the
	// one that reads the plan through a cache (see NewPlans).
	Strategies []string
	Naive      string
	// Defaults fills the Config fields left zero (see Config.WithDefaults).
	Defaults Config
	// ErrUnreachable and BareNetErrors are the Server's (see Server).
	ErrUnreachable error
	BareNetErrors  bool
	// BackoffBase, BackoffCap and Refused are the optimistic strategy's
	// RetryLoop's; its MaxAttempts is the Config's.
	BackoffBase, BackoffCap time.Duration
	Refused                 func(err error) bool
	// Addr checks cfg.URL and answers the server as host:port. It runs
	// before anything is dialled: a typo is a usage error, not an
	// unreachable server.
	Addr func(cfg Config) (string, error)
	// Driver is how the store's pool opens, warms and closes pools for
	// cfg; its errors name srv.
	Driver func(cfg Config, srv Server) Driver[P]
	// Ping checks that the server answers on p.
	Ping func(ctx context.Context, p P) error
	// PingGrace lengthens the first Ping's bound past cfg.DialTimeout, for
	// a driver that bounds its own dial by DialTimeout (go-redis): the dial
	// then gives up by its own timeout before the ping's context ends.
	PingGrace time.Duration
	// Setup, when set, runs once the server has answered (postgres creates
	// its tables); its error is told after the server's name.
	Setup func(ctx context.Context, p P) error
}

// Open is a store of kind k set up as cfg says: cfg's defaults filled in
// and its strategy and URL checked, a pool of cfg.PoolSize connections, the
// retry loop and the plan cache. It answers an error wrapping
// k.ErrUnreachable when the server does not answer within cfg.DialTimeout
// (plus k.PingGrace), and closes the pool whenever it fails after making it.
func Open[P any](ctx context.Context, cfg Config, k Kind[P]) (Store[P], error) {
	cfg, err := cfg.WithDefaults(k.Name, k.Strategies, k.Defaults)
	if err != nil {
		return Store[P]{}, err
	}
	addr, err := k.Addr(cfg)
	if err != nil {
		return Store[P]{}, err
	}
	srv := Server{Kind: k.Name, Addr: addr, ErrUnreachable: k.ErrUnreachable, BareNetErrors: k.BareNetErrors}
	d := k.Driver(cfg, srv)
	p, err := d.Open(ctx, cfg.PoolSize)
	if err != nil {
		return Store[P]{}, err
	}
	s := Store[P]{
		Config: cfg,
		Pool:   NewPool(srv, d, p, cfg.PoolSize),
		Retry:  &RetryLoop{Base: k.BackoffBase, Cap: k.BackoffCap, MaxAttempts: cfg.MaxAttempts, Refused: k.Refused},
		Plans:  NewPlans(cfg, k.Naive),
	}
	pingCtx, cancel := context.WithTimeout(ctx, cfg.DialTimeout+k.PingGrace)
	defer cancel()
	if err := k.Ping(pingCtx, p); err != nil {
		_ = s.Pool.Close()
		return Store[P]{}, srv.Unreachable(err, cfg.DialTimeout)
	}
	if k.Setup != nil {
		if err := k.Setup(ctx, p); err != nil {
			_ = s.Pool.Close()
			return Store[P]{}, srv.Errorf("%w", err)
		}
	}
	return s, nil
}
