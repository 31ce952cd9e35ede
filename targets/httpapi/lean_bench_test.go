package httpapi_test

import (
	"context"
	"testing"

	"github.com/racelab/racelab/targets"
	"github.com/racelab/racelab/targets/httpapi"
	"github.com/racelab/racelab/targets/httpapi/burst"
	"github.com/racelab/racelab/targets/httpapi/httpapitest"
	"github.com/racelab/racelab/targets/httpapi/server"
)

// BenchmarkWholeRequest: one read a loop over a pooled keep-alive
// connection to racelab's own handler on loopback, its answer read and
// decoded as a load's are; -benchmem counts what a request allocates on
// the client and the server together (both run in this process).
//
//	go test -run '^$' -bench WholeRequest -benchmem ./targets/httpapi
func BenchmarkWholeRequest(b *testing.B) {
	tg, err := targets.Open(context.Background(), "actor")
	if err != nil {
		b.Fatal(err)
	}
	defer tg.Close()
	base := httpapitest.Serve(b, server.New(tg.Store))
	c, err := httpapi.New(httpapi.MustParseURL(b, base), httpapi.Config{Wire: burst.Config{Sync: httpapi.SyncNone}})
	if err != nil {
		b.Fatal(err)
	}
	defer c.Close()
	ctx := context.Background()
	for b.Loop() {
		if _, err := c.Views(ctx, "bench-slug"); err != nil {
			b.Fatal(err)
		}
	}
}
