package load

import (
	"context"
	"net/http"
	"strings"
	"sync/atomic"
	"testing"
)

// TestLoadReadsBackOnlyTheKeysItSent: a hundred requests over a million
// keys read back at most a hundred keys, each judged, not the million.
func TestLoadReadsBackOnlyTheKeysItSent(t *testing.T) {
	var reads, hits atomic.Int64
	base := serveActor(t, func(h http.Handler) http.HandlerFunc {
		return func(w http.ResponseWriter, r *http.Request) {
			switch {
			case !strings.Contains(r.URL.Path, "-load-"): // readying the connections
			case r.Method == http.MethodGet:
				reads.Add(1)
			default:
				hits.Add(1)
			}
			h.ServeHTTP(w, r)
		}
	})
	p := hitsOverHTTP(t, base)
	p.Concurrency, p.Requests, p.Keys, p.Seed = 4, 100, MaxLoadKeys, 3
	res, err := Load(context.Background(), p)
	if err != nil {
		t.Fatal(err)
	}
	tg := res.Targets[0]
	if tg.Error != "" || hits.Load() != 100 || tg.Counted != 100 {
		t.Fatalf("error %q, %d hits, %d counted; want 100", tg.Error, hits.Load(), tg.Counted)
	}
	if n := reads.Load(); n > 100 || n != int64(tg.Keys.Trials) || n < 90 {
		t.Errorf("%d keys read back and %d judged of a million, for 100 requests; want the keys sent (about 100), each once", n, tg.Keys.Trials)
	}
}

// TestLoadBounds: each bound of a load's counts takes its limit and
// refuses one past it.
func TestLoadBounds(t *testing.T) {
	hits := hitsOverHTTP(t, "http://127.0.0.1:1").Scenario
	for _, tc := range []struct {
		field string
		at    LoadPlan
		past  LoadPlan
	}{
		{"Requests", LoadPlan{Requests: MaxLoadRequests}, LoadPlan{Requests: MaxLoadRequests + 1}},
		{"Duration", LoadPlan{Duration: MaxLoadDuration}, LoadPlan{Duration: MaxLoadDuration + 1}},
		{"Keys", LoadPlan{Keys: MaxLoadKeys}, LoadPlan{Keys: MaxLoadKeys + 1}},
		{"Concurrency", LoadPlan{Concurrency: MaxConcurrency}, LoadPlan{Concurrency: MaxConcurrency + 1}},
	} {
		tc.at.Scenario, tc.past.Scenario = hits, hits
		if errs := tc.at.Validate(); len(errs) != 0 {
			t.Errorf("%s at its limit: %v", tc.field, errs)
		}
		errs := tc.past.Validate()
		if len(errs) != 1 || !strings.HasPrefix(errs[0].Error(), tc.field+" ") {
			t.Errorf("%s past its limit: %v", tc.field, errs)
		}
	}
}
