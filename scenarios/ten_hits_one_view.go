package scenarios

import (
	"context"
	"fmt"
	"slices"
	"strings"

	"github.com/racelab/racelab/scenarios/engine"
	"github.com/racelab/racelab/scenarios/results"
	"github.com/racelab/racelab/targets/story"
)

var tenHitsOneView = engine.Define(engine.Scenario{
	Tale: engine.Tale{
		Name:  "ten-hits-one-view",
		Title: "ten readers open a post at once; the view counter records one",
		Story: "A blog counts views in a key-value store: read the count, add one, " +
			"write it back. One reader at a time, it is right. Ten readers at the " +
			"same instant all read the same number and all write that number plus " +
			"one, so ten views become one. Tests that send hits one after another " +
			"never overlap two of them and never see it. One atomic upsert (SQLite's " +
			"INSERT … ON CONFLICT … DO UPDATE … RETURNING, as on D1, Cloudflare's SQLite) or a single-" +
			"threaded object per post applies every increment on its own.",
		Rule: "every hit is counted (counted = allowed) and every hit is answered a distinct total",
		Fix: "The actor (a Durable Object, one per post) handles one request at a time and " +
			"takes the next only once its own storage has answered, so a read and the " +
			"write that follows it are one step. SQLite, as on D1, needs no object: " +
			"INSERT … ON CONFLICT(slug) DO UPDATE SET count = count + 1 RETURNING count " +
			"adds one inside the database and hands back the new total in the same " +
			"round trip, so there is no gap between a read and a write for another " +
			"request to slip into.",
		Needs:     "view counter",
		Lineup:    []string{"kv", "actor", "sqlite"},
		KeyPrefix: "slug",
	},
	Request: engine.Request{
		DefaultRequests: 10,
		Op:              story.OpHit,
	},
	Verdict: engine.Verdict{
		Model: engine.CounterModel(),
		Batch: engine.CounterBatch,
		Tell:  tellHits,
		Damage: func(over, lost int64) string {
			switch {
			case lost > 0 && over == 0:
				return results.Plural(lost, "hit") + " lost"
			case over > 0 && lost == 0:
				return results.Plural(over, "view") + " too many"
			}
			return ""
		},
		Judge: func(t *results.Trial, target string) {
			allowed := int64(t.Allowed)
			t.Lost = max(0, allowed-t.Counted)
			dup, twice := duplicateValue(t.Requests)
			switch {
			case t.Lost > 0:
				t.Broken = true
				t.Why = fmt.Sprintf("%s: %s answered, %s stored: %s lost", target,
					results.Plural(allowed, "hit"), results.Plural(t.Counted, "view"), results.Plural(t.Lost, "update"))
			case t.Counted > allowed+int64(t.Errors):
				// Views no hit can account for, not even a failed one that
				// may have been counted: over-counts, as a load sums them.
				t.Broken = true
				t.Over = t.Counted - allowed - int64(t.Errors)
				t.Why = fmt.Sprintf("%s: %s answered, yet %s stored", target,
					results.Plural(allowed, "hit"), results.Plural(t.Counted, "view"))
			case twice:
				t.Broken = true
				t.Why = fmt.Sprintf("%s: two hits were both answered %d views: their increments overlapped", target, dup)
			}
		},
	},
}, func(s story.Counter, ctx context.Context, key string, _ int) engine.Answer {
	n, err := s.Hit(ctx, key)
	return engine.AnswerOf(true, n, err)
}, story.Counter.Views)

func tellHits(t *results.Trial, target string) string {
	hits, stored := results.Plural(int64(t.Allowed), "hit"), results.Plural(t.Counted, "view")
	totals := answered(t.Requests)
	if totals == "" {
		// A load's key keeps no requests: the totals and their being
		// distinct are not known, so neither is said.
		return fmt.Sprintf("%s: %s answered; %s stored", target, hits, stored)
	}
	return fmt.Sprintf("%s: %s answered %s, each total once; %s stored", target, hits, totals, stored)
}

// duplicateValue finds a value answered to two allowed requests: the
// first request answered a value an earlier one was.
func duplicateValue(reqs []results.Request) (int64, bool) {
	if len(reqs) <= pairwiseUpTo {
		// A burst is judged every trial: comparing its pairs costs less
		// than the map (issue 24).
		for j := range reqs {
			r := &reqs[j]
			if r.Outcome != results.Allowed {
				continue
			}
			for i := range j {
				if q := &reqs[i]; q.Outcome == results.Allowed && q.Value == r.Value {
					return r.Value, true
				}
			}
		}
		return 0, false
	}
	seen := make(map[int64]bool, len(reqs))
	for _, r := range reqs {
		if r.Outcome != results.Allowed {
			continue
		}
		if seen[r.Value] {
			return r.Value, true
		}
		seen[r.Value] = true
	}
	return 0, false
}

// answered lists the values the allowed requests were told, in order:
// "1, 2, 3, …, 10" when they run without a gap.
func answered(reqs []results.Request) string {
	var vs []int64
	for _, r := range reqs {
		if r.Outcome == results.Allowed {
			vs = append(vs, r.Value)
		}
	}
	slices.Sort(vs)
	if len(vs) > 4 && vs[len(vs)-1]-vs[0] == int64(len(vs)-1) {
		return fmt.Sprintf("%d, %d, %d, …, %d", vs[0], vs[1], vs[2], vs[len(vs)-1])
	}
	parts := make([]string, len(vs))
	for i, v := range vs {
		parts[i] = fmt.Sprint(v)
	}
	return strings.Join(parts, ", ")
}

// pairwiseUpTo is how many requests duplicateValue compares pairwise
// rather than through a map.
const pairwiseUpTo = 32
