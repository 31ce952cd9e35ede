package main

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/racelab/racelab/targets/httpapi/server"
)

// TestExplainUsage: explain takes its flags as strictly as run does. Each
// mistake is one line and exit 2, with nothing on stdout: no "fix" told
// under a store that breaks, no default put in place of an explicit -n 0.
func TestExplainUsage(t *testing.T) {
	tests := []struct {
		args []string
		says string
	}{
		{[]string{"ten-hits-one-view", "--fixed", "kv"},
			"--fixed kv breaks the rule by design, so it has no fix to show; want a target that holds it: actor, sqlite, redis, redis:watch, postgres, "},
		{[]string{"ten-hits-one-view", "--fixed", "kv"}, " or your service's URL\n"},
		{[]string{"six-become-four", "--fixed", "actor:await-fetch"}, "--fixed actor:await-fetch breaks the rule by design"},
		{[]string{"five-checkouts", "--fixed", "sqlite:naive"}, "--fixed sqlite:naive breaks the rule by design"},
		{[]string{"ten-hits-one-view", "--target", "sqlite"},
			"--target sqlite holds the rule, so it has no race to replay; want a target that breaks it: kv, actor:await-fetch, sqlite:naive, redis:naive or postgres:naive"},
		{[]string{"ten-hits-one-view", "-t", "actor"}, "--target actor holds the rule"},
		{[]string{"ten-hits-one-view", "-n", "0"}, "--requests 0: want a whole number from 1 to 10000"},
		{[]string{"ten-hits-one-view", "--requests", "-3"}, "--requests -3: want a whole number from 1 to 10000"},
		{[]string{"ten-hits-one-view", "-n", "10001"}, "--requests 10001: want a whole number from 1 to 10000"},
		{[]string{"ten-hits-one-view", "--fixed", "sqlit"}, `unknown target "sqlit"`},
		{[]string{"ten-hits-one-view", "--seed", "x"}, `--seed "x"`},
	}
	for _, tt := range tests {
		args := append([]string{"explain"}, tt.args...)
		code, stdout, stderr := execute(context.Background(), args...)
		if code != exitUsage || strings.Count(stderr, "\n") != 1 || !strings.Contains(stderr, tt.says) || stdout != "" {
			t.Errorf("racelab %s: exit %d, stdout %q, stderr %q; want exit %d and one line saying %q",
				strings.Join(args, " "), code, stdout, stderr, exitUsage, tt.says)
		}
	}
}

// TestExplainFlagsTaken: the values the usage checks leave through are the
// ones the replay uses.
func TestExplainFlagsTaken(t *testing.T) {
	code, stdout, stderr := execute(context.Background(), "explain", "ten-hits-one-view", "-n", "3", "-t", "actor:await-fetch", "--fixed", "sqlite")
	if code != exitOK {
		t.Fatalf("exit %d, stderr %q", code, stderr)
	}
	for _, want := range []string{"The race, replayed on actor:await-fetch (3 requests at once, seed 7)", "The same burst on sqlite", "How the fix works"} {
		if !strings.Contains(stdout, want) {
			t.Errorf("the explanation does not say %q:\n%s", want, stdout)
		}
	}
}

// TestExplainFixedServiceThatBreaks: a service given as --fixed by URL is
// expected to hold; when its replay breaks the rule, explain says so (exit
// 3, one line) and tells no fix.
func TestExplainFixedServiceThatBreaks(t *testing.T) {
	var hits atomic.Int64
	mux := http.NewServeMux()
	mux.HandleFunc("GET /{$}", func(http.ResponseWriter, *http.Request) {})
	mux.HandleFunc("POST /hit/{slug}", func(w http.ResponseWriter, r *http.Request) {
		fmt.Fprintf(w, `{"slug":%q,"views":%d}`, r.PathValue("slug"), hits.Add(1))
	})
	mux.HandleFunc("GET /get/{slug}", func(w http.ResponseWriter, r *http.Request) {
		fmt.Fprintf(w, `{"slug":%q,"views":1}`, r.PathValue("slug")) // every update but one lost
	})
	srv := httptest.NewServer(mux)
	defer srv.Close()
	code, stdout, stderr := execute(context.Background(), "explain", "ten-hits-one-view", "--fixed", srv.URL)
	want := "racelab: --fixed " + srv.URL + " broke the rule in the replay, so it shows no fix: " + srv.URL + ": 10 hits answered, 1 view stored: 9 updates lost\n"
	if code != exitRuleBroken || stderr != want || strings.Contains(stdout, "How the fix works") {
		t.Errorf("exit %d, stderr %q, stdout:\n%s\nwant exit %d, stderr %q and no fix told", code, stderr, stdout, exitRuleBroken, want)
	}
}

// TestExplainStep checks that --step on a terminal shows one step, waits
// for Enter, and shows the next; that the steps joined are the whole
// text; and that piped, --step prints everything at once.
func TestExplainStep(t *testing.T) {
	args := []string{"explain", "ten-hits-one-view", "--seed", "7", "--step"}
	piped, whole, _ := testStreams("")
	if code := Main(context.Background(), args, piped, testCatalog); code != exitOK {
		t.Fatalf("piped: exit %d", code)
	}
	s, out, errOut := testStreams(strings.Repeat("\n", 30))
	s.InIsTTY, s.OutIsTTY, s.ErrIsTTY = true, true, true
	if code := Main(context.Background(), args, s, testCatalog); code != exitOK {
		t.Fatalf("exit %d: %s", code, errOut.String())
	}
	if out.String() != whole.String() {
		t.Errorf("the steps joined differ from the whole text")
	}
	// The story, two replays of 10 requests shown one request at a time,
	// and the fix: 22 steps, 21 waits.
	if got := strings.Count(errOut.String(), "press Enter"); got != 21 {
		t.Errorf("%d prompts, want 21:\n%s", got, errOut.String())
	}
	if !strings.Contains(errOut.String(), "-- step 1 of 22: press Enter for the next --") {
		t.Errorf("stderr lacks the first prompt:\n%s", errOut.String())
	}
	if strings.Contains(whole.String(), "press Enter") {
		t.Errorf("piped output asks for Enter")
	}
	// With stdin on a terminal but the text or the prompt going elsewhere
	// (a file, a pipe), nobody reads a prompt: the whole text, none asked.
	for _, tty := range [][3]bool{{true, false, true}, {true, true, false}, {false, true, true}} {
		s, out, errOut := testStreams(strings.Repeat("\n", 30))
		s.InIsTTY, s.OutIsTTY, s.ErrIsTTY = tty[0], tty[1], tty[2]
		if code := Main(context.Background(), args, s, testCatalog); code != exitOK || out.String() != whole.String() || errOut.Len() != 0 {
			t.Errorf("terminals (in, out, err) %v: exit %d, whole text %v, stderr %q; want the text and no prompt",
				tty, code, out.String() == whole.String(), errOut.String())
		}
	}
}

// TestExplainHTML: -o html writes the page to stdout, -o html=FILE the same
// bytes to a file beside the text on stdout, and --step on a terminal
// writes the file before it starts waiting.
func TestExplainHTML(t *testing.T) {
	ctx := context.Background()
	args := []string{"explain", "ten-hits-one-view", "--seed", "7"}
	text := executeWant(t, ctx, exitOK, args...)
	page := executeWant(t, ctx, exitOK, append(args, "-o", "html")...)
	if !strings.HasPrefix(page, "<!DOCTYPE html>") || !strings.Contains(page, `class="m-erased"`) {
		t.Fatalf("-o html is not the page with its erasures:\n%.400s", page)
	}
	for n := 1; n <= 10; n++ {
		if !strings.Contains(page, fmt.Sprintf(`class="muted">#%d</text>`, n)) {
			t.Errorf("the page has no lane #%d", n)
		}
	}
	if again := executeWant(t, ctx, exitOK, append(args, "-o", "html")...); again != page {
		t.Error("the same seed gave a different page")
	}
	file := filepath.Join(t.TempDir(), "explain.html")
	if out := executeWant(t, ctx, exitOK, append(args, "-o", "text", "-o", "html="+file)...); out != text {
		t.Errorf("with html=FILE, stdout is not the text")
	}
	if got, err := os.ReadFile(file); err != nil || string(got) != page {
		t.Errorf("html=FILE holds %d bytes (%v), not the page's %d", len(got), err, len(page))
	}
	// Only the text on a terminal waits; the file is written first.
	stepFile := filepath.Join(t.TempDir(), "step.html")
	s, out, errOut := testStreams(strings.Repeat("\n", 30))
	s.InIsTTY, s.OutIsTTY, s.ErrIsTTY = true, true, true
	if code := Main(ctx, append(args, "--step", "-o", "text", "-o", "html="+stepFile), s, testCatalog); code != exitOK {
		t.Fatalf("--step -o html=FILE: exit %d: %s", code, errOut.String())
	}
	if got, _ := os.ReadFile(stepFile); string(got) != page || out.String() != text || !strings.Contains(errOut.String(), "press Enter") {
		t.Errorf("--step with html=FILE: file %d bytes, stdout is the text: %v, prompted: %v",
			len(got), out.String() == text, strings.Contains(errOut.String(), "press Enter"))
	}
	code, _, stderr := execute(ctx, append(args, "-o", "pdf")...)
	if code != exitUsage || !strings.Contains(stderr, `unknown output format "pdf"; want text, html or json`) {
		t.Errorf("-o pdf: exit %d, stderr %q", code, stderr)
	}
}

// TestExplainMappedService: explain replays the race on a service with an
// API of its own, mapped with --http-call as a run maps it.
func TestExplainMappedService(t *testing.T) {
	contract := server.New(openStore(t, "kv"))
	// The service answers the contract under /api/v1/ only: unmapped, the
	// replay would find no route.
	srv := httptest.NewServer(http.StripPrefix("/api/v1", contract))
	defer srv.Close()
	ctx := context.Background()
	args := []string{"explain", "ten-hits-one-view", "-t", srv.URL, "--fixed", "actor"}
	if code, _, _ := execute(ctx, args...); code == exitOK {
		t.Fatal("unmapped, the service's own API answered the contract's routes")
	}
	out := executeWant(t, ctx, exitOK, append(args, "--http-call", "hit=POST /api/v1/hit/{slug}", "--http-call", "get=GET /api/v1/get/{slug}")...)
	for _, want := range []string{"The race, replayed on " + srv.URL, "The same burst on actor"} {
		if !strings.Contains(out, want) {
			t.Errorf("explanation lacks %q:\n%s", want, out)
		}
	}
}
