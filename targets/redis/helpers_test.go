package redis

import (
	"context"
	"io"

	"github.com/racelab/racelab/targets/storetest"
)

// A Store must keep fitting racelab's story interfaces.
var (
	_ storetest.Store    = (*Store)(nil)
	_ storetest.Preparer = (*Store)(nil)
	_ io.Closer          = (*Store)(nil)
)

// testServer is the redis server the tests use: RACELAB_REDIS_URL's, or the
// one .ci/services starts. testServer.Store(t, cfg) opens a store on it,
// closed when the test ends, and skips the test when the server does not
// answer, except under CI=true, where it fails it.
var testServer = storetest.Server[Config, *Store]{
	EnvVar:      "RACELAB_REDIS_URL",
	DefaultURL:  DefaultURL,
	Unreachable: ErrUnreachable,
	Open: func(ctx context.Context, url string, cfg Config) (*Store, error) {
		cfg.URL = url
		return Open(ctx, cfg)
	},
}
