package report

import (
	"strings"
	"testing"
	"time"

	"github.com/racelab/racelab/scenarios/results"
)

// TestLoadScale: the line saying what load was asked reads as a sentence
// for every model, with nothing left empty between its separators.
func TestLoadScale(t *testing.T) {
	rate := func(start float64, stages ...results.LoadStage) *results.LoadSchedule {
		return &results.LoadSchedule{Start: start, Stages: stages, Spacing: "even"}
	}
	for _, tc := range []struct {
		r    results.LoadResult
		want string
	}{
		{results.LoadResult{Schedule: rate(100, results.LoadStage{Duration: 10 * time.Second, Rate: 100})},
			"open model: 100/s for 10s · 2 keys (uniform) · seed 7"},
		// --rate with --requests: no stage, the count ends the load.
		{results.LoadResult{Schedule: rate(100), Requests: 50},
			"open model: 100/s · 50 requests exactly · 2 keys (uniform) · seed 7"},
		{results.LoadResult{Schedule: rate(100, results.LoadStage{Duration: 10 * time.Second, Rate: 500})},
			"open model: from 100/s, 10s to 500/s · 2 keys (uniform) · seed 7"},
		{results.LoadResult{Schedule: rate(0, results.LoadStage{Duration: 10 * time.Second, Rate: 500}, results.LoadStage{Duration: time.Minute, Rate: 50})},
			"open model: 10s to 500/s, then 1m0s to 50/s · 2 keys (uniform) · seed 7"},
		{results.LoadResult{Concurrency: 8, Duration: 5 * time.Second},
			"closed model: 8 workers for 5s · 2 keys (uniform) · seed 7"},
		{results.LoadResult{Concurrency: 8, Requests: 1},
			"closed model: 8 workers · 1 request exactly · 2 keys (uniform) · seed 7"},
	} {
		tc.r.Keys, tc.r.KeyDist, tc.r.Seed = 2, "uniform", 7
		got := loadScale(&tc.r)
		if got != tc.want {
			t.Errorf("loadScale = %q\nwant       %q", got, tc.want)
		}
		if strings.Contains(got, "  ") || strings.Contains(got, " ,") || strings.Contains(got, ", ·") {
			t.Errorf("loadScale = %q: an empty part between separators", got)
		}
	}
}
