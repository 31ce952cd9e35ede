package httpapi_test

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"

	"github.com/racelab/racelab/targets/httpapi"
	"github.com/racelab/racelab/targets/httpapi/burst"
	"github.com/racelab/racelab/targets/httpapi/server"
)

// fakeService is a test server speaking (or failing to speak) the
// contract: answer decides every story request's answer, read every read's.
func fakeService(t *testing.T, answer, read http.HandlerFunc) string {
	t.Helper()
	mux := http.NewServeMux()
	mux.HandleFunc("/{$}", func(w http.ResponseWriter, r *http.Request) {})
	for _, p := range []string{"POST /hit/{key}", "POST /download/{key}", "POST /checkout/{key}"} {
		mux.HandleFunc(p, answer)
	}
	for _, p := range []string{"GET /get/{key}", "GET /quota/{key}", "GET /item/{key}"} {
		mux.HandleFunc(p, read)
	}
	return serveHandler(t, mux)
}

func reply(code int, body string) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		w.WriteHeader(code)
		fmt.Fprint(w, body)
	}
}

// views answers a contract-shaped read with n views for the asked key.
func views(n int) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		fmt.Fprintf(w, `{"slug":%q,"views":%d}`, r.PathValue("key"), n)
	}
}

// TestMalformedServices: a service answering outside the contract gives a
// clear error for each request, and the target errs as a whole; it never
// yields a verdict.
func TestMalformedServices(t *testing.T) {
	tests := []struct {
		name         string
		story        string
		answer, read http.HandlerFunc
		says         []string
	}{
		{"server error", "ten-hits-one-view", reply(500, `{"error":"boom"}`), views(0),
			[]string{"every request failed", "POST /hit/slug-", "answered 500 Internal Server Error, want 200", `boom`}},
		{"not JSON", "ten-hits-one-view", reply(200, "<html>hello</html>"), views(0),
			[]string{"answered 200 with a body that is not a JSON object", "<html>hello</html>"}},
		{"field missing", "ten-hits-one-view", func(w http.ResponseWriter, r *http.Request) {
			fmt.Fprintf(w, `{"slug":%q,"count":1}`, r.PathValue("key"))
		}, views(0), []string{`answered 200 without a number at "views"`}},
		{"field not a number", "ten-hits-one-view", func(w http.ResponseWriter, r *http.Request) {
			fmt.Fprintf(w, `{"slug":%q,"views":"one"}`, r.PathValue("key"))
		}, views(0), []string{`without a number at "views"`}},
		{"another key echoed", "ten-hits-one-view", reply(200, `{"slug":"مرحبا","views":1}`), views(0),
			[]string{`answered 200 for key "مرحبا", asked for "slug-`, "decoded twice"}},
		{"unexpected status", "six-become-four", reply(403, "forbidden"), views(0),
			[]string{"answered 403 Forbidden, want 200 or 429: forbidden"}},
		{"status and flag disagree", "six-become-four", reply(200, `{"allowed":false,"count":5}`), views(0),
			[]string{`answered 200 with false at "allowed", want true to agree with the status`}},
		{"redirect", "five-checkouts", func(w http.ResponseWriter, r *http.Request) {
			http.Redirect(w, r, "/elsewhere", http.StatusFound)
		}, views(0), []string{"answered 302 Found, want 200 or 409"}},
		{"refusal lacks the count", "six-become-four", reply(429, `{"allowed":false}`), views(0),
			[]string{`answered 429 without a number at "count"`}},
		{"read answers garbage", "ten-hits-one-view", func(w http.ResponseWriter, r *http.Request) {
			fmt.Fprintf(w, `{"slug":%q,"views":1}`, r.PathValue("key"))
		}, reply(200, "OK"), []string{"read back slug-", "GET /get/slug-", "not a JSON object"}},
		{"read answers two objects", "ten-hits-one-view", func(w http.ResponseWriter, r *http.Request) {
			fmt.Fprintf(w, `{"slug":%q,"views":1}`, r.PathValue("key"))
		}, func(w http.ResponseWriter, r *http.Request) {
			fmt.Fprintf(w, `{"slug":%q,"views":3}{"slug":%[1]q,"views":1}`, r.PathValue("key"))
		}, []string{"read back slug-", "answered 200 with a body that is not a JSON object"}},
		{"read answers 404", "five-checkouts", reply(200, `{"reserved":true}`), reply(404, "not found"),
			[]string{"read back item-", "answered 404 Not Found, want 200"}},
		{"read lacks the count", "six-become-four", reply(429, `{"allowed":false,"count":5}`), func(w http.ResponseWriter, r *http.Request) {
			fmt.Fprintf(w, `{"visitor":%q}`, r.PathValue("key"))
		}, []string{`without a number at "count"`}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			base := fakeService(t, tt.answer, tt.read)
			for _, mode := range syncModes {
				tr := play(t, tt.story, base, 3, 1, httpapi.Config{Wire: burst.Config{Sync: mode}})
				if tr.Error == "" || len(tr.Trials) != 0 {
					t.Fatalf("%s: no target error and %d trials, want an error and no verdict", mode, len(tr.Trials))
				}
				if !contains(tr.Error, tt.says...) {
					t.Errorf("%s: error\n  %s\nwant it to say %q", mode, tr.Error, tt.says)
				}
			}
		})
	}
}

// TestMappedService plays every story against a service with its own API,
// mapped onto the contract, and checks it holds.
func TestMappedService(t *testing.T) {
	var mu sync.Mutex
	views, downloads, claims := map[string]int{}, map[string]int{}, map[string]int{}
	mux := http.NewServeMux()
	mux.HandleFunc("/", func(http.ResponseWriter, *http.Request) {})
	mux.HandleFunc("PUT /api/posts/{slug}/views", func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		defer mu.Unlock()
		views[r.PathValue("slug")]++
		fmt.Fprintf(w, `{"data":{"total":%d}}`, views[r.PathValue("slug")])
	})
	mux.HandleFunc("GET /api/posts", func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		defer mu.Unlock()
		fmt.Fprintf(w, `{"data":{"total":%d}}`, views[r.URL.Query().Get("slug")])
	})
	mux.HandleFunc("POST /dl", func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		defer mu.Unlock()
		v := r.URL.Query().Get("who")
		if downloads[v] >= 5 {
			w.WriteHeader(http.StatusForbidden)
			fmt.Fprintf(w, `{"error":"quota exceeded","used":%d}`, downloads[v])
			return
		}
		downloads[v]++
		w.WriteHeader(http.StatusCreated)
		fmt.Fprintf(w, `{"used":%d}`, downloads[v])
	})
	mux.HandleFunc("GET /dl", func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		defer mu.Unlock()
		fmt.Fprintf(w, `{"used":%d}`, downloads[r.URL.Query().Get("who")])
	})
	mux.HandleFunc("POST /orders/{item}", func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		defer mu.Unlock()
		if claims[r.PathValue("item")] > 0 {
			w.WriteHeader(http.StatusGone)
			return
		}
		claims[r.PathValue("item")]++
		w.WriteHeader(http.StatusAccepted)
	})
	mux.HandleFunc("GET /orders/{item}", func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		defer mu.Unlock()
		fmt.Fprintf(w, `{"orders":%d}`, claims[r.PathValue("item")])
	})
	srv := httptest.NewServer(mux)
	t.Cleanup(srv.Close)

	var mapping httpapi.Mapping
	err := json.Unmarshal([]byte(`{
		"hit":      {"method": "PUT", "path": "/api/posts/{slug}/views", "field": "data.total"},
		"get":      {"path": "/api/posts?slug={slug}", "field": "data.total"},
		"download": {"path": "/dl?who={visitor}", "yes": [201], "no": [403], "field": "used"},
		"quota":    {"path": "/dl?who={visitor}", "field": "used"},
		"checkout": {"path": "/orders/{item}", "yes": [202], "no": [410]},
		"item":     {"path": "/orders/{item}", "field": "orders"}
	}`), &mapping)
	if err != nil {
		t.Fatal(err)
	}
	for _, story := range []string{"ten-hits-one-view", "six-become-four", "five-checkouts"} {
		tr := play(t, story, srv.URL, 0, 2, httpapi.Config{Mapping: mapping})
		if tr.Error != "" || len(tr.Trials) != 2 || tr.Broken() > 0 {
			t.Errorf("%s against a mapped service: error %q, %d trials, %d broken; want 2 trials holding (%s)",
				story, tr.Error, len(tr.Trials), tr.Broken(), firstError(tr))
		}
	}
}

// TestBaseURLPathAndQuery: a base URL's path prefixes every route and its
// query (an API key) goes with every request, never read as racelab's.
func TestBaseURLPathAndQuery(t *testing.T) {
	var mu sync.Mutex
	var seen []string
	inner := server.New(open(t, "actor").Store)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		seen = append(seen, r.Method+" "+r.URL.RequestURI()+" "+r.Header.Get("X-Api-Key"))
		mu.Unlock()
		if r.URL.Query().Get("token") != "s3cret" || !strings.HasPrefix(r.URL.Path, "/v1/") {
			w.WriteHeader(http.StatusUnauthorized)
			return
		}
		r.URL.Path = strings.TrimPrefix(r.URL.Path, "/v1")
		r.URL.RawPath = ""
		inner.ServeHTTP(w, r)
	}))
	t.Cleanup(srv.Close)
	tr := play(t, "ten-hits-one-view", srv.URL+"/v1/?token=s3cret", 3, 1,
		httpapi.Config{Wire: burst.Config{Sync: httpapi.SyncLastByte, Header: http.Header{"X-Api-Key": {"k1"}}}})
	if tr.Error != "" || tr.Broken() > 0 {
		t.Fatalf("error %q, %d broken (%s)", tr.Error, tr.Broken(), firstError(tr))
	}
	mu.Lock()
	defer mu.Unlock()
	for _, s := range seen {
		if strings.HasPrefix(s, "POST") && !(strings.HasPrefix(s, "POST /v1/hit/slug-") && strings.HasSuffix(s, "?token=s3cret k1")) {
			t.Errorf("request %q, want POST /v1/hit/… with the base URL's query and the header", s)
		}
	}
}

func TestNewRefusesBadConfig(t *testing.T) {
	tests := []struct {
		base string
		cfg  httpapi.Config
		says string
	}{
		{"ftp://example.com", httpapi.Config{}, "want http://"},
		{"http://127.0.0.1:1", httpapi.Config{Wire: burst.Config{Sync: "fast"}}, `sync "fast"`},
		{"http://127.0.0.1:1", httpapi.Config{Mapping: httpapi.Mapping{httpapi.CallHit: {Path: "/hit"}}}, "has no {slug}"},
		{"http://127.0.0.1:1", httpapi.Config{Wire: burst.Config{Header: http.Header{"Bad Name": {"x"}}}}, "header name"},
		{"http://127.0.0.1:1", httpapi.Config{Wire: burst.Config{Header: http.Header{"X": {"a\r\nb"}}}}, "not valid"},
	}
	for _, tt := range tests {
		if _, err := httpapi.New(httpapi.MustParseURL(t, tt.base), tt.cfg); err == nil || !strings.Contains(err.Error(), tt.says) {
			t.Errorf("New(%s, %+v) = %v, want an error saying %q", tt.base, tt.cfg, err, tt.says)
		}
	}
}

// TestClientStories uses the client's whole-request methods, as a Go
// program without the engine would.
func TestClientStories(t *testing.T) {
	base, _ := serve(t, open(t, "sqlite").Store)
	c := client(t, base, httpapi.Config{})
	ctx := context.Background()
	for want := int64(1); want <= 3; want++ {
		if n, err := c.Hit(ctx, "post"); err != nil || n != want {
			t.Fatalf("Hit = %d, %v; want %d", n, err, want)
		}
	}
	if n, err := c.Views(ctx, "post"); err != nil || n != 3 {
		t.Errorf("Views = %d, %v; want 3", n, err)
	}
	for i := range 6 {
		ok, n, err := c.Consume(ctx, "ann", 5)
		if err != nil || ok != (i < 5) || n != int64(min(i+1, 5)) {
			t.Errorf("Consume %d = %t, %d, %v", i+1, ok, n, err)
		}
	}
	if n, err := c.Count(ctx, "ann"); err != nil || n != 5 {
		t.Errorf("Count = %d, %v; want 5", n, err)
	}
	for i := range 2 {
		if ok, err := c.Checkout(ctx, "vase", "me"); err != nil || ok != (i == 0) {
			t.Errorf("Checkout %d = %t, %v", i+1, ok, err)
		}
	}
	if n, err := c.Claims(ctx, "vase"); err != nil || n != 1 {
		t.Errorf("Claims = %d, %v; want 1", n, err)
	}
	if c.URL() != base || c.SyncMode() != "auto" {
		t.Errorf("URL %q, sync %q; want %q, auto before Prepare", c.URL(), c.SyncMode(), base)
	}
}

// TestQuotaReadsTheCount: the quota's read back is its count, not its
// limit. Two downloads for a fresh visitor leave a count of 2, well under
// the limit of 5, so reading "limit" (or any other number of the answer)
// fails here by its value, whatever an error message says. Both the
// whole-request methods and the engine's staged bursts are checked.
func TestQuotaReadsTheCount(t *testing.T) {
	base, _ := serve(t, open(t, "sqlite").Store)
	ctx := context.Background()
	c := client(t, base, httpapi.Config{})
	for i := range 2 {
		if ok, n, err := c.Consume(ctx, "fresh-visitor", 5); err != nil || !ok || n != int64(i+1) {
			t.Fatalf("download %d = %t, %d, %v; want granted, count %d", i+1, ok, n, err, i+1)
		}
	}
	if n, err := c.Count(ctx, "fresh-visitor"); err != nil || n != 2 {
		t.Errorf("Count after 2 downloads = %d, %v; want 2", n, err)
	}
	for _, mode := range syncModes {
		tr := play(t, "six-become-four", base, 2, 2, httpapi.Config{Wire: burst.Config{Sync: mode}})
		if tr.Error != "" {
			t.Fatalf("%s: %s", mode, tr.Error)
		}
		for _, trial := range tr.Trials {
			if trial.Allowed != 2 || trial.Counted != 2 {
				t.Errorf("%s, trial %d: %d granted, %d counted; want 2 and 2", mode, trial.Index, trial.Allowed, trial.Counted)
			}
		}
	}
}
