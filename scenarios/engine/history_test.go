package engine

import (
	"math/rand/v2"
	"testing"
	"time"

	"github.com/anishathalye/porcupine"

	"github.com/racelab/racelab/scenarios/results"
)

// sameValue names the earliest pair of requests answered alike, pairwise
// up to scanUpTo requests and through a map above: both ways must name the
// same pair, so it is checked on both sides of the edge against the
// definition (the first request whose value came before, and the first
// request that had it).
func TestSameValue(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	for _, n := range []int{0, 1, 2, scanUpTo - 1, scanUpTo, scanUpTo + 1, 100} {
		for range 200 {
			reqs := make([]*results.Request, n)
			for i := range reqs {
				reqs[i] = &results.Request{Index: i, Value: rng.Int64N(int64(2*n + 1))}
			}
			wantA, wantB, wantOK := -1, -1, false
		search:
			for j := range reqs {
				for i := range j {
					if reqs[i].Value == reqs[j].Value {
						wantA, wantB, wantOK = i, j, true
						break search
					}
				}
			}
			a, b, ok := sameValue(reqs)
			if ok != wantOK || ok && (a.Index != wantA || b.Index != wantB) {
				t.Fatalf("n=%d: sameValue = %v, %v, %v; want %d, %d, %v", n, a, b, ok, wantA, wantB, wantOK)
			}
		}
	}
}

// countedInOrder decides a counter's history without the search when its
// answers fix the order: on every such history it must agree with
// porcupine's exhaustive search, both ways. Random intervals, some
// touching at an instant and some answered early, give both verdicts.
func TestCountedInOrderAgreesWithTheSearch(t *testing.T) {
	m := CounterModel()
	rng := rand.New(rand.NewPCG(3, 4))
	var yes, no int
	for range 3000 {
		n := 1 + rng.IntN(7)
		tr := results.Trial{Counted: int64(n), Requests: make([]results.Request, n)}
		for i, v := range rng.Perm(n) {
			invoke := time.Duration(rng.IntN(8))
			tr.Requests[i] = results.Request{Index: i, Outcome: results.Allowed, Value: int64(v + 1),
				Invoke: invoke, Return: invoke + time.Duration(rng.IntN(6)), Early: rng.IntN(10) == 0}
		}
		got := countedInOrder(&tr)
		want := porcupine.CheckOperations(m.Porcupine(), m.Operations(&tr))
		if got != want {
			t.Fatalf("countedInOrder = %v, porcupine says %v, for %+v", got, want, tr.Requests)
		}
		if got {
			yes++
		} else {
			no++
		}
	}
	if yes < 100 || no < 100 {
		t.Fatalf("%d linearizable and %d not: the cases do not exercise both verdicts", yes, no)
	}
}

// Outside the shape it decides (a total repeated or missing, a request
// failed or refused, a count read back other than N), countedInOrder says
// no and leaves the history to the search.
func TestCountedInOrderOnlyDecidesItsShape(t *testing.T) {
	ok := func() results.Trial {
		return results.Trial{Counted: 2, Requests: []results.Request{
			{Index: 0, Outcome: results.Allowed, Value: 1, Invoke: 0, Return: 5},
			{Index: 1, Outcome: results.Allowed, Value: 2, Invoke: 0, Return: 5},
		}}
	}
	if tr := ok(); !countedInOrder(&tr) {
		t.Fatal("the base case is not decided: the cases below prove nothing")
	}
	for name, edit := range map[string]func(*results.Trial){
		"repeated total":  func(t *results.Trial) { t.Requests[1].Value = 1 },
		"total above N":   func(t *results.Trial) { t.Requests[1].Value = 3 },
		"total zero":      func(t *results.Trial) { t.Requests[0].Value = 0 },
		"failed request":  func(t *results.Trial) { t.Requests[1].Outcome = results.Errored },
		"refused request": func(t *results.Trial) { t.Requests[1].Outcome = results.Refused },
		"read back N-1":   func(t *results.Trial) { t.Counted = 1 },
		"read back N+1":   func(t *results.Trial) { t.Counted = 3 },
		"second returned first": func(t *results.Trial) {
			t.Requests[1].Return, t.Requests[0].Invoke = 1, 2
		},
	} {
		tr := ok()
		edit(&tr)
		if countedInOrder(&tr) {
			t.Errorf("%s: countedInOrder said yes", name)
		}
	}
}
