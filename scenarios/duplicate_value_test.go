package scenarios

import (
	"math/rand/v2"
	"testing"

	"github.com/racelab/racelab/scenarios/results"
)

// duplicateValue compares a burst pairwise up to pairwiseUpTo requests
// and through a map above: both ways must find the same value, on both
// sides of the edge, with refused and failed requests mixed in (they do
// not count).
func TestDuplicateValue(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 6))
	outcomes := []results.Outcome{results.Allowed, results.Allowed, results.Refused, results.Errored}
	var found int
	for _, n := range []int{0, 1, 2, pairwiseUpTo - 1, pairwiseUpTo, pairwiseUpTo + 1, 100} {
		for range 200 {
			reqs := make([]results.Request, n)
			for i := range reqs {
				reqs[i] = results.Request{Index: i, Outcome: outcomes[rng.IntN(len(outcomes))], Value: rng.Int64N(int64(3*n + 1))}
			}
			// The definition: the first allowed request whose value an
			// earlier allowed request was answered.
			var want int64
			wantOK := false
			seen := map[int64]bool{}
			for _, r := range reqs {
				if r.Outcome != results.Allowed {
					continue
				}
				if seen[r.Value] {
					want, wantOK = r.Value, true
					break
				}
				seen[r.Value] = true
			}
			got, ok := duplicateValue(reqs)
			if got != want || ok != wantOK {
				t.Fatalf("n=%d: duplicateValue = %d, %v; want %d, %v", n, got, ok, want, wantOK)
			}
			if ok {
				found++
			}
		}
	}
	if found == 0 {
		t.Fatal("no burst had a duplicate: the cases prove nothing")
	}
}
