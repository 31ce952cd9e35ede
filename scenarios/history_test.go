package scenarios

import (
	"bytes"
	"context"
	"math/rand/v2"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/anishathalye/porcupine"

	"github.com/racelab/racelab/scenarios/engine"
	"github.com/racelab/racelab/scenarios/results"
)

// req is a request of a synthetic history: invoked at invoke µs, answered
// at ret µs.
func req(i int, invoke, ret int, outcome results.Outcome, value int64) results.Request {
	return results.Request{Index: i, Invoke: time.Duration(invoke) * time.Microsecond, Return: time.Duration(ret) * time.Microsecond,
		Outcome: outcome, Value: value}
}

// synthetic is a trial with the given requests and count read back, its
// outcomes counted, judged by sc's own rule.
func synthetic(sc *engine.Scenario, counted int64, reqs ...results.Request) results.Trial {
	t := results.Trial{Key: "k", Requests: reqs, Counted: counted}
	t.Count()
	sc.Judge(&t, "t")
	return t
}

// searchOnly asks porcupine alone, without the cheap refutations, so that
// the tests show the checker itself reaching the verdict.
func searchOnly(t *testing.T, sc *engine.Scenario, trial *results.Trial) porcupine.CheckResult {
	t.Helper()
	m, ok := engine.ModelOf(sc)
	if !ok {
		t.Fatalf("%s has no model", sc.Name)
	}
	return porcupine.CheckOperationsTimeout(m.Porcupine(), m.Operations(trial), 10*time.Second)
}

func mustLookup(t *testing.T, name string) *engine.Scenario {
	t.Helper()
	sc, err := Lookup(name)
	if err != nil {
		t.Fatal(err)
	}
	return sc
}

// TestHistorySynthetic checks the models on hand-made histories, each with
// the verdict both the full check and the search alone must reach.
func TestHistorySynthetic(t *testing.T) {
	hits, quota, item := mustLookup(t, "ten-hits-one-view"), mustLookup(t, "six-become-four"), mustLookup(t, "five-checkouts")
	grants := func(invoke, ret int) []results.Request { // five grants answered 1..5
		var rs []results.Request
		for i := range 5 {
			rs = append(rs, req(i, invoke, ret, results.Allowed, int64(i+1)))
		}
		return rs
	}
	for _, tc := range []struct {
		name     string
		sc       *engine.Scenario
		trial    results.Trial
		want     results.HistoryVerdict
		why      string // part of the reason, for refuted histories
		countsOK bool   // the counts alone see nothing wrong (Lost = Over = 0)
	}{
		{"counter: one at a time", hits, synthetic(hits, 3,
			req(0, 0, 10, results.Allowed, 1), req(1, 0, 10, results.Allowed, 3), req(2, 0, 10, results.Allowed, 2)), results.Linearizable, "", true},
		// The example: the final count looks right, yet two hits
		// were told the same total.
		{"counter: two hits both answered 1", hits, synthetic(hits, 2,
			req(0, 0, 10, results.Allowed, 1), req(1, 0, 10, results.Allowed, 1)), results.NotLinearizable, "requests 0 and 1 were both answered 1 view", true},
		// Distinct totals, right count, but request 1 was answered 1 after
		// request 0 had already been answered 2: the order is impossible.
		{"counter: answers against real time", hits, synthetic(hits, 2,
			req(0, 0, 10, results.Allowed, 2), req(1, 20, 30, results.Allowed, 1)), results.NotLinearizable, "no order of the 2 requests", true},
		{"counter: failed hit that counted", hits, synthetic(hits, 3,
			req(0, 0, 10, results.Allowed, 1), req(1, 0, 10, results.Allowed, 3), req(2, 0, 5, results.Errored, 0)), results.Linearizable, "", true},
		{"counter: failed hit that did not count", hits, synthetic(hits, 2,
			req(0, 0, 10, results.Allowed, 1), req(1, 0, 10, results.Allowed, 2), req(2, 0, 5, results.Errored, 0)), results.Linearizable, "", true},
		{"counter: failed hit invoked too late", hits, synthetic(hits, 3,
			req(0, 0, 10, results.Allowed, 1), req(1, 0, 10, results.Allowed, 3), req(2, 50, 60, results.Errored, 0)), results.NotLinearizable, "no order", true},
		{"counter: lost update", hits, synthetic(hits, 1,
			req(0, 0, 10, results.Allowed, 1), req(1, 0, 10, results.Allowed, 2)), results.NotLinearizable, "yet the store read back 1", false},
		{"quota: five granted, then refused", quota, synthetic(quota, 5,
			append(grants(0, 10), req(5, 0, 10, results.Refused, 5), req(6, 0, 10, results.Refused, 5))...), results.Linearizable, "", true},
		{"quota: refused below the limit", quota, synthetic(quota, 5,
			append(grants(0, 10), req(5, 0, 10, results.Refused, 4))...), results.NotLinearizable, "refused at count 4, not at the limit of 5", true},
		{"quota: two granted at one count", quota, synthetic(quota, 2,
			req(0, 0, 10, results.Allowed, 1), req(1, 0, 10, results.Allowed, 1)), results.NotLinearizable, "both granted at count 1", false},
		// Refused at the limit before any of the grants was even sent.
		{"quota: refused before the limit was reached", quota, synthetic(quota, 5,
			append(grants(20, 30), req(5, 0, 10, results.Refused, 5))...), results.NotLinearizable, "no order", true},
		{"item: one claim", item, synthetic(item, 1,
			req(0, 0, 10, results.Allowed, 1), req(1, 0, 10, results.Refused, 0), req(2, 0, 10, results.Refused, 0)), results.Linearizable, "", true},
		{"item: sold twice", item, synthetic(item, 1,
			req(0, 0, 10, results.Allowed, 1), req(1, 0, 10, results.Allowed, 1)), results.NotLinearizable, "2 checkouts succeeded for 1 in stock", false},
		{"item: refused as taken before anyone claimed it", item, synthetic(item, 1,
			req(0, 20, 30, results.Allowed, 1), req(1, 0, 10, results.Refused, 0)), results.NotLinearizable, "no order", true},
		{"item: claimed by a request that failed", item, synthetic(item, 1,
			req(0, 0, 10, results.Errored, 0), req(1, 0, 10, results.Refused, 0)), results.Linearizable, "", true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if tc.countsOK && (tc.trial.Lost != 0 || tc.trial.Over != 0) {
				t.Fatalf("test history is wrong: lost %d, over %d", tc.trial.Lost, tc.trial.Over)
			}
			got, why := engine.CheckHistory(tc.sc, &tc.trial, time.Second)
			if got != tc.want || !strings.Contains(why, tc.why) {
				t.Errorf("CheckHistory = %q, %q; want %q, containing %q", got, why, tc.want, tc.why)
			}
			wantSearch := porcupine.Ok
			if tc.want == results.NotLinearizable {
				wantSearch = porcupine.Illegal
			}
			if got := searchOnly(t, tc.sc, &tc.trial); got != wantSearch {
				t.Errorf("porcupine alone = %s, want %s", got, wantSearch)
			}
		})
	}
}

// TestHistoryBreaksTrial checks that a trial whose counts look right but
// whose history is not linearizable breaks, and says why.
func TestHistoryBreaksTrial(t *testing.T) {
	quota := mustLookup(t, "six-become-four")
	trial := synthetic(quota, 2, req(0, 0, 10, results.Allowed, 1), req(1, 0, 10, results.Allowed, 1))
	trial.Counted, trial.Lost, trial.Broken, trial.Why = 2, 0, false, "" // as if the counter had caught up
	engine.RecordHistory(quota, &trial, "kv", engine.Evidence{})
	if !trial.Broken || trial.History != results.NotLinearizable || trial.Why != "kv: not linearizable: requests 0 and 1 were both granted at count 1" {
		t.Errorf("trial = broken %v, history %q, why %q", trial.Broken, trial.History, trial.Why)
	}
	skipped := synthetic(quota, 2, req(0, 0, 10, results.Allowed, 1), req(1, 0, 10, results.Allowed, 1))
	skipped.Broken = false
	engine.RecordHistory(quota, &skipped, "kv", engine.Evidence{SkipHistory: true})
	if skipped.Broken || skipped.History != "" {
		t.Errorf("with SkipHistory: broken %v, history %q; want untouched", skipped.Broken, skipped.History)
	}
}

// TestRefuteIsSound generates small random histories for each story and
// checks that the cheap refutations never condemn a history the search
// accepts: they may only say sooner what the search would say.
func TestRefuteIsSound(t *testing.T) {
	rng := rand.New(rand.NewPCG(6, 6))
	outcomes := []results.Outcome{results.Allowed, results.Allowed, results.Allowed, results.Refused, results.Errored}
	for _, sc := range burstStories() {
		m, ok := engine.ModelOf(sc)
		if !ok {
			continue
		}
		refuted, accepted := 0, 0
		for range 3000 {
			n := 1 + rng.IntN(7)
			reqs := make([]results.Request, n)
			for i := range reqs {
				invoke := rng.IntN(20)
				o := outcomes[rng.IntN(len(outcomes))]
				reqs[i] = req(i, invoke, invoke+1+rng.IntN(20), o, int64(rng.IntN(n+2)))
			}
			trial := synthetic(sc, int64(rng.IntN(n+2)), reqs...)
			why := m.Refute(&trial)
			search := searchOnly(t, sc, &trial)
			if why != "" && search != porcupine.Illegal {
				t.Fatalf("%s: refuted (%s) a history porcupine finds %s: %+v counted %d", sc.Name, why, search, trial.Requests, trial.Counted)
			}
			if why != "" {
				refuted++
			}
			if search == porcupine.Ok {
				accepted++
			}
		}
		if refuted == 0 || accepted == 0 {
			t.Errorf("%s: %d refuted, %d accepted of 3000: the generator misses a side", sc.Name, refuted, accepted)
		}
	}
}

// TestHistoryOfStores runs the stories on real embedded stores: every
// history of the atomic ones is linearizable, and the naive ones produce
// histories that are not, which porcupine's own search also rejects: every
// trial whose counts prove the race is flagged, and a flagged one is never
// one that porcupine would accept.
// (TestAtomicTargetsHold checks 200 more trials of each atomic store, as
// a history that is not linearizable breaks its trial.)
func TestHistoryOfStores(t *testing.T) {
	for _, target := range []string{"sqlite", "actor"} {
		for _, sc := range burstStories() {
			t.Run(sc.Name+"/"+target, func(t *testing.T) {
				t.Parallel()
				tr := run(t, sc, target, 50, 10)
				for _, trial := range tr.Trials {
					if trial.History != results.Linearizable {
						t.Fatalf("trial %d: history %s: %s", trial.Index, trial.History, trial.HistoryWhy)
					}
				}
			})
		}
	}
	for _, target := range []string{"kv", "sqlite:naive"} {
		for _, sc := range burstStories() {
			t.Run(sc.Name+"/"+target, func(t *testing.T) {
				t.Parallel()
				tr := run(t, sc, target, sc.DefaultRequests, 10)
				flagged := 0
				for _, trial := range tr.Trials {
					if trial.History != results.NotLinearizable {
						// How many trials race depends on how the
						// machine schedules the burst; a trial whose
						// counts prove the race must be flagged, always.
						// (A failed request may have taken effect, so
						// only a trial without one proves it by counts.)
						if trial.Errors == 0 && (trial.Over > 0 || trial.Lost > 0) {
							t.Errorf("trial %d: %d over, %d lost, yet its history is %q", trial.Index, trial.Over, trial.Lost, trial.History)
						}
						continue
					}
					flagged++
					if got := searchOnly(t, sc, &trial); got != porcupine.Illegal {
						t.Errorf("trial %d: refuted (%s), but porcupine alone says %s", trial.Index, trial.HistoryWhy, got)
					}
				}
				if flagged == 0 {
					t.Error("none of 10 histories flagged: the naive store never raced")
				}
			})
		}
	}
}

// atomicCounterTrial is n hits released together on an atomic counter:
// all invoked within a few µs, answered 1..n in a shuffled order of
// arrival, the count read back n.
func atomicCounterTrial(sc *engine.Scenario, n int, seed uint64) results.Trial {
	rng := rand.New(rand.NewPCG(seed, 1))
	order := rng.Perm(n)
	reqs := make([]results.Request, n)
	for i := range reqs {
		invoke := rng.IntN(5)
		reqs[i] = req(i, invoke, 10+order[i]*3, results.Allowed, int64(order[i]+1))
	}
	return synthetic(sc, int64(n), reqs...)
}

// TestHistoryCostAtN50 measures the check on histories of 50 hits on an
// atomic counter, the everyday case: it must stay far below the timeout.
func TestHistoryCostAtN50(t *testing.T) {
	hits := mustLookup(t, "ten-hits-one-view")
	var worst, total time.Duration
	const runs = 200
	for i := range runs {
		trial := atomicCounterTrial(hits, 50, uint64(i))
		start := time.Now()
		v, why := engine.CheckHistory(hits, &trial, results.DefaultHistoryTimeout)
		d := time.Since(start)
		if v != results.Linearizable {
			t.Fatalf("run %d: %s: %s", i, v, why)
		}
		worst, total = max(worst, d), total+d
	}
	// How long a check takes is BenchmarkCheckHistoryN50's to measure: a
	// timed assertion here failed on a loaded machine, not on slow code.
	t.Logf("N=50 atomic counter: mean %v, worst %v per history", total/runs, worst)
}

func BenchmarkCheckHistoryN50(b *testing.B) {
	hits, _ := Lookup("ten-hits-one-view")
	trial := atomicCounterTrial(hits, 50, 1)
	for b.Loop() {
		if v, _ := engine.CheckHistory(hits, &trial, 0); v != results.Linearizable {
			b.Fatal(v)
		}
	}
}

// TestHistoryTimeout checks that a search cut short says unknown rather
// than guessing.
func TestHistoryTimeout(t *testing.T) {
	hits := mustLookup(t, "ten-hits-one-view")
	trial := atomicCounterTrial(hits, 3000, 1) // quadratic work: far more than a nanosecond
	// One request failed: whether it counted is unknown, so the answers
	// no longer fix the order (engine's countedInOrder) and the check
	// must search.
	trial.Requests[0].Outcome, trial.Requests[0].Value = results.Errored, 0
	if v, why := engine.CheckHistory(hits, &trial, time.Nanosecond); v != results.HistoryUnknown || !strings.Contains(why, "ran out of time") {
		t.Errorf("CheckHistory with 1ns = %q, %q; want unknown", v, why)
	}
}

func TestHistoryTrialAndHTML(t *testing.T) {
	hits := mustLookup(t, "ten-hits-one-view")
	good := atomicCounterTrial(hits, 5, 1)
	bad := synthetic(hits, 2, req(0, 0, 10, results.Allowed, 1), req(1, 0, 10, results.Allowed, 1))
	bad.Index, bad.History = 1, results.NotLinearizable
	res := &results.Result{Scenario: hits.Name, Targets: []results.TargetResult{
		{Target: "sqlite", Trials: []results.Trial{good}},
		{Target: "kv", Trials: []results.Trial{good, bad}},
	}}
	// The picture is of the trial most worth one: kv's second, whose
	// history is not linearizable.
	var b bytes.Buffer
	if err := engine.WriteHistoryHTML(&b, hits, res, time.Second); err != nil {
		t.Fatal(err)
	}
	// Index 1 is the second trial: the picture counts from 1, as the
	// reports do, and so do its lanes.
	for _, want := range []string{"<html", "ten-hits-one-view on kv, trial 2", "hit: 1 view", "read: 2 views", `"ClientId":1`, `"ClientId":3`} {
		if !strings.Contains(b.String(), want) {
			t.Errorf("visualization lacks %q", want)
		}
	}
	if err := engine.WriteHistoryHTML(&b, hits, &results.Result{Scenario: hits.Name}, time.Second); err == nil {
		t.Error("WriteHistoryHTML drew a trial of a result without any")
	}
}

// TestHistoryHTMLUnchecked draws a run made without the check: Run itself
// writes no file, and the picture says the history was not checked.
func TestHistoryHTMLUnchecked(t *testing.T) {
	sc := mustLookup(t, "five-checkouts")
	dir := t.TempDir()
	t.Chdir(dir)
	res, err := engine.Run(context.Background(), engine.Plan{Scenario: sc, Targets: []string{"sqlite"}, Trials: 3, Seed: 1,
		Evidence: engine.Evidence{SkipHistory: true}})
	if err != nil {
		t.Fatal(err)
	}
	for _, trial := range res.Targets[0].Trials {
		if trial.History != "" {
			t.Errorf("trial %d checked (%s) with SkipHistory", trial.Index, trial.History)
		}
	}
	if files, _ := os.ReadDir(dir); len(files) > 0 {
		t.Errorf("Run wrote %s; drawing is WriteHistoryHTML's, asked by the caller", files[0].Name())
	}
	var b bytes.Buffer
	if err := engine.WriteHistoryHTML(&b, sc, res, time.Second); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"five-checkouts on sqlite, trial 1", "history not checked"} {
		if !strings.Contains(b.String(), want) {
			t.Errorf("history page lacks %q", want)
		}
	}
}
