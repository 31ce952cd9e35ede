package redis

import (
	"context"

	"github.com/racelab/racelab/targets/storetest"
)

// kit is what storetest's real-server checks need to know of this package.
// Its type, Kit[*Store], keeps a Store fitting racelab's story interfaces,
// Preparer, Retrier and io.Closer: a Store that stops fitting fails to compile.
// Its server is RACELAB_REDIS_URL's, or the one .ci/services starts.
var kit = storetest.Kit[*Store]{
	Name:                "redis",
	EnvVar:              "RACELAB_REDIS_URL",
	DefaultURL:          DefaultURL,
	Open:                Open,
	Strategies:          Strategies,
	Holding:             []string{StrategyAtomic, StrategyWatch},
	Naive:               StrategyNaive,
	Optimistic:          StrategyWatch,
	URL:                 func(addr string) string { return "redis://" + addr + "/0" },
	Conns:               func(s *Store) int64 { return int64(s.redis().PoolStats().TotalConns) },
	DefaultPoolSize:     DefaultPoolSize,
	Unreachable:         ErrUnreachable,
	BetweenReadAndWrite: func(s *Store) *func(context.Context) { return &s.base.BetweenReadAndWrite },
	CleanScoped:         CleanScoped,
	// Every key of the stories but a rate limit's windows, which expire.
	Leftovers: func(ctx context.Context, s *Store, key string) (int64, error) {
		return s.redis().Exists(ctx, viewsKey(key), quotaKey(key), claimKey(key), claimsKey(key),
			stockKey(key), planKey(key), downloadsKey(key)).Result()
	},
}

// testServer is kit's server: testServer.Store(t, cfg) opens a store on it.
var testServer = kit.Server()
