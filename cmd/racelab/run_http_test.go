package main

import (
	"context"
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/racelab/racelab/targets/httpapi"
)

// TestHTTPExitCodes: a service answering outside the contract, or one that
// cannot be reached, is racelab failing to do its job (exit 1), never a
// verdict; a bad HTTP flag is a usage error (exit 2). Each is one line.
func TestHTTPExitCodes(t *testing.T) {
	garbage := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		fmt.Fprint(w, "<html>it works</html>")
	}))
	defer garbage.Close()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	closed := "http://" + ln.Addr().String()
	ln.Close()
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

// TestHTTPFlags turns flags into the client's settings.
func TestHTTPFlags(t *testing.T) {
	mapFile := filepath.Join(t.TempDir(), "map.json")
	if err := os.WriteFile(mapFile, []byte(`{"get": {"path": "/views/{slug}", "field": "total"}, "hit": {"field": "n"}}`), 0o600); err != nil {
		t.Fatal(err)
	}
	h := httpFlags{
		Sync:     "lastbyte",
		MapFile:  mapFile,
		Calls:    []string{"hit=PUT /v/{slug} field=total", "download=yes=201 no=403"},
		Headers:  []string{"Authorization: Bearer abc", "X-Team: a", "X-Team: b"},
		Insecure: true,
	}
	cfg, err := h.config()
	if err != nil {
		t.Fatal(err)
	}
	if cfg.Sync != httpapi.SyncLastByte || !cfg.Insecure {
		t.Errorf("sync %q insecure %t, want lastbyte true", cfg.Sync, cfg.Insecure)
	}
	wantHeader := http.Header{"Authorization": {"Bearer abc"}, "X-Team": {"a", "b"}}
	if !reflect.DeepEqual(cfg.Header, wantHeader) {
		t.Errorf("header %v, want %v", cfg.Header, wantHeader)
	}
	m := cfg.Mapping
	if got := m[httpapi.CallHit]; got.Method != "PUT" || got.Path != "/v/{slug}" || got.Field != "total" {
		t.Errorf("hit %+v: the flag should override the file", got)
	}
	if got := m[httpapi.CallGet]; got.Path != "/views/{slug}" || got.Field != "total" || got.Method != "GET" {
		t.Errorf("get %+v: want the file's path and field and the contract's method", got)
	}
	if got := m[httpapi.CallDownload]; !reflect.DeepEqual(got.Yes, []int{201}) || !reflect.DeepEqual(got.No, []int{403}) || got.Path != "/download/{visitor}" {
		t.Errorf("download %+v: want the flag's statuses on the contract's path", got)
	}
}
