package httpapi_test

import (
	"context"
	"errors"
	"net/http"
	"slices"
	"strings"
	"testing"

	"github.com/racelab/racelab/scenarios/results"
	"github.com/racelab/racelab/targets/httpapi"
	"github.com/racelab/racelab/targets/httpapi/server"
	"github.com/racelab/racelab/targets/story"
)

// serveBug is serve with a teaching bug.
func serveBug(t *testing.T, bug server.Bug) string {
	t.Helper()
	return serveHandler(t, server.New(open(t, "actor").Store, server.WithBug(bug)))
}

// hits counts n views of each key over c, one after another.
func hits(t *testing.T, c *httpapi.Client, keys []string, n int) {
	t.Helper()
	for _, k := range keys {
		for range n {
			if _, err := c.Hit(context.Background(), k); err != nil {
				t.Fatal(err)
			}
		}
	}
}

// Keys of every alphabet round-trip through the contract server: the batch
// read answers what each single read does, reserved characters included.
// With the double-decode bug, single reads stay right and the batch read
// answers 0 for every key a second decoding changes.
func TestViewsManyRoundTrips(t *testing.T) {
	fixed := serveHandler(t, server.New(open(t, "actor").Store))
	buggy := serveBug(t, server.BugDoubleDecode)
	for _, chars := range []results.KeyChars{results.KeyASCII, results.KeyUnicode, results.KeyPercent} {
		keys := []string{chars.Key("slug", "a"), chars.Key("slug", "b"), chars.Key("slug", "c")}
		for _, tt := range []struct {
			name    string
			base    string
			wantBug bool // the batch read answers 0 where single reads count
		}{
			{"fixed", fixed, false},
			{"double-decode", buggy, chars != results.KeyASCII},
		} {
			t.Run(string(chars)+"/"+tt.name, func(t *testing.T) {
				c := client(t, tt.base, httpapi.Config{})
				hits(t, c, keys[:2], 3) // the third key has no views
				single := make([]int64, len(keys))
				for i, k := range keys {
					n, err := c.Views(context.Background(), k)
					if err != nil {
						t.Fatal(err)
					}
					single[i] = n
				}
				if want := []int64{3, 3, 0}; !slices.Equal(single, want) {
					t.Fatalf("single reads %v, want %v", single, want)
				}
				batch, err := c.ViewsMany(context.Background(), keys)
				if err != nil {
					t.Fatal(err)
				}
				want := single
				if tt.wantBug {
					want = []int64{0, 0, 0}
				}
				if !slices.Equal(batch, want) {
					t.Errorf("batch read %v, want %v (keys %q)", batch, want, keys)
				}
			})
		}
	}
}

// A service without a batch read answers 404 to it, and a mapped service
// whose single read is elsewhere has none unless it maps get-many: either
// way ViewsMany says story.ErrNoBatch, which skips the check.
func TestViewsManyNotOffered(t *testing.T) {
	inner := server.New(open(t, "actor").Store)
	noBatch := serveHandler(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/get" {
			http.NotFound(w, r)
			return
		}
		inner.ServeHTTP(w, r)
	}))
	c := client(t, noBatch, httpapi.Config{})
	if _, err := c.ViewsMany(context.Background(), []string{"a"}); !errors.Is(err, story.ErrNoBatch) {
		t.Errorf("404: ViewsMany error %v, want ErrNoBatch", err)
	}
	mapped := client(t, noBatch, httpapi.Config{Mapping: httpapi.Mapping{httpapi.CallGet: {Path: "/views/{slug}"}}})
	if _, err := mapped.ViewsMany(context.Background(), []string{"a"}); !errors.Is(err, story.ErrNoBatch) || !strings.Contains(err.Error(), "not mapped") {
		t.Errorf("get remapped: ViewsMany error %v, want ErrNoBatch, not mapped", err)
	}
}

// A mapped batch read names where each slug's count is with {slug}; a slug
// holding a dot stays one name.
func TestViewsManyMapped(t *testing.T) {
	base := serveHandler(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != "/api/counts" {
			http.NotFound(w, r)
			return
		}
		slugs := strings.Split(r.URL.Query().Get("ids"), ",")
		w.Header().Set("Content-Type", "application/json")
		body := `{"data":{`
		for i, s := range slugs {
			if i > 0 {
				body += ","
			}
			body += `"` + s + `":{"n":` + map[string]string{"a.b": "4", "c": "7"}[s] + `}`
		}
		_, _ = w.Write([]byte(body + `}}`))
	}))
	_, route, err := httpapi.ParseCall("get-many=GET /api/counts?ids={slugs} field=data.{slug}.n")
	if err != nil {
		t.Fatal(err)
	}
	c := client(t, base, httpapi.Config{Mapping: httpapi.Mapping{httpapi.CallGetMany: route}})
	got, err := c.ViewsMany(context.Background(), []string{"a.b", "c"})
	if err != nil {
		t.Fatal(err)
	}
	if want := []int64{4, 7}; !slices.Equal(got, want) {
		t.Errorf("ViewsMany = %v, want %v", got, want)
	}
}

func TestParseGetMany(t *testing.T) {
	tests := []struct {
		in, wantErr string
	}{
		{"get-many=GET /get?slugs={slugs} field={slug}", ""},
		{"get-many=/views?ids={slugs} field=counts.{slug}", ""},
	}
	for _, tt := range tests {
		call, r, err := httpapi.ParseCall(tt.in)
		if err != nil {
			t.Errorf("ParseCall(%q) = %v", tt.in, err)
			continue
		}
		m := httpapi.Contract().Merge(httpapi.Mapping{call: r})
		if err := m.Validate(); err != nil {
			t.Errorf("%q: Validate = %v", tt.in, err)
		}
	}
	bad := httpapi.Contract().Merge(httpapi.Mapping{httpapi.CallGetMany: {Field: "count"}})
	if err := bad.Validate(); err == nil || !strings.Contains(err.Error(), `field "count" has no {slug}`) {
		t.Errorf("field without {slug}: Validate = %v", err)
	}
	if _, err := server.ParseBug("off-by-one"); err == nil || !strings.Contains(err.Error(), `bug "off-by-one"; want one of double-decode`) {
		t.Errorf("ParseBug(off-by-one) = %v", err)
	}
}
