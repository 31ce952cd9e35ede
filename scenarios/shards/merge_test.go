package shards

import (
	"testing"

	"github.com/racelab/racelab/scenarios/load"
	"github.com/racelab/racelab/scenarios/results"
)

// HDR histograms merge exactly: the merge of four shards' histograms
// reads the same percentiles as one histogram of every value.
func TestLoadMergeHistogramsExactly(t *testing.T) {
	whole := load.NewHistogram()
	parts := make([]*results.ShardResult, 4)
	for i := range parts {
		h := load.NewHistogram()
		for v := range int64(1000) {
			us := 100 + (v*7919+int64(i)*104729)%50000 // spread, different per shard
			_ = h.RecordValue(us)
			_ = whole.RecordValue(us)
		}
		lt := results.LoadTarget{Target: "t", Spec: "t", Expect: results.ExpectHold, Strict: true, Sent: 1000, Answered: 1000, Allowed: 1000,
			KeyCounts: []results.KeyCount{{Key: 0, Allowed: 1000}}}
		lt.Latency, lt.Histogram, lt.Buckets = load.Summarize(h)
		parts[i] = &results.ShardResult{Shard: i, Shards: 4, Load: &results.LoadResult{Keys: 1, Targets: []results.LoadTarget{lt}}}
	}
	lt, counts, err := sumLoads(parts)
	if err != nil {
		t.Fatal(err)
	}
	if want, _, _ := load.Summarize(whole); lt.Latency != want {
		t.Errorf("merged latency %+v; one histogram of every value says %+v", lt.Latency, want)
	}
	if counts[0].Allowed != 4000 || lt.Allowed != 4000 {
		t.Errorf("key 0 allowed %d, target %d; want 4000", counts[0].Allowed, lt.Allowed)
	}
}
