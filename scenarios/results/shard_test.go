package results

import "testing"

// TestShardOutcome: a shard's part says whether it was interrupted and
// the first target it could not play, for the shard's exit code.
func TestShardOutcome(t *testing.T) {
	for _, tc := range []struct {
		part        ShardResult
		interrupted bool
		failed      string
	}{
		{ShardResult{}, false, ""},
		{ShardResult{Run: &ShardRunPart{Interrupted: true, Targets: []ShardTarget{{Target: "kv"}}}}, true, ""},
		{ShardResult{Run: &ShardRunPart{Targets: []ShardTarget{{Target: "kv"}, {Target: "a", Error: "refused"}, {Target: "b", Error: "gone"}}}}, false, "a: refused"},
		{ShardResult{Load: &LoadResult{Interrupted: true, Targets: []LoadTarget{{Target: "sqlite", Error: "locked"}}}}, true, "sqlite: locked"},
	} {
		interrupted, failed := tc.part.Outcome()
		if interrupted != tc.interrupted || failed != tc.failed {
			t.Errorf("%+v: %t, %q; want %t, %q", tc.part, interrupted, failed, tc.interrupted, tc.failed)
		}
	}
}
