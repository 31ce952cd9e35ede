package storetest

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/racelab/racelab/targets/sqldb"
)

// Database opens the database at u, which the environment variable env
// names (URL(env, default) finds it; "" when there is none), and pings
// it: a server that is not there ends the test as Unreachable says
// (skipped, failed under CI). It is closed when the test ends.
func Database(tb testing.TB, env, u string) *sqldb.DB {
	tb.Helper()
	if u == "" {
		Unreachable(tb, env, fmt.Errorf("%s is not set; .ci/services starts its server", env))
	}
	db, err := sqldb.Open(u)
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() { db.Close() })
	w, err := db.Writable()
	if err != nil {
		tb.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := w.PingContext(ctx); err != nil {
		Unreachable(tb, env, err)
	}
	return db
}
