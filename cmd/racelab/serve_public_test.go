package main

import (
	"encoding/json"
	"regexp"
	"testing"

	"github.com/racelab/racelab/targets/httpapi/httpapitest"
)

// TestServePublicWithoutToken: --public without --token still guards
// writes, with a fresh token printed at start: a write without it is
// refused 401, whatever its Host, and no write reaches the store; a read
// needs no token. Serving writes to anyone because no token was given is
// the bug this catches.
func TestServePublicWithoutToken(t *testing.T) {
	addr, stop := startServe(t, "--store", "actor", "--public")
	for _, tt := range []struct {
		method, path string
		status       int
	}{
		{"POST", "/hit/public-no-token", 401},
		{"POST", "/download/public-no-token", 401},
		{"GET", "/get/public-no-token", 200},
	} {
		a := httpapitest.Do(t, tt.method, "http://"+addr+tt.path, "")
		if a.Status != tt.status || !json.Valid(a.Body) {
			t.Errorf("--public, no --token: %s %s without a token = %d %s; want %d", tt.method, tt.path, a.Status, a.Body, tt.status)
		}
		if tt.method == "GET" && !regexp.MustCompile(`"views":\s*0\b`).Match(a.Body) {
			t.Errorf("GET %s = %s; want 0 views: a refused hit must not count", tt.path, a.Body)
		}
	}
	code, stderr := stop()
	if code != exitOK || !regexp.MustCompile(`writes need the token: curl -H 'Authorization: Bearer [A-Za-z0-9_-]{20,}'`).MatchString(stderr) {
		t.Errorf("serve --public: exit %d, stderr %q; want exit 0 and the fresh token printed", code, stderr)
	}
}
