package main

import (
	"context"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
)

// TestSavedRaceResultJudgedAnywhere: a result records its race file
// relative to itself, and the env: values but the secret ones; moved
// together elsewhere, the two are judged again from another folder, with
// the secret from the environment. A race file that is gone asks for
// --race-file, exit 2, and --race-file finds it.
func TestSavedRaceResultJudgedAnywhere(t *testing.T) {
	var mu sync.Mutex
	counts := map[string]int{}
	runs := map[string]bool{}
	mux := http.NewServeMux()
	mux.HandleFunc("POST /hits/{key}", func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		counts[r.PathValue("key")]++
		runs[r.Header.Get("X-Run")+" "+r.Header.Get("Authorization")] = true
		mu.Unlock()
		w.Header().Set("Content-Type", "application/json")
		_, _ = w.Write([]byte(`{"ok":true}`))
	})
	mux.HandleFunc("GET /hits/{key}", func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		n := counts[r.PathValue("key")]
		mu.Unlock()
		w.Header().Set("Content-Type", "application/json")
		_, _ = w.Write([]byte(`{"views":` + strconv.Itoa(n) + `}`))
	})
	srv := httptest.NewServer(mux)
	defer srv.Close()

	a, b := t.TempDir(), t.TempDir()
	write := func(path, text string) {
		t.Helper()
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	const race = `race: hits-env
requests: 4
env: [RUN, {name: TOKEN, secret: true}]
burst:
  - request: POST /hits/{{key}}
    headers: {X-Run: "{{env.RUN}}", Authorization: "Bearer {{env.TOKEN}}"}
readback:
  - request: GET /hits/{{key}}
    as: hits
    headers: {Authorization: "Bearer {{env.TOKEN}}"}
counted: hits.views
rule: hits.views == allowed
`
	write(filepath.Join(a, "races", "hits.race.yaml"), race)
	if err := os.Mkdir(filepath.Join(a, "out"), 0o755); err != nil {
		t.Fatal(err)
	}
	t.Setenv("RUN", "r1")
	t.Setenv("TOKEN", "s3cret")
	ctx := context.Background()
	executeWant(t, ctx, exitOK, "run", filepath.Join(a, "races", "hits.race.yaml"), "-t", "svc="+srv.URL, "--trials", "2",
		"-o", "json="+filepath.Join(a, "out", "r.json"), "-q")
	// A shard's part records its race file from its folder, as a result does.
	executeWant(t, ctx, exitOK, "run", filepath.Join(a, "races", "hits.race.yaml"), "-t", "svc="+srv.URL, "--trials", "2",
		"--shard", "0/1", "--run-id", "moved", "--shard-dir", filepath.Join(a, "out", "parts"), "-q")
	part, err := os.ReadFile(filepath.Join(a, "out", "parts", "shard-0-of-1.json"))
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(part), `"rel": "../../races/hits.race.yaml"`) {
		t.Errorf("the part does not record its race file from its folder:\n%.2000s", part)
	}
	saved, err := os.ReadFile(filepath.Join(a, "out", "r.json"))
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{`"rel": "../races/hits.race.yaml"`, `"RUN": "r1"`, `"secret": [`} {
		if !strings.Contains(string(saved), want) {
			t.Errorf("the result does not say %s:\n%.2000s", want, saved)
		}
	}
	if strings.Contains(string(saved), "s3cret") {
		t.Error("the result records the secret TOKEN's value")
	}
	if !runs["r1 Bearer s3cret"] {
		t.Errorf("the service saw %v; want X-Run r1 with the token", runs)
	}

	// Moved together; the run's folder is gone, RUN is not set.
	write(filepath.Join(b, "out", "r.json"), string(saved))
	write(filepath.Join(b, "races", "hits.race.yaml"), race)
	if err := os.RemoveAll(a); err != nil {
		t.Fatal(err)
	}
	write(filepath.Join(b, "out", "parts", "shard-0-of-1.json"), string(part))
	os.Unsetenv("RUN")
	out := executeWant(t, ctx, exitOK, "report", filepath.Join(b, "out", "r.json"), "-o", "table")
	if !strings.Contains(out, "holds in 2/2") {
		t.Errorf("report from elsewhere says:\n%s\nwant holds in 2/2", out)
	}
	out = executeWant(t, ctx, exitOK, "verify", filepath.Join(b, "out", "parts"), "-t", "svc="+srv.URL, "-o", "table")
	if !strings.Contains(out, "holds in 2/2") {
		t.Errorf("verify from elsewhere says:\n%s\nwant holds in 2/2", out)
	}

	os.Unsetenv("TOKEN")
	_, _, stderr := execute(ctx, "report", filepath.Join(b, "out", "r.json"))
	if want := "env: TOKEN is marked secret, so the result does not record it; set it in the environment"; !strings.Contains(stderr, want) {
		t.Errorf("without TOKEN: %q; want %q", stderr, want)
	}
	executeWant(t, ctx, exitUsage, "report", filepath.Join(b, "out", "r.json"))
	t.Setenv("TOKEN", "s3cret")

	moved := filepath.Join(b, "elsewhere.race.yaml")
	if err := os.Rename(filepath.Join(b, "races", "hits.race.yaml"), moved); err != nil {
		t.Fatal(err)
	}
	_, _, stderr = execute(ctx, "report", filepath.Join(b, "out", "r.json"))
	want := "cannot judge again: race file " + filepath.Join(a, "races", "hits.race.yaml") + " not found (give --race-file)"
	if !strings.Contains(stderr, want) {
		t.Errorf("race file gone: %q; want %q", stderr, want)
	}
	executeWant(t, ctx, exitUsage, "report", filepath.Join(b, "out", "r.json"))
	executeWant(t, ctx, exitOK, "report", filepath.Join(b, "out", "r.json"), "--race-file", moved)
}
