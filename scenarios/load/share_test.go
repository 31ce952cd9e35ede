package load

import (
	"fmt"
	"path/filepath"
	"testing"
	"time"

	"github.com/racelab/racelab/scenarios/engine"
	"github.com/racelab/racelab/scenarios/pace"
	"github.com/racelab/racelab/scenarios/scenariostest"
)

// Every request of a burst is played by exactly one shard, and shares
// differ by one at most: N split as evenly as possible, exactly N in all.
func TestSpanSplitsEveryBurstExactly(t *testing.T) {
	for n := 1; n <= 60; n++ {
		for of := 1; of <= n; of++ {
			next, small, large := 0, n, 0
			var total int64
			for i := range of {
				s := engine.Sharding{Index: i, Of: of}
				lo, hi := s.Span(n)
				if lo != next {
					t.Fatalf("n=%d of=%d: shard %d starts at %d, want %d", n, of, i, lo, next)
				}
				next = hi
				small, large = min(small, hi-lo), max(large, hi-lo)
				total += partOf(int64(n), i, of)
			}
			if next != n || large-small > 1 || total != int64(n) {
				t.Fatalf("n=%d of=%d: shards end at %d, shares %d..%d, parts sum to %d", n, of, next, small, large, total)
			}
		}
	}
}

func TestLoadShareSplitsTheLoad(t *testing.T) {
	sched := pace.Schedule{Start: 100, Stages: []pace.Stage{{Duration: time.Second, Target: 1000}}, Spacing: pace.Even}
	path := filepath.Join(t.TempDir(), "db.sqlite")
	hits := scenariostest.Lookup(t, "ten-hits-one-view")
	p := LoadPlan{Scenario: hits, Targeting: engine.Targeting{Targets: []string{"sqlite?path=" + path}}, Schedule: &sched, MaxInFlight: 10, Requests: 10}
	plan := engine.Plan{Scenario: hits, Targets: p.Targets}
	rs, err := plan.Resolve()
	if err != nil {
		t.Fatal(err)
	}
	var requests int64
	var start, end pace.Rate
	for i := range 3 {
		p.Sharding = &engine.Sharding{Index: i, Of: 3, RunID: "r"}
		q, err := p.share(rs)
		if err != nil {
			t.Fatal(err)
		}
		requests += q.Requests
		start += q.Schedule.Start
		end += q.Schedule.Stages[0].Target
		if want := time.Duration(float64(i) / 100 * float64(time.Second)); q.phase != want {
			t.Errorf("shard %d starts %s late; want %s", i, q.phase, want)
		}
	}
	if requests != 10 || fmt.Sprintf("%.6f %.6f", start, end) != "100.000000 1000.000000" {
		t.Errorf("the shards send %d requests from %v/s to %v/s; want 10, 100 and 1000", requests, start, end)
	}
	if sched.Start != 100 {
		t.Errorf("the plan's own schedule was changed")
	}
}
