package postgres

import (
	"context"
	"io"
	"testing"

	"github.com/racelab/racelab/targets/storetest"
)

// A Store must keep fitting racelab's story interfaces.
var (
	_ storetest.Store    = (*Store)(nil)
	_ storetest.Preparer = (*Store)(nil)
	_ io.Closer          = (*Store)(nil)
)

// urlVar names the server the tests use; without it, the one
// .ci/services starts (DefaultURL).
const urlVar = "RACELAB_POSTGRES_URL"

// openStore opens a store on the test server, closed when the test ends. A
// server that does not answer skips the test, except under CI=true, where it
// fails it: CI starts the server, so its absence there is a bug.
func openStore(tb testing.TB, cfg Config) *Store {
	tb.Helper()
	return storetest.OpenServer(tb, urlVar, DefaultURL, ErrUnreachable, func(ctx context.Context, url string) (*Store, error) {
		cfg.URL = url
		return Open(ctx, cfg)
	})
}
