package main

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
)

// TestExplainUntilBroken: a service whose race shows only in its third
// trial (every request of the third key is allowed) is replayed until a
// trial breaks: explain shows trial 3, in text and JSON; with fewer trials
// allowed it says none broke; one replay alone misses it; and the flags
// are checked.
func TestExplainUntilBroken(t *testing.T) {
	serve := func(breaksOn int) string {
		var mu sync.Mutex
		keys, n := map[string]int{}, map[string]int{}
		mux := http.NewServeMux()
		mux.HandleFunc("POST /claim/{key}", func(w http.ResponseWriter, r *http.Request) {
			k := r.PathValue("key")
			mu.Lock()
			if _, ok := keys[k]; !ok {
				keys[k] = len(keys) + 1
			}
			n[k]++
			ok := n[k] == 1 || keys[k] == breaksOn
			mu.Unlock()
			if !ok {
				w.WriteHeader(409)
			}
		})
		mux.HandleFunc("GET /claims/{key}", func(w http.ResponseWriter, r *http.Request) {
			mu.Lock()
			defer mu.Unlock()
			got := n[r.PathValue("key")]
			if keys[r.PathValue("key")] != breaksOn {
				got = min(got, 1)
			}
			_ = json.NewEncoder(w).Encode(map[string]int{"claims": got})
		})
		srv := httptest.NewServer(mux)
		t.Cleanup(srv.Close)
		return srv.URL
	}
	flaky, fixed := serve(3), serve(-1)
	file := claimRace(t, t.TempDir(), 3, "", "")
	ctx := context.Background()
	args := []string{"explain", file, "-t", "", "--fixed", fixed, "--seed", "7"}
	with := func(target string, more ...string) []string {
		a := append([]string{}, args...)
		a[3] = target
		return append(a, more...)
	}
	// The text wraps at a handout's width: read it as words.
	words := func(s string) string { return strings.Join(strings.Fields(s), " ") }
	out := words(executeWant(t, ctx, exitOK, with(flaky, "--until", "broken", "--max-trials", "5")...))
	if !strings.Contains(out, "seed 9): trial 3, the first of up to 5 that broke the rule") {
		t.Errorf("--until broken does not show trial 3:\n%s", out)
	}
	var e struct{ Replays []struct{ Heading string } }
	html := filepath.Join(t.TempDir(), "x.html")
	js := executeWant(t, ctx, exitOK, with(serve(3), "--until", "broken", "-o", "json", "-o", "html="+html)...)
	if b, err := os.ReadFile(html); err != nil || !strings.Contains(string(b), "trial 3, the first of up to 50 that broke the rule") {
		t.Errorf("-o html does not show trial 3: %v", err)
	}
	if err := json.Unmarshal([]byte(js), &e); err != nil || len(e.Replays) < 2 || !strings.Contains(e.Replays[0].Heading, "trial 3, the first of up to 50") {
		t.Errorf("-o json: %v, %+v", err, e.Replays)
	}
	out = words(executeWant(t, ctx, exitOK, with(serve(3), "--until", "broken", "--max-trials", "2")...))
	if !strings.Contains(out, "The race did not show on") || !strings.Contains(out, "in 2 trials (3 requests at once, seeds 7 to 8)") {
		t.Errorf("two trials that held do not say so:\n%s", out)
	}
	out = words(executeWant(t, ctx, exitOK, with(serve(3))...))
	if !strings.Contains(out, "The race did not show on") || strings.Contains(out, "that broke the rule") {
		t.Errorf("one replay of a race that shows in trial 3:\n%s", out)
	}
	for _, tc := range []struct {
		more []string
		says string
	}{
		{[]string{"--until", "held"}, "--until held: want --until broken"},
		{[]string{"--max-trials", "5"}, "--max-trials bounds --until broken; give --until broken too"},
		{[]string{"--until", "broken", "--max-trials", "0"}, "--max-trials 0: want a whole number from 1 to 1000"},
		{[]string{"--until", "broken", "--max-trials", "1001"}, "--max-trials 1001: want a whole number from 1 to 1000"},
	} {
		code, _, stderr := execute(ctx, with(flaky, tc.more...)...)
		if code != exitUsage || !strings.Contains(stderr, tc.says) {
			t.Errorf("%v: exit %d, %q; want %d and %q", tc.more, code, stderr, exitUsage, tc.says)
		}
	}
}

// claimRace writes claim.race.yaml in dir: requests requests claim a key,
// which one at most may; env is a line of the file's top (env:), header
// a line of the burst request's (headers:).
func claimRace(t *testing.T, dir string, requests int, env, header string) string {
	t.Helper()
	file := filepath.Join(dir, "claim.race.yaml")
	src := fmt.Sprintf(`race: claim-once
requests: %d
%sburst:
  - request: POST /claim/{{key}}
%s    allowed: status == 200
    refused: status == 409
readback:
  - request: GET /claims/{{key}}
    as: state
rule: allowed <= 1 && state.claims == allowed
`, requests, env, header)
	if err := os.WriteFile(file, []byte(src), 0o600); err != nil {
		t.Fatal(err)
	}
	return file
}
