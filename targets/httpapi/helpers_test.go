package httpapi_test

import (
	"context"
	"crypto/tls"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"reflect"
	"strings"
	"testing"

	"go.uber.org/goleak"

	"github.com/racelab/racelab/scenarios/engine"
	"github.com/racelab/racelab/scenarios/results"
	"github.com/racelab/racelab/scenarios/scenariostest"
	"github.com/racelab/racelab/targets"
	"github.com/racelab/racelab/targets/httpapi"
	"github.com/racelab/racelab/targets/httpapi/burst"
	"github.com/racelab/racelab/targets/httpapi/httpapitest"
	"github.com/racelab/racelab/targets/httpapi/server"
	"github.com/racelab/racelab/targets/story"
)

// TestMain fails the package if any test leaves a goroutine behind: every
// connection, read loop and server must be closed by the end.
func TestMain(m *testing.M) {
	goleak.VerifyTestMain(m)
}

// open opens a catalog store, as racelab serve does, closed at cleanup.
func open(t *testing.T, spec string) *targets.Target {
	t.Helper()
	tg, err := targets.Open(context.Background(), spec)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { tg.Close() })
	if err := tg.Prepare(context.Background(), 100); err != nil {
		t.Fatal(err)
	}
	return tg
}

// serve runs the contract over store on a free loopback port with
// server.Server (HTTP/1.1 and h2c) and returns its base URL; the server is
// stopped, and waited for, at cleanup.
func serve(t *testing.T, store any) (string, *server.Handler) {
	t.Helper()
	h := server.New(store, server.WithStoreName("test"))
	return httpapitest.Serve(t, h), h
}

// serveHandler serves any handler as racelab serve does.
func serveHandler(t *testing.T, h http.Handler) string { return httpapitest.Serve(t, h) }

// serveTLS runs the contract over store on https, with HTTP/2 by ALPN, and
// returns its base URL and a TLS config that trusts it.
func serveTLS(t *testing.T, store any) (string, *tls.Config) {
	t.Helper()
	srv := httptest.NewUnstartedServer(server.New(store))
	srv.EnableHTTP2 = true
	srv.StartTLS()
	t.Cleanup(srv.Close)
	return srv.URL, srv.Client().Transport.(*http.Transport).TLSClientConfig
}

// play runs a story against base through the engine, as `racelab run -t`
// does, and returns the one target's result.
func play(t *testing.T, story, base string, n, trials int, cfg httpapi.Config) results.TargetResult {
	t.Helper()
	sc := scenariostest.Lookup(t, story)
	res, err := engine.Run(context.Background(), engine.Plan{
		Scenario: sc, Targets: []string{base}, Requests: n, Trials: trials,
		Options: []targets.Option{targets.WithHTTP(cfg)},
	})
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Targets) != 1 {
		t.Fatalf("%d targets in the result, want 1", len(res.Targets))
	}
	return res.Targets[0]
}

// call makes one request and returns its status, headers and JSON body.
func call(t *testing.T, method, rawURL string, body io.Reader) (int, http.Header, map[string]any) {
	t.Helper()
	var sent []byte
	if body != nil {
		sent, _ = io.ReadAll(body)
	}
	a := httpapitest.Do(t, method, rawURL, string(sent))
	var v map[string]any
	if method != http.MethodHead {
		if err := json.Unmarshal(a.Body, &v); err != nil {
			t.Fatalf("%s %s: answer is not JSON: %v: %q", method, rawURL, err, a.Body)
		}
	}
	return a.Status, a.Header, v
}

// step is one request of a walk through the contract and the answer it
// must get, exactly.
type step struct {
	method, path string
	status       int
	want         map[string]any
}

// walk makes each step against base, in order, and checks its status and
// body exactly, and that every answer is JSON with its arrival instant.
func walk(t *testing.T, base string, steps []step) {
	t.Helper()
	for _, s := range steps {
		status, header, got := call(t, s.method, base+s.path, nil)
		if status != s.status || !reflect.DeepEqual(got, s.want) {
			t.Errorf("%s %s = %d %v, want %d %v", s.method, s.path, status, got, s.status, s.want)
		}
		if ct := header.Get("Content-Type"); ct != "application/json" {
			t.Errorf("%s %s: Content-Type %q, want application/json", s.method, s.path, ct)
		}
		if header.Get(httpapi.ArrivalHeader) == "" {
			t.Errorf("%s %s: no %s header", s.method, s.path, httpapi.ArrivalHeader)
		}
	}
}

// stats asks the server how many requests route had for key.
func stats(t *testing.T, base, route, key string) (requests int64, spreadNS int64) {
	t.Helper()
	_, _, v := call(t, http.MethodGet, base+"/stats?route="+route+"&key="+url.QueryEscape(key), nil)
	r, _ := v["requests"].(float64)
	s, _ := v["arrival_spread_ns"].(float64)
	return int64(r), int64(s)
}

// client builds a Client for base, closed at cleanup.
func client(t *testing.T, base string, cfg httpapi.Config) *httpapi.Client {
	t.Helper()
	c, err := httpapi.New(httpapi.MustParseURL(t, base), cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	return c
}

// firstError is the first failed request's error text in a result.
func firstError(tr results.TargetResult) string {
	for _, trial := range tr.Trials {
		for _, r := range trial.Requests {
			if r.Error != "" {
				return r.Error
			}
		}
	}
	return ""
}

func contains(s string, parts ...string) bool {
	for _, p := range parts {
		if !strings.Contains(s, p) {
			return false
		}
	}
	return true
}

// stage stages n requests made by ask on c as one synchronized burst,
// each made as the engine makes a story's request (burst.StageCalls), and
// returns one function per request that releases it and returns its
// reply, with the arrival and the early mark of its answer. Call each
// function once, all of them concurrently.
func stage(t *testing.T, ctx context.Context, c *httpapi.Client, n int, ask func(ctx context.Context) (story.Reply, error)) []func(context.Context) (story.Reply, error) {
	t.Helper()
	type result struct {
		r   story.Reply
		err error
	}
	release, err := burst.StageCalls(ctx, c.Gate(n), func(ctx context.Context, _ int) result {
		r, err := ask(ctx)
		return result{r, err}
	})
	if err != nil {
		t.Fatal(err)
	}
	fs := make([]func(context.Context) (story.Reply, error), n)
	for j := range fs {
		fs[j] = func(ctx context.Context) (story.Reply, error) {
			res, a := release(ctx, j)
			res.r.Arrival, res.r.Early = a.Arrival, a.Early
			return res.r, res.err
		}
	}
	return fs
}
