package main

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
)

// TestSecretsNeverShow: a race file that sends a bearer token from the
// environment, to a service that echoes it in its answers and sets a
// session cookie, shows neither in the table, the JSON, JUnit and
// Markdown reports, nor in explain's text and HTML: each shows … instead.
func TestSecretsNeverShow(t *testing.T) {
	const token, session = "Bearer tok-9f8e7d6c5b4a", "sess-0a1b2c3d4e5f"
	t.Setenv("API_TOKEN", token)
	claims := func(naive bool) string {
		var mu sync.Mutex
		n := map[string]int{}
		mux := http.NewServeMux()
		mux.HandleFunc("POST /claim/{key}", func(w http.ResponseWriter, r *http.Request) {
			mu.Lock()
			n[r.PathValue("key")]++
			first := n[r.PathValue("key")] == 1
			mu.Unlock()
			http.SetCookie(w, &http.Cookie{Name: "sid", Value: session})
			w.Header().Set("Content-Type", "application/json")
			if !naive && !first {
				w.WriteHeader(409)
			}
			_ = json.NewEncoder(w).Encode(map[string]string{"seen": r.Header.Get("Authorization")})
		})
		mux.HandleFunc("GET /claims/{key}", func(w http.ResponseWriter, r *http.Request) {
			mu.Lock()
			defer mu.Unlock()
			got := n[r.PathValue("key")]
			if !naive {
				got = min(got, 1)
			}
			_ = json.NewEncoder(w).Encode(map[string]int{"claims": got})
		})
		srv := httptest.NewServer(mux)
		t.Cleanup(srv.Close)
		return srv.URL
	}
	naive, fixed := claims(true), claims(false)
	dir := t.TempDir()
	file := claimRace(t, dir, 4, "env: [API_TOKEN]\n", "    headers: {Authorization: \"{{env.API_TOKEN}}\"}\n")
	paths := map[string]string{}
	var args []string
	for _, f := range []string{"json", "junit", "markdown"} {
		paths[f] = filepath.Join(dir, "r."+f)
		args = append(args, "-o", f+"="+paths[f])
	}
	ctx := context.Background()
	outputs := map[string]string{}
	outputs["table"] = executeWant(t, ctx, exitOK, append([]string{"run", file, "-t", "naive=" + naive, "-t", "fixed=" + fixed,
		"--expect", "naive=breaks", "--trials", "2", "--timeline"}, args...)...)
	for f, p := range paths {
		b, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		outputs[f] = string(b)
	}
	html := filepath.Join(dir, "x.html")
	outputs["explain"] = executeWant(t, ctx, exitOK, "explain", file, "-t", naive, "--fixed", fixed, "-o", "text", "-o", "html="+html)
	b, err := os.ReadFile(html)
	if err != nil {
		t.Fatal(err)
	}
	outputs["explain html"] = string(b)
	for name, out := range outputs {
		if strings.Contains(out, "tok-9f8e7d6c5b4a") || strings.Contains(out, session) {
			t.Errorf("%s shows a secret:\n%s", name, out)
		}
	}
	shown := executeWant(t, ctx, exitOK, "run", file, "-t", "naive="+naive, "--expect", "naive=breaks", "--trials", "1", "--show-secrets", "-o", "json")
	if !strings.Contains(shown, "tok-9f8e7d6c5b4a") || !strings.Contains(shown, session) {
		t.Errorf("--show-secrets hides them:\n%.2000s", shown)
	}
	if !strings.Contains(outputs["json"], `\"seen\":\"…\"`) || !strings.Contains(outputs["json"], `"set-cookie": "…"`) {
		t.Errorf("the JSON does not keep the answers with … for the secrets:\n%.3000s", outputs["json"])
	}
}

// TestEveryPlayerShowsSecretsOnAsk: every command that plays a race file
// takes the race file's flags, --show-secrets among them, with one wording.
func TestEveryPlayerShowsSecretsOnAsk(t *testing.T) {
	for _, cmd := range []string{"run", "load", "verify", "explain"} {
		help := executeWant(t, context.Background(), exitOK, cmd, "--help")
		for _, flag := range []string{"--show-secrets", "--db", "--allow-exec"} {
			if !strings.Contains(help, flag) {
				t.Errorf("racelab %s --help lists no %s", cmd, flag)
			}
		}
	}
}
