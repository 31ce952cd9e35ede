package httpapi_test

import (
	"context"
	"fmt"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/racelab/racelab/targets"
	"github.com/racelab/racelab/targets/httpapi"
	"github.com/racelab/racelab/targets/httpapi/server"
	"github.com/racelab/racelab/targets/story"
)

// TestContract walks every route of the contract, in order, against a
// real store, and checks status and body exactly. The store is the
// actor, whose plan is never stale: stale-plan's routes answer both
// refusals as the contract words them, for subscribers of their own (the
// actor counts a key's downloads and originals in one object).
func TestContract(t *testing.T) {
	base, _ := serve(t, open(t, "actor").Store)
	today := time.Now().UTC().Format(time.DateOnly)
	steps := []step{
		{"POST", "/hit/hello", 200, map[string]any{"slug": "hello", "views": 1.0}},
		{"POST", "/hit/hello", 200, map[string]any{"slug": "hello", "views": 2.0}},
		{"GET", "/get/hello", 200, map[string]any{"slug": "hello", "views": 2.0}},
		{"GET", "/get/unknown", 200, map[string]any{"slug": "unknown", "views": 0.0}},
		{"GET", "/get?slugs=hello,unknown", 200, map[string]any{"hello": 2.0, "unknown": 0.0}},
		{"POST", "/download/ann", 200, map[string]any{"allowed": true, "count": 1.0}},
		{"POST", "/download/ann", 200, map[string]any{"allowed": true, "count": 2.0}},
		{"POST", "/download/ann", 200, map[string]any{"allowed": true, "count": 3.0}},
		{"POST", "/download/ann", 200, map[string]any{"allowed": true, "count": 4.0}},
		{"POST", "/download/ann", 200, map[string]any{"allowed": true, "count": 5.0}},
		{"POST", "/download/ann", 429, map[string]any{"allowed": false, "count": 5.0}},
		{"GET", "/quota/ann", 200, map[string]any{"visitor": "ann", "day": today, "count": 5.0, "limit": 5.0}},
		{"GET", "/quota/bob", 200, map[string]any{"visitor": "bob", "day": today, "count": 0.0, "limit": 5.0}},
		{"POST", "/checkout/painting", 200, map[string]any{"reserved": true}},
		{"POST", "/checkout/painting", 409, map[string]any{"error": "being checked out", "item": "painting"}},
		{"GET", "/item/painting", 200, map[string]any{"item": "painting", "stock": 1.0, "claims": 1.0}},
		{"GET", "/item/vase", 200, map[string]any{"item": "vase", "stock": 1.0, "claims": 0.0}},
		{"POST", "/subscribe/sue", 200, map[string]any{"subscriber": "sue", "plan": "paid"}},
		{"GET", "/plan/sue", 200, map[string]any{"subscriber": "sue", "paid": true}},
	}
	for i := range story.DailyLimit {
		steps = append(steps, step{"POST", "/original/sue", 200, map[string]any{"granted": true, "count": float64(i + 1)}})
	}
	steps = append(steps,
		step{"POST", "/original/sue", 429, map[string]any{"granted": false, "count": 5.0}},
		step{"GET", "/original/sue", 200, map[string]any{"subscriber": "sue", "day": today, "count": 5.0, "limit": 5.0}},
		step{"POST", "/cancel/sue", 200, map[string]any{"subscriber": "sue", "plan": "cancelled"}},
		step{"GET", "/plan/sue", 200, map[string]any{"subscriber": "sue", "paid": false}},
		step{"POST", "/original/sue", 403, map[string]any{"granted": false, "count": 0.0}},
		step{"POST", "/original/tom", 403, map[string]any{"granted": false, "count": 0.0}},
		step{"GET", "/plan/tom", 200, map[string]any{"subscriber": "tom", "paid": false}},
		step{"GET", "/original/tom", 200, map[string]any{"subscriber": "tom", "day": today, "count": 0.0, "limit": 5.0}},
	)
	walk(t, base, steps)
}

// TestErrors checks that every kind of mistake is answered with the right
// status and a JSON error, arrival instant included.
func TestErrors(t *testing.T) {
	base, _ := serve(t, open(t, "actor").Store)
	tests := []struct {
		method, path string
		body         string
		status       int
		allow        string
		says         string
	}{
		{"GET", "/hit/a", "", 405, "POST", "method not allowed"},
		{"PUT", "/download/a", "", 405, "POST", "method not allowed"},
		{"POST", "/get/a", "", 405, "GET, HEAD", "method not allowed"},
		{"DELETE", "/item/a", "", 405, "GET, HEAD", "method not allowed"},
		{"GET", "/subscribe/a", "", 405, "POST", "method not allowed"},
		{"GET", "/cancel/a", "", 405, "POST", "method not allowed"},
		{"POST", "/plan/a", "", 405, "GET, HEAD", "method not allowed"},
		// A path that both asks and reads answers other methods as its read.
		{"PUT", "/original/a", "", 405, "GET, HEAD", "use GET"},
		{"DELETE", "/limit/a", "", 405, "GET, HEAD", "use GET"},
		{"GET", "/nope", "", 404, "", "no route GET /nope"},
		{"POST", "/hit/a/b", "", 404, "", "encode / in a key as %2F"},
		{"POST", "/hit/", "", 400, "", "needs a key"},
		{"GET", "/get/", "", 400, "", "needs a key"},
		{"POST", "/original/", "", 400, "", "needs a key"},
		{"GET", "/get", "", 400, "", "/get?slugs=a,b,c"},
		{"GET", "/get?slugs=a,,b", "", 400, "", "slug 2 of slugs is empty"},
		{"GET", "/get?slugs=" + strings.Repeat("k,", server.MaxBatchKeys) + "k", "", 400, "", "at most 100"},
		{"POST", "/hit/%FF", "", 400, "", "not UTF-8"},
		{"POST", "/hit/a%00b", "", 400, "", "control character"},
		{"POST", "/hit/" + strings.Repeat("x", server.MaxKeyBytes+1), "", 400, "", "over 1024 bytes"},
		{"POST", "/hit/a", strings.Repeat("x", server.DefaultMaxBody+1), 413, "", "request body over"},
	}
	for _, tt := range tests {
		status, header, got := call(t, tt.method, base+tt.path, strings.NewReader(tt.body))
		msg, _ := got["error"].(string)
		if status != tt.status || !strings.Contains(msg, tt.says) || len(got) != 1 {
			t.Errorf("%s %s = %d %v, want %d and an error saying %q", tt.method, tt.path, status, got, tt.status, tt.says)
		}
		if allow := header.Get("Allow"); allow != tt.allow {
			t.Errorf("%s %s: Allow %q, want %q", tt.method, tt.path, allow, tt.allow)
		}
		if header.Get(httpapi.ArrivalHeader) == "" {
			t.Errorf("%s %s: no %s header", tt.method, tt.path, httpapi.ArrivalHeader)
		}
	}
}

// TestDoubleDecoding is the regression test of the double-decoding story.
// WordPress stores a non-ASCII slug percent-encoded: the post "مرحبا" has
// the slug "%d9%85%d8%b1%d8%ad%d8%a8%d8%a7", and a URL carries that slug
// encoded once more (%25d9%2585…). A service that decodes the key a second
// time looks up "مرحبا", finds no row, and a batch read answers 0, silently.
// racelab serve decodes exactly once, in the path and in ?slugs= alike.
func TestDoubleDecoding(t *testing.T) {
	base, _ := serve(t, open(t, "sqlite").Store)
	const (
		stored  = "%d9%85%d8%b1%d8%ad%d8%a8%d8%a7" // the slug as WordPress stores it
		inURL   = "%25d9%2585%25d8%25b1%25d8%25ad%25d8%25a8%25d8%25a7"
		arabic  = "مرحبا"                          // the same slug decoded: another key
		arabicE = "%D9%85%D8%B1%D8%AD%D8%A8%D8%A7" // it, encoded once
	)
	for range 3 {
		if status, _, got := call(t, "POST", base+"/hit/"+inURL, nil); status != 200 || got["slug"] != stored {
			t.Fatalf("POST /hit/%s = %d %v, want 200 for slug %q", inURL, status, got, stored)
		}
	}
	for range 2 {
		if status, _, got := call(t, "POST", base+"/hit/"+arabicE, nil); status != 200 || got["slug"] != arabic {
			t.Fatalf("POST /hit/%s = %d %v, want 200 for slug %q", arabicE, status, got, arabic)
		}
	}
	// An encoded comma belongs to its key; a literal one separates keys.
	call(t, "POST", base+"/hit/a%2Cb", nil)

	_, _, got := call(t, "GET", base+"/get?slugs="+inURL+","+arabicE+",a%2Cb,a,unknown", nil)
	want := map[string]any{stored: 3.0, arabic: 2.0, "a,b": 1.0, "a": 0.0, "unknown": 0.0}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("batch read = %v\nwant         %v", got, want)
	}
	_, _, got = call(t, "GET", base+"/get/"+inURL, nil)
	if got["views"] != 3.0 {
		t.Errorf("GET /get/%s = %v, want 3 views", inURL, got)
	}

	// The client encodes a key once for the path, so the stored form reads
	// back as stored.
	c := client(t, base, httpapi.Config{})
	for key, n := range map[string]int64{stored: 3, arabic: 2, "a,b": 1} {
		if got, err := c.Views(context.Background(), key); err != nil || got != n {
			t.Errorf("Views(%q) = %d, %v; want %d", key, got, err, n)
		}
	}
}

// TestStats checks that /stats counts a key's requests and their spread.
func TestStats(t *testing.T) {
	base, h := serve(t, open(t, "actor").Store)
	for range 3 {
		call(t, "POST", base+"/hit/counted", nil)
	}
	if n, _ := stats(t, base, "hit", "counted"); n != 3 {
		t.Errorf("stats for hit counted: %d requests, want 3", n)
	}
	if n, _ := stats(t, base, "hit", "never"); n != 0 {
		t.Errorf("stats for a key never hit: %d requests, want 0", n)
	}
	_, _, all := call(t, "GET", base+"/stats", nil)
	if routes, _ := all["routes"].(map[string]any); routes["hit"] != 3.0 {
		t.Errorf("GET /stats = %v, want 3 hits", all)
	}
	if h.Requests() < 6 {
		t.Errorf("Requests() = %d, want at least 6", h.Requests())
	}
}

// gatedCounter holds every Hit until released, to catch requests in flight.
type gatedCounter struct {
	story.Counter
	inside  chan struct{}
	release chan struct{}
}

func (g gatedCounter) Hit(ctx context.Context, slug string) (int64, error) {
	g.inside <- struct{}{}
	<-g.release
	return g.Counter.Hit(ctx, slug)
}

// TestShutdownFinishesInFlight stops the server while requests are inside
// the store: they must still be answered, and every answered hit must be
// in the database once Serve has returned and the store is closed.
func TestShutdownFinishesInFlight(t *testing.T) {
	path := filepath.Join(t.TempDir(), "views.db")
	tg, err := targets.Open(context.Background(), "sqlite?path="+path)
	if err != nil {
		t.Fatal(err)
	}
	const inFlight = 8
	store := gatedCounter{tg.Store.(story.Counter), make(chan struct{}), make(chan struct{})}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	base := "http://" + ln.Addr().String()
	ctx, stop := context.WithCancel(context.Background())
	served := make(chan error, 1)
	go func() { served <- server.Server{Handler: server.New(store)}.Serve(ctx, ln) }()

	var wg sync.WaitGroup
	statuses := make([]int, inFlight)
	errs := make([]error, inFlight)
	for i := range inFlight {
		wg.Go(func() {
			resp, err := http.Post(base+"/hit/kept", "", nil)
			if err != nil {
				errs[i] = err
				return
			}
			resp.Body.Close()
			statuses[i] = resp.StatusCode
		})
	}
	for range inFlight {
		<-store.inside // every request is inside the store
	}
	stop()
	// The listener closes at once; the requests in flight carry on.
	for {
		c, err := net.Dial("tcp", ln.Addr().String())
		if err != nil {
			break
		}
		c.Close()
		time.Sleep(time.Millisecond)
	}
	close(store.release)
	wg.Wait()
	if err := <-served; err != nil {
		t.Fatalf("Serve: %v", err)
	}
	if err := tg.Close(); err != nil {
		t.Fatal(err)
	}
	for i := range inFlight {
		if errs[i] != nil || statuses[i] != http.StatusOK {
			t.Errorf("request %d in flight at shutdown: status %d, error %v; want 200", i, statuses[i], errs[i])
		}
	}
	again, err := targets.Open(context.Background(), "sqlite?path="+path)
	if err != nil {
		t.Fatal(err)
	}
	defer again.Close()
	if n, err := again.Store.(story.Counter).Views(context.Background(), "kept"); err != nil || n != inFlight {
		t.Errorf("after shutdown the store holds %d views (%v), want the %d answered", n, err, inFlight)
	}
}

// TestHandlerWithoutStories answers 501 for a story the store cannot play.
func TestHandlerWithoutStories(t *testing.T) {
	base, _ := serve(t, struct{}{})
	for _, path := range []string{"/hit/a", "/download/a", "/checkout/a", "/limit/a", "/subscribe/a", "/cancel/a", "/original/a"} {
		if status, _, got := call(t, "POST", base+path, nil); status != http.StatusNotImplemented {
			t.Errorf("POST %s = %d %v, want 501", path, status, got)
		}
	}
}

// failingStore fails every story's every call as a store that lost its
// server does, with the error a driver gives: it names the server's address
// and the key.
type failingStore struct{}

const (
	failingAddr = "127.0.0.1:56379"
	secretKey   = "visitor-4f1c2e"
)

func (failingStore) fail(op, key string) error {
	return fmt.Errorf("%s %q: dial tcp %s: connect: connection refused\n(redis://:hunter2@%s/0)", op, key, failingAddr, failingAddr)
}
func (f failingStore) Hit(_ context.Context, k string) (int64, error)   { return 0, f.fail("incr", k) }
func (f failingStore) Views(_ context.Context, k string) (int64, error) { return 0, f.fail("get", k) }
func (f failingStore) Consume(_ context.Context, k string, _ int64) (bool, int64, error) {
	return false, 0, f.fail("evalsha", k)
}
func (f failingStore) Count(_ context.Context, k string) (int64, error) { return 0, f.fail("get", k) }
func (f failingStore) Checkout(_ context.Context, k, _ string) (bool, error) {
	return false, f.fail("set nx", k)
}
func (f failingStore) Claims(_ context.Context, k string) (int64, error) { return 0, f.fail("get", k) }

// fileLog is a log the server's goroutines write to a file, as an
// operator's log would be; the test reads the file, so it shares no memory
// with the writers (an *os.File serializes its writes).
type fileLog struct{ *os.File }

func newFileLog(t *testing.T) fileLog {
	t.Helper()
	f, err := os.CreateTemp(t.TempDir(), "serve-*.log")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { f.Close() })
	return fileLog{f}
}

// String is what was logged so far.
func (l fileLog) String() string {
	b, _ := os.ReadFile(l.Name())
	return string(b)
}

// TestStoreFailure: a failing store answers 500 with a generic body on
// every route, so that a client learns nothing of the backend (its address,
// its credentials, another visitor's key); the operator reads the detail in
// the log, one line per request.
func TestStoreFailure(t *testing.T) {
	logged := newFileLog(t)
	base := serveHandler(t, server.New(failingStore{}, server.WithStoreName("redis"), server.WithErrorLog(logged)))
	routes := []struct{ method, path string }{
		{"POST", "/hit/" + secretKey},
		{"GET", "/get/" + secretKey},
		{"GET", "/get?slugs=a," + secretKey},
		{"POST", "/download/" + secretKey},
		{"GET", "/quota/" + secretKey},
		{"POST", "/checkout/" + secretKey},
		{"GET", "/item/" + secretKey},
	}
	for _, r := range routes {
		status, _, got := call(t, r.method, base+r.path, nil)
		want := map[string]any{"error": "store failed"}
		if status != http.StatusInternalServerError || !reflect.DeepEqual(got, want) {
			t.Errorf("%s %s over a failing store = %d %v, want 500 %v", r.method, r.path, status, got, want)
		}
	}
	lines := strings.Split(strings.TrimSuffix(logged.String(), "\n"), "\n")
	if len(lines) != len(routes) {
		t.Fatalf("log has %d lines, want one per request (%d):\n%s", len(lines), len(routes), logged.String())
	}
	for i, line := range lines {
		r := routes[i]
		if !contains(line, "racelab serve: "+r.method+" "+r.path+": 500: store redis: ", failingAddr, secretKey) {
			t.Errorf("log line %d = %q, want the request, the store and its error", i+1, line)
		}
	}
}

// TestStoreFailureWithoutLog: with no log, the detail is dropped, not sent.
func TestStoreFailureWithoutLog(t *testing.T) {
	base, _ := serve(t, failingStore{})
	status, header, got := call(t, "POST", base+"/hit/"+secretKey, nil)
	if status != http.StatusInternalServerError || got["error"] != "store failed" || len(got) != 1 {
		t.Errorf("POST /hit over a failing store = %d %v, want 500 store failed", status, got)
	}
	if header.Get("X-Content-Type-Options") != "nosniff" {
		t.Errorf("X-Content-Type-Options %q, want nosniff", header.Get("X-Content-Type-Options"))
	}
}

func ExampleHandler() {
	// racelab serve is this handler over an opened store, on a Server.
	tg, _ := targets.Open(context.Background(), "actor")
	defer tg.Close()
	h := server.New(tg.Store, server.WithStoreName(tg.Name()))
	ln, _ := net.Listen("tcp", "127.0.0.1:0")
	ctx, stop := context.WithCancel(context.Background())
	done := make(chan error)
	go func() { done <- server.Server{Handler: h}.Serve(ctx, ln) }()

	resp, _ := http.Post("http://"+ln.Addr().String()+"/hit/hello", "", nil)
	var b strings.Builder
	fmt.Fprint(&b, resp.Status, " ")
	buf := make([]byte, 64)
	n, _ := resp.Body.Read(buf)
	b.Write(buf[:n])
	resp.Body.Close()
	fmt.Print(b.String())
	stop()
	<-done
	// Output: 200 OK {"slug":"hello","views":1}
}

// TestKVKeyPastItsLimit: the KV simulator takes keys of up to 512 bytes,
// its own prefix included ("views:" is 6 of them), while the contract takes
// up to 1,024. A key between the two is the sender's mistake: 400 naming
// the key, never 500 "store failed". A key that fits with its prefix is
// counted, so the limit is tested on both sides.
func TestKVKeyPastItsLimit(t *testing.T) {
	base, _ := serve(t, open(t, "kv").Store)
	fits := 512 - len("views:")
	for _, tt := range []struct {
		route  string
		n      int
		status int
	}{
		{"/hit/", fits, 200},
		{"/hit/", fits + 1, 400},
		{"/hit/", server.MaxKeyBytes, 400},
		{"/download/", 512 - len("quota:") + 1, 400},
		{"/limit/", 507, 400},
	} {
		key := strings.Repeat("k", tt.n)
		status, _, got := call(t, "POST", base+tt.route+key, nil)
		if status != tt.status {
			t.Errorf("POST %s(%d bytes) = %d %v, want %d", tt.route, tt.n, status, got, tt.status)
			continue
		}
		if msg, _ := got["error"].(string); tt.status == 400 && !strings.Contains(msg, "bad key") {
			t.Errorf("POST %s(%d bytes): error %q, want one saying bad key", tt.route, tt.n, msg)
		}
	}
}
