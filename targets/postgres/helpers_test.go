package postgres

import (
	"context"

	"github.com/racelab/racelab/targets/storetest"
)

// kit is what storetest's real-server checks need to know of this package.
// Its type, Kit[*Store], keeps a Store fitting racelab's story interfaces,
// Preparer, Retrier and io.Closer: a Store that stops fitting fails to compile.
// Its server is RACELAB_POSTGRES_URL's, or the one .ci/services starts.
var kit = storetest.Kit[*Store]{
	Name:                "postgres",
	EnvVar:              "RACELAB_POSTGRES_URL",
	DefaultURL:          DefaultURL,
	Open:                Open,
	Strategies:          Strategies,
	Holding:             []string{StrategyAtomic, StrategyForUpdate, StrategySerializable},
	Naive:               StrategyNaive,
	Optimistic:          StrategySerializable,
	URL:                 func(addr string) string { return "postgres://racelab@" + addr + "/racelab?sslmode=disable" },
	Conns:               func(s *Store) int64 { return int64(s.db().Stat().TotalConns()) },
	DefaultPoolSize:     DefaultPoolSize,
	Unreachable:         ErrUnreachable,
	BetweenReadAndWrite: func(s *Store) *func(context.Context) { return &s.base.BetweenReadAndWrite },
	CleanScoped:         CleanScoped,
	// The rows of every table keyed by key.
	Leftovers: func(ctx context.Context, s *Store, key string) (int64, error) {
		var total int64
		for _, t := range tables {
			n, err := readInt(ctx, s.db(), `SELECT count(*) FROM `+t.name+` WHERE `+t.key+` = $1`, key)
			if err != nil {
				return 0, err
			}
			total += n
		}
		return total, nil
	},
}

// testServer is kit's server: testServer.Store(t, cfg) opens a store on it.
var testServer = kit.Server()
