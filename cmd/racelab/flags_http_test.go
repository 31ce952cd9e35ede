package main

import (
	"net/http"
	"os"
	"path/filepath"
	"reflect"
	"testing"

	"github.com/racelab/racelab/internal/readfile"
	"github.com/racelab/racelab/targets/httpapi"
)

// TestHTTPFlags turns flags into the client's settings.
func TestHTTPFlags(t *testing.T) {
	mapFile := filepath.Join(t.TempDir(), "map.json")
	if err := os.WriteFile(mapFile, []byte(`{"get": {"path": "/views/{slug}", "field": "total"}, "hit": {"field": "n"}}`), 0o600); err != nil {
		t.Fatal(err)
	}
	h := httpFlags{
		Sync:     "lastbyte",
		MapFile:  readfile.Named{Path: mapFile},
		Calls:    []string{"hit=PUT /v/{slug} field=total", "download=yes=201 no=403"},
		Headers:  []string{"Authorization: Bearer abc", "X-Team: a", "X-Team: b"},
		Insecure: true,
	}
	cfg, err := h.config()
	if err != nil {
		t.Fatal(err)
	}
	if cfg.Wire.Sync != httpapi.SyncLastByte || !cfg.Wire.Insecure {
		t.Errorf("sync %q insecure %t, want lastbyte true", cfg.Wire.Sync, cfg.Wire.Insecure)
	}
	wantHeader := http.Header{"Authorization": {"Bearer abc"}, "X-Team": {"a", "b"}}
	if !reflect.DeepEqual(cfg.Wire.Header, wantHeader) {
		t.Errorf("header %v, want %v", cfg.Wire.Header, wantHeader)
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
