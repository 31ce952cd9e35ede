package results

import (
	"reflect"
	"slices"
	"testing"
)

func TestMerge(t *testing.T) {
	trials := func(n int, broken ...int) []Trial {
		ts := make([]Trial, n)
		for i := range ts {
			ts[i].Index = i
			ts[i].Broken = slices.Contains(broken, i)
		}
		return ts
	}
	a := &Result{Schema: SchemaVersion, Scenario: "ten-hits-one-view", Rule: "r", Requests: 10, Trials: 3, Seed: 1, Confidence: 0.99,
		Targets: []TargetResult{
			{Target: "kv", Spec: "kv", Expect: ExpectBreak, Trials: trials(3, 0, 2)},
			{Target: "sqlite", Spec: "sqlite", Expect: ExpectHold, Strict: true, Trials: trials(3)},
		}}
	b := &Result{Schema: SchemaVersion, Scenario: "ten-hits-one-view", Rule: "r", Requests: 10, Trials: 2, Seed: 7, Interrupted: true,
		Targets: []TargetResult{
			{Target: "sqlite", Spec: "sqlite", Expect: ExpectHold, Strict: true, Trials: trials(2, 1)},
			{Target: "actor", Spec: "actor", Expect: ExpectHold, Strict: true, Error: "open actor: boom"},
		}}
	other := &Result{Schema: SchemaVersion, Scenario: "five-checkouts", Requests: 5, Trials: 1, Seed: 3}
	bigger := &Result{Schema: SchemaVersion, Scenario: "ten-hits-one-view", Requests: 50, Trials: 1, Seed: 4}
	before := *a

	got := Merge([]*Result{a, other, b, bigger})
	if len(got) != 3 || got[1] != other || got[2] != bigger {
		t.Fatalf("Merge gave %d results; want the merged one, then five-checkouts and N=50 as they were", len(got))
	}
	m := got[0]
	if !reflect.DeepEqual(*a, before) {
		t.Error("Merge changed its argument")
	}
	if m.Trials != 5 || !m.Interrupted || !slices.Equal(m.Seeds, []int64{1, 7}) || m.Seed != 1 || m.Schema != SchemaVersion {
		t.Errorf("merged: trials %d, interrupted %v, seeds %v, seed %d; want 5, true, [1 7], 1", m.Trials, m.Interrupted, m.Seeds, m.Seed)
	}
	var names []string
	for _, tr := range m.Targets {
		names = append(names, tr.Target)
	}
	if !slices.Equal(names, []string{"kv", "sqlite", "actor"}) {
		t.Fatalf("targets %v, want kv, sqlite, actor", names)
	}
	sqlite := m.Targets[1]
	if len(sqlite.Trials) != 5 || sqlite.Broken() != 1 || sqlite.Trials[4].Index != 4 {
		t.Errorf("sqlite: %d trials, %d broken, last index %d; want 5, 1, 4", len(sqlite.Trials), sqlite.Broken(), sqlite.Trials[4].Index)
	}
	if sqlite.Bound == nil || sqlite.Bound.Trials != 5 || sqlite.Bound.Broken != 1 || sqlite.Bound.Level != 0.99 {
		t.Errorf("sqlite bound %+v, want 1 of 5 at the first result's 99%%", sqlite.Bound)
	}
	if m.Targets[2].Error != "open actor: boom" {
		t.Errorf("actor error %q", m.Targets[2].Error)
	}
	if one := Merge([]*Result{a}); len(one) != 1 || one[0] != a {
		t.Error("a single result is not returned as it is")
	}
}
