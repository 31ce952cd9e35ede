package httpapi_test

import (
	"context"
	"fmt"
	"net/http"
	"strings"
	"sync"
	"testing"

	"github.com/racelab/racelab/targets/httpapi"
	"github.com/racelab/racelab/targets/httpapi/server"
	"github.com/racelab/racelab/targets/story"
)

// ownLimit is the limit of a story that keeps one of its own: "three a
// day", below the contract's 5, so that a server holding the contract's
// would grant the fourth request.
const ownLimit = 3

// limitedOp is one request that carries the story's limit, played with
// the client's story method, whole or staged in a synchronized burst, and
// read back.
type limitedOp struct {
	op    story.Op
	setup func(ctx context.Context, c *httpapi.Client, key string) error
	ask   func(ctx context.Context, c *httpapi.Client, key string) (story.Reply, error)
	// read is what the store counted for key in window (0 for a daily
	// count, which has none).
	read func(ctx context.Context, c *httpapi.Client, key string, window int64) (int64, error)
}

var ownWindow = story.Window{Limit: ownLimit, Length: story.WindowLength}

var limitedOps = []limitedOp{
	{op: story.OpDownload,
		ask: func(ctx context.Context, c *httpapi.Client, key string) (story.Reply, error) {
			ok, n, err := c.Consume(ctx, key, ownLimit)
			return story.Reply{OK: ok, Value: n}, err
		},
		read: func(ctx context.Context, c *httpapi.Client, key string, _ int64) (int64, error) {
			return c.Count(ctx, key)
		}},
	{op: story.OpLimit,
		ask: func(ctx context.Context, c *httpapi.Client, key string) (story.Reply, error) {
			a, err := c.Admit(ctx, key, ownWindow)
			return story.Reply{OK: a.Allowed, Value: a.Count, Window: a.Window}, err
		},
		read: func(ctx context.Context, c *httpapi.Client, key string, window int64) (int64, error) {
			return c.Admitted(ctx, key, ownWindow, window)
		}},
	{op: story.OpOriginal,
		setup: func(ctx context.Context, c *httpapi.Client, key string) error { return c.Subscribe(ctx, key) },
		ask: func(ctx context.Context, c *httpapi.Client, key string) (story.Reply, error) {
			ok, n, err := c.Download(ctx, key, ownLimit)
			return story.Reply{OK: ok, Value: n}, err
		},
		read: func(ctx context.Context, c *httpapi.Client, key string, _ int64) (int64, error) {
			return c.Downloads(ctx, key)
		}},
}

// TestStoryLimitTravels: a story with a limit of its own is held to it
// over HTTP. Against racelab serve's handler on loopback, over a real
// store, limit-1, limit and limit+1 requests fired at once (as whole
// requests released together, and as a staged burst) get exactly
// min(n, limit) granted, every other one refused at the count of the
// limit, and the store reads back min(n, limit): the figures the judge
// counts. The server saw exactly n requests.
func TestStoryLimitTravels(t *testing.T) {
	ctx := context.Background()
	for _, store := range []string{"actor", "sqlite"} {
		base, _ := serve(t, open(t, store).Store)
		c := client(t, base, httpapi.Config{})
		for _, o := range limitedOps {
			for _, n := range []int{ownLimit - 1, ownLimit, ownLimit + 1} {
				for _, staged := range []bool{false, true} {
					how := map[bool]string{false: "whole", true: "staged"}[staged]
					key := fmt.Sprintf("%s-%s-%d-%s", store, o.op, n, how)
					t.Run(key, func(t *testing.T) {
						if o.setup != nil {
							if err := o.setup(ctx, c, key); err != nil {
								t.Fatal(err)
							}
						}
						replies := fireLimited(t, ctx, c, o, key, n, staged)
						checkLimited(t, ctx, c, o, key, n, replies)
						if got, _ := stats(t, base, string(o.op), key); got != int64(n) {
							t.Errorf("the server counted %d requests, want %d", got, n)
						}
					})
				}
			}
		}
	}
}

// fireLimited fires n requests of o on key at once and returns their
// replies, each in its own slot.
func fireLimited(t *testing.T, ctx context.Context, c *httpapi.Client, o limitedOp, key string, n int, staged bool) []story.Reply {
	t.Helper()
	fs := make([]func(context.Context) (story.Reply, error), n)
	if staged {
		if err := c.Prepare(ctx, n); err != nil {
			t.Fatal(err)
		}
		fs = stage(t, ctx, c, n, func(ctx context.Context) (story.Reply, error) { return o.ask(ctx, c, key) })
	} else {
		for i := range fs {
			fs[i] = func(ctx context.Context) (story.Reply, error) { return o.ask(ctx, c, key) }
		}
	}
	replies, errs := make([]story.Reply, n), make([]error, n)
	release := make(chan struct{})
	var wg sync.WaitGroup
	for i, f := range fs {
		wg.Go(func() {
			<-release
			replies[i], errs[i] = f(ctx)
		})
	}
	close(release)
	wg.Wait()
	for i, err := range errs {
		if err != nil {
			t.Fatalf("request %d of %d: %v", i+1, n, err)
		}
	}
	return replies
}

// checkLimited checks replies window by window (a burst may straddle a
// rate limit's window boundary; a daily count has one "window"): each
// window granted min(its requests, limit), refused the rest at the
// limit, and reads back what it granted.
func checkLimited(t *testing.T, ctx context.Context, c *httpapi.Client, o limitedOp, key string, n int, replies []story.Reply) {
	t.Helper()
	asked, granted := map[int64]int{}, map[int64]int{}
	for _, r := range replies {
		asked[r.Window]++
		if r.OK {
			granted[r.Window]++
		} else if r.Value != ownLimit {
			t.Errorf("a refusal at count %d, want the limit %d", r.Value, ownLimit)
		}
	}
	for w, k := range asked {
		if want := min(k, ownLimit); granted[w] != want {
			t.Errorf("window %d: %d of %d granted against a limit of %d, want %d", w, granted[w], k, ownLimit, want)
		}
		got, err := o.read(ctx, c, key, w)
		if err != nil {
			t.Fatal(err)
		}
		if got != int64(granted[w]) {
			t.Errorf("window %d: the store counted %d, want the %d granted", w, got, granted[w])
		}
	}
}

// TestServeLimitQuery: racelab serve reads a request's limit from
// ?limit=L on every route of a limited op, its read included (echoed in
// "limit"); without it the contract's 5 stands. A limit that is not a
// whole number from 1 to 10000 is answered 400 with one line saying so,
// and nothing is counted.
func TestServeLimitQuery(t *testing.T) {
	base, _ := serve(t, open(t, "actor").Store)
	for _, rt := range []struct{ method, path, read string }{
		{"POST", "/download/q", "/quota/q"}, {"POST", "/limit/q", "/limit/q"}, {"POST", "/original/q", "/original/q"},
		{"GET", "/quota/q", ""}, {"GET", "/limit/q", ""}, {"GET", "/original/q", ""},
	} {
		for _, v := range []string{"0", "-1", "10001", "x", "1.5", "3%20"} {
			status, _, got := call(t, rt.method, base+rt.path+"?limit="+v, nil)
			msg, _ := got["error"].(string)
			if status != http.StatusBadRequest || !strings.HasPrefix(msg, "limit ") ||
				!strings.HasSuffix(msg, ": want a whole number from 1 to 10000") || strings.Contains(msg, "\n") {
				t.Errorf("%s %s?limit=%s = %d %v, want 400 and one line naming the limit", rt.method, rt.path, v, status, got)
			}
		}
		if rt.read != "" {
			if _, _, got := call(t, "GET", base+rt.read, nil); got["count"] != 0.0 {
				t.Errorf("after refused limits, GET %s = %v, want nothing counted", rt.read, got)
			}
		}
	}
	for _, tt := range []struct {
		query string
		limit float64
	}{{"", 5}, {"?limit=", 5}, {"?limit=1", 1}, {"?limit=10000", 10000}, {"?limit=3", 3}} {
		for _, path := range []string{"/quota/r", "/limit/r", "/original/r"} {
			status, _, got := call(t, "GET", base+path+tt.query, nil)
			if status != http.StatusOK || got["limit"] != tt.limit {
				t.Errorf("GET %s%s = %d %v, want 200 with limit %v", path, tt.query, status, got, tt.limit)
			}
		}
	}
	// limit-1, limit, limit+1 of a limit of 1, whole requests one by one.
	for i, want := range []int{200, 429, 429} {
		if status, _, _ := call(t, "POST", base+"/download/one?limit=1", nil); status != want {
			t.Errorf("download %d of a limit of 1 = %d, want %d", i+1, status, want)
		}
	}
	if _, _, got := call(t, "POST", base+"/download/one", nil); got["allowed"] != true {
		t.Errorf("a download without a limit after 1 granted = %v, want granted under the contract's 5", got)
	}
}

// TestClientSendsTheLimit: the requests a client sends for a story's
// limit. The contract's limit sends nothing, so a service written before
// limits travelled sees the bytes it always saw; another is ?limit=L (or
// ?stock=K), after the base URL's own query; a mapping's {limit} is
// filled whatever the limit.
func TestClientSendsTheLimit(t *testing.T) {
	var mu sync.Mutex
	var uris []string
	h := server.New(open(t, "actor").Store)
	base := serveHandler(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != "/" {
			mu.Lock()
			uris = append(uris, r.RequestURI)
			mu.Unlock()
		}
		h.ServeHTTP(w, r)
	}))
	sent := func(do func(c *httpapi.Client) error, c *httpapi.Client) string {
		t.Helper()
		mu.Lock()
		uris = nil
		mu.Unlock()
		if err := do(c); err != nil {
			t.Fatal(err)
		}
		mu.Lock()
		defer mu.Unlock()
		return strings.Join(uris, " ")
	}
	ctx := context.Background()
	plain := client(t, base, httpapi.Config{})
	keyed := client(t, base+"/?api=k", httpapi.Config{})
	mapped := client(t, base, httpapi.Config{Mapping: httpapi.Mapping{
		httpapi.CallDownload: {Path: "/download/{visitor}?l={limit}"},
	}})
	consume := func(limit int64) func(*httpapi.Client) error {
		return func(c *httpapi.Client) error { _, _, err := c.Consume(ctx, "v", limit); return err }
	}
	tests := []struct {
		name string
		c    *httpapi.Client
		do   func(*httpapi.Client) error
		want string
	}{
		{"contract limit", plain, consume(story.DailyLimit), "/download/v"},
		{"no limit", plain, consume(0), "/download/v"},
		{"own limit", plain, consume(ownLimit), "/download/v?limit=3"},
		{"limit+1 of the contract", plain, consume(story.DailyLimit + 1), "/download/v?limit=6"},
		{"base query first", keyed, consume(ownLimit), "/download/v?api=k&limit=3"},
		{"mapped, contract limit", mapped, consume(story.DailyLimit), "/download/v?l=5"},
		{"mapped, own limit", mapped, consume(ownLimit), "/download/v?l=3"},
		{"rate limit", plain, func(c *httpapi.Client) error { _, err := c.Admit(ctx, "v", ownWindow); return err }, "/limit/v?limit=3"},
		{"rate limit, contract's", plain, func(c *httpapi.Client) error {
			_, err := c.Admit(ctx, "v", story.Window{Limit: story.WindowLimit, Length: story.WindowLength})
			return err
		}, "/limit/v"},
		{"original", plain, func(c *httpapi.Client) error { _, _, err := c.Download(ctx, "v", ownLimit); return err }, "/original/v?limit=3"},
		{"stock", plain, func(c *httpapi.Client) error { _, err := c.CheckoutOf(ctx, "s", "b", 2); return err }, "/checkout/s?stock=2"},
		{"one of a kind", plain, func(c *httpapi.Client) error { _, err := c.Checkout(ctx, "o", "b"); return err }, "/checkout/o"},
	}
	for _, tt := range tests {
		if got := sent(tt.do, tt.c); got != tt.want {
			t.Errorf("%s: sent %q, want %q", tt.name, got, tt.want)
		}
	}
}

// seat is an op of a story's own, as a test story adds it to the table.
var seat = story.OpSpec{Op: "reserve", Method: http.MethodPost, Route: "/reserve/{show}", Key: "show",
	Field: "count", OK: "reserved", Read: "seats", ReadRoute: "/seats/{show}", ReadField: "taken",
	Refused: []int{http.StatusConflict}, Limit: "seats", DefaultLimit: 50,
	Words: story.Words{Request: "reserve", Requests: "reservations", Unit: "seat", Yes: "reserved", No: "sold out",
		Stored: "seats taken", Example: "gala"}}

// seats is the stories' table with the seat's row.
var seats = func() story.Table {
	table, err := story.Ops().With(seat)
	if err != nil {
		panic(err) // the row above: fixed by reading the error
	}
	return table
}()

// TestServeOwnOp: a handler given a table with a story's own op serves
// its request and read as the row says, over a store that keeps capped
// counts, at limit-1, limit and limit+1, held to the limit the request
// carries; its index lists the routes. A handler not given the row does
// not know them, and a store without capped counts answers 501.
func TestServeOwnOp(t *testing.T) {
	table := seats
	base := serveHandler(t, server.New(open(t, "actor").Store, server.WithOps(table)))
	walk(t, base, []step{
		{"POST", "/reserve/gala?seats=2", 200, map[string]any{"reserved": true, "count": 1.0}},
		{"POST", "/reserve/gala?seats=2", 200, map[string]any{"reserved": true, "count": 2.0}},
		{"POST", "/reserve/gala?seats=2", 409, map[string]any{"reserved": false, "count": 2.0}},
		{"GET", "/seats/gala?seats=2", 200, map[string]any{"show": "gala", "taken": 2.0, "seats": 2.0}},
		{"POST", "/reserve/gala", 200, map[string]any{"reserved": true, "count": 3.0}}, // the row's default, 50
		{"GET", "/seats/gala", 200, map[string]any{"show": "gala", "taken": 3.0, "seats": 50.0}},
		{"POST", "/reserve/gala?seats=0", 400, map[string]any{"error": `seats "0": want a whole number from 1 to 10000`}},
	})
	_, _, index := call(t, "GET", base+"/", nil)
	if routes := fmt.Sprint(index["routes"]); !strings.Contains(routes, "POST /reserve/{show} GET /seats/{show} GET /stats") {
		t.Errorf("index routes %s, want the op's before /stats", routes)
	}
	plain := serveHandler(t, server.New(open(t, "actor").Store))
	if status, _, _ := call(t, "POST", plain+"/reserve/gala", nil); status != http.StatusNotFound {
		t.Errorf("a handler without the row answered %d, want 404", status)
	}
	noCaps := serveHandler(t, server.New(open(t, "sqlite").Store, server.WithOps(table)))
	if status, _, got := call(t, "POST", noCaps+"/reserve/gala", nil); status != http.StatusNotImplemented || got["error"] != "the store keeps no capped counts" {
		t.Errorf("sqlite answered %d %v, want 501 saying it keeps no capped counts", status, got)
	}
}

// TestClientOwnOp: a client given the table makes the op's requests with
// the story's limit and reads its count; staged and whole requests alike
// are held to it. A row that takes the name of one of the contract's
// other calls is refused, by New as an error and by NewHandler as the
// programming error it is.
func TestClientOwnOp(t *testing.T) {
	table := seats
	base := serveHandler(t, server.New(open(t, "actor").Store, server.WithOps(table)))
	c := client(t, base, httpapi.Config{Ops: table})
	ctx := context.Background()
	for i, want := range []bool{true, true, true, false} {
		if ok, n, err := c.Take(ctx, seat.Op, "whole", ownLimit); err != nil || ok != want || n != int64(min(i+1, ownLimit)) {
			t.Errorf("Take #%d = %t, %d, %v; want %t at count %d", i+1, ok, n, err, want, min(i+1, ownLimit))
		}
	}
	if n, err := c.Taken(ctx, seat.Op, "whole"); err != nil || n != ownLimit {
		t.Errorf("Taken = %d, %v; want %d", n, err, ownLimit)
	}
	if _, _, err := c.Take(ctx, "refund", "k", 1); err == nil || !strings.Contains(err.Error(), `unknown operation "refund"; want hit, download, checkout, limit, original or reserve`) {
		t.Errorf("Take of an op of no row: %v, want it named", err)
	}
	take := limitedOp{op: seat.Op, ask: func(ctx context.Context, c *httpapi.Client, key string) (story.Reply, error) {
		ok, n, err := c.Take(ctx, seat.Op, key, ownLimit)
		return story.Reply{OK: ok, Value: n}, err
	}}
	replies := fireLimited(t, ctx, c, take, "staged", ownLimit+1, true)
	granted := 0
	for _, r := range replies {
		if r.OK {
			granted++
		}
	}
	if granted != ownLimit {
		t.Errorf("a staged burst of %d got %d reserved, want %d", ownLimit+1, granted, ownLimit)
	}
	clash := seat
	clash.Op, clash.Route, clash.Read, clash.ReadRoute = "plan", "/plan/{show}", "plans", "/plans/{show}"
	bad, err := story.Ops().With(clash)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := httpapi.New(httpapi.MustParseURL(t, base), httpapi.Config{Ops: bad}); err == nil || !strings.Contains(err.Error(), "the contract's call plan has the name already") {
		t.Errorf("New with a clashing row: %v, want it refused", err)
	}
	defer func() {
		if recover() == nil {
			t.Error("NewHandler with a clashing row did not panic")
		}
	}()
	server.New(open(t, "actor").Store, server.WithOps(bad))
}
