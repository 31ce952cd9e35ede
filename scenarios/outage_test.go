package scenarios

import (
	"bytes"
	"context"
	"encoding/json"
	"testing"

	"github.com/racelab/racelab/scenarios/results"
)

// With the lock object down, failing open keeps selling and oversells
// where a KV sold mark is stale; failing closed sells nothing during the
// outage and never oversells; both replay from the seed.
func TestOutagePolicies(t *testing.T) {
	const trials = 100
	res, err := runOutages(context.Background(), trials, 7, nil)
	if err != nil {
		t.Fatal(err)
	}
	again, _ := runOutages(context.Background(), trials, 7, nil)
	a, _ := json.Marshal(res)
	b, _ := json.Marshal(again)
	if !bytes.Equal(a, b) {
		t.Error("two outage runs with seed 7 differ")
	}
	open, closed := res.Targets[0].Summary(), res.Targets[1].Summary()
	if open.Broken == 0 {
		t.Errorf("fail-open oversold in none of %d trials, want some", trials)
	}
	if closed.Broken != 0 {
		t.Errorf("fail-closed oversold in %d of %d trials, want none", closed.Broken, trials)
	}
	if open.Allowed.Sum <= closed.Allowed.Sum {
		t.Errorf("sales served: fail-open %d, fail-closed %d; want open to serve more", open.Allowed.Sum, closed.Allowed.Sum)
	}
	for _, tr := range res.Targets[1].Trials {
		for _, r := range tr.Requests {
			if r.Outcome == results.Allowed && r.Invoke >= OutageWindow.From && r.Invoke < OutageWindow.To {
				t.Fatalf("fail-closed trial %d: a sale at %v, inside the outage", tr.Index, r.Invoke)
			}
		}
	}
	// A painting is oversold only if a sale of it skipped the lock, during
	// the outage: the lock up knows every sale it reserved.
	for _, tr := range res.Targets[0].Trials {
		sales, skipped := map[string]int{}, map[string]bool{}
		for _, r := range tr.Requests {
			if r.Outcome != results.Allowed || len(r.Steps) == 0 {
				continue
			}
			item := r.Steps[0].Key
			sales[item]++
			if r.Invoke >= OutageWindow.From && r.Invoke < OutageWindow.To {
				skipped[item] = true
			}
		}
		for item, n := range sales {
			if n > 1 && !skipped[item] {
				t.Fatalf("fail-open trial %d: %s sold %d times, none of them during the outage", tr.Index, item, n)
			}
		}
	}
	t.Logf("sales served: open %d, closed %d; oversold in %d/%d trials (open)", open.Allowed.Sum, closed.Allowed.Sum, open.Broken, trials)
}
