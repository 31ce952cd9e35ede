package main

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/racelab/racelab/targets"
	"github.com/racelab/racelab/targets/httpapi/server"
	"github.com/racelab/racelab/targets/storetest"
)

// TestHTTPExitCodes: a service answering outside the contract, or one that
// cannot be reached, is racelab failing to do its job (exit 1), never a
// verdict; a bad HTTP flag is a usage error (exit 2). Each is one line.
func TestHTTPExitCodes(t *testing.T) {
	garbage := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		fmt.Fprint(w, "<html>it works</html>")
	}))
	defer garbage.Close()
	closed := "http://" + storetest.ClosedAddr(t)
	mapFile := filepath.Join(t.TempDir(), "map.json")
	if err := os.WriteFile(mapFile, []byte(`{"hot": {}}`), 0o600); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		args []string
		want int
		says string
	}{
		{[]string{"run", "ten-hits-one-view", "-t", garbage.URL}, exitFailure, "could not run " + garbage.URL},
		{[]string{"run", "six-become-four", "-t", garbage.URL, "--sync", "none"}, exitFailure, "could not run"},
		{[]string{"run", "ten-hits-one-view", "-t", closed}, exitFailure, "could not run " + closed},
		{[]string{"run", "ten-hits-one-view", "-t", garbage.URL, "--sync", "fast"}, exitUsage, `--sync "fast": want auto, h2, lastbyte or none`},
		{[]string{"run", "ten-hits-one-view", "-t", garbage.URL, "--http-call", "hot=/x/{slug}"}, exitUsage, "--http-call"},
		{[]string{"run", "ten-hits-one-view", "-t", garbage.URL, "--http-call", "hit=/x/{item}"}, exitUsage, "has no {slug}"},
		{[]string{"run", "ten-hits-one-view", "-t", garbage.URL, "--http-map", mapFile}, exitUsage, `unknown call "hot"`},
		{[]string{"run", "ten-hits-one-view", "-t", garbage.URL, "--http-map", mapFile + ".missing"}, exitUsage, "--http-map"},
		{[]string{"run", "ten-hits-one-view", "-t", garbage.URL, "--http-header", "no colon"}, exitUsage, "want 'Name: value'"},
		{[]string{"run", "ten-hits-one-view", "-t", garbage.URL, "--http-header", "Bad Name: x"}, exitUsage, `header name "Bad Name"`},
		{[]string{"run", "ten-hits-one-view", "-t", garbage.URL, "--http-call", "hit=/a/{slug}", "--http-call", "get=/b/{slug}", "--http-call", "hit=/c/{slug}"}, exitUsage,
			`--http-call maps hit twice ("hit=/a/{slug}" and "hit=/c/{slug}"); give each call once`},
	}
	for _, tt := range tests {
		code, stdout, stderr := execute(context.Background(), tt.args...)
		lines := strings.Split(strings.TrimRight(stderr, "\n"), "\n")
		if code != tt.want || len(lines) != 1 || !strings.Contains(stderr, tt.says) {
			t.Errorf("racelab %s: exit %d, stderr %q; want exit %d and one line saying %q",
				strings.Join(tt.args, " "), code, stderr, tt.want, tt.says)
		}
		if tt.want == exitFailure && !strings.Contains(stdout, "error") {
			t.Errorf("racelab %s: the report does not show the error:\n%s", strings.Join(tt.args, " "), stdout)
		}
	}
}

// TestHTTPFlagsNeedAnHTTPTarget: an http flag on a run without an http
// target would do nothing; it is a usage error naming the flags, never
// silently ignored. The story's default line-up has no http target.
func TestHTTPFlagsNeedAnHTTPTarget(t *testing.T) {
	tests := []struct {
		args []string
		says string
	}{
		{[]string{"--sync", "h2"}, "racelab: --sync applies to http targets only, and this run has none (add -t http://HOST:PORT)\n"},
		{[]string{"--sync", "auto"}, "--sync applies to http targets only"},
		{[]string{"--http-call", "hit=/x/{slug}"}, "--http-call applies to http targets only"},
		{[]string{"--http-map", "map.json"}, "--http-map applies to http targets only"},
		{[]string{"--http-header", "X-Key: 1", "--http-insecure"}, "--http-header and --http-insecure apply to http targets only"},
		{[]string{"--sync", "none", "--http-call", "hit=/x/{slug}", "--http-header", "X: 1"}, "--sync, --http-call and --http-header apply to http targets only"},
		{[]string{"-t", "kv", "-t", "sqlite", "--sync", "h2"}, "--sync applies to http targets only"},
		{[]string{"-t", "actor", "--http-insecure"}, "--http-insecure applies to http targets only"},
	}
	for _, tt := range tests {
		args := append([]string{"run", "ten-hits-one-view"}, tt.args...)
		code, stdout, stderr := execute(context.Background(), args...)
		if code != exitUsage || strings.Count(stderr, "\n") != 1 || !strings.Contains(stderr, tt.says) || stdout != "" {
			t.Errorf("racelab %s: exit %d, stdout %q, stderr %q; want exit %d and one line saying %q",
				strings.Join(args, " "), code, stdout, stderr, exitUsage, tt.says)
		}
	}
}

// TestHTTPFlagsOnAMixedRun: with an http target among others, the http
// flags are taken (and go to the http target only).
func TestHTTPFlagsOnAMixedRun(t *testing.T) {
	srv := httptest.NewServer(server.New(openStore(t, "actor")))
	defer srv.Close()
	code, stdout, stderr := execute(context.Background(), "run", "ten-hits-one-view", "-t", "kv", "-t", srv.URL, "--sync", "lastbyte", "--http-header", "X-Team: a")
	if code != exitOK {
		t.Errorf("exit %d, stderr %q; want 0\n%s", code, stderr, stdout)
	}
}

// TestHTTPWarmUpObeysTimeout: against a service that accepts connections
// and never answers, the run gives up after --timeout in every sync mode
// (exit 1, the cause in the report), not after a fixed limit of its own.
func TestHTTPWarmUpObeysTimeout(t *testing.T) {
	addr := storetest.SilentListener(t)
	for _, mode := range []string{"auto", "h2", "lastbyte", "none"} {
		t.Run(mode, func(t *testing.T) {
			start := time.Now()
			code, stdout, stderr := execute(context.Background(), "run", "ten-hits-one-view", "-t", "http://"+addr, "--sync", mode, "--timeout", "500ms", "-n", "20")
			took := time.Since(start)
			if code != exitFailure || !strings.Contains(stdout, "no answer within 500ms") || !strings.Contains(stderr, "could not run http://"+addr) {
				t.Errorf("exit %d, stderr %q; want exit 1 and the report saying no answer within 500ms:\n%s", code, stderr, stdout)
			}
			if took > 1500*time.Millisecond {
				t.Errorf("the run took %s; want --timeout 500ms, within a second", took)
			}
			t.Logf("gave up after %s", took.Round(time.Millisecond))
		})
	}
}

// TestHTTPWarmUpEndsOnInterrupt: Ctrl-C during the warm-up of a silent
// service ends the run at once, whatever --timeout says (a minute here;
// the bound is loose for loaded CI machines running -race).
func TestHTTPWarmUpEndsOnInterrupt(t *testing.T) {
	addr := storetest.SilentListener(t)
	ctx, cancel := context.WithCancel(context.Background())
	time.AfterFunc(300*time.Millisecond, cancel)
	start := time.Now()
	code, _, stderr := execute(ctx, "run", "ten-hits-one-view", "-t", "http://"+addr, "--timeout", "1m")
	if took := time.Since(start); took > 3*time.Second {
		t.Errorf("the run took %s, %s after the interrupt", took, took-300*time.Millisecond)
	}
	if code == exitOK || code == exitUsage {
		t.Errorf("exit %d (%q); want the run interrupted or failed", code, stderr)
	}
}

// openStore opens a catalog store for a test server, closed at cleanup.
func openStore(t *testing.T, spec string) any {
	t.Helper()
	tg, err := targets.Open(context.Background(), spec)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { tg.Close() })
	return tg.Store
}
