package scenarios

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/racelab/racelab/internal/usage"
	"github.com/racelab/racelab/scenarios/engine"
	"github.com/racelab/racelab/scenarios/load"
	"github.com/racelab/racelab/scenarios/results"
	"github.com/racelab/racelab/scenarios/shards"
)

// clone copies a part deeply, through its JSON, as a forger edits a file.
func clone[T any](t *testing.T, v *T) *T {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	out := new(T)
	if err := json.Unmarshal(b, out); err != nil {
		t.Fatal(err)
	}
	return out
}

// The forgeries of issue 23, each on honest parts of a kv service that
// lost most of its hits: every one is refused before a merge, naming
// what is wrong, and none panics.
func TestForgedRunPartsAreRefused(t *testing.T) {
	url := serveContract(t, "kv")
	parts := playShards(t, engine.Plan{Scenario: tenHitsOneView, Targets: []string{url}, Requests: 10, Trials: 1, Timeout: 10 * time.Second}, 2, "forged")
	res, err := shards.VerifyRun(context.Background(), parts, shards.VerifyPlan{Find: Find})
	if err != nil || res.Targets[0].Summary().Broken != 1 {
		t.Fatalf("honest parts: %v, %+v; want the loss shown", err, res)
	}
	tests := []struct {
		name  string
		forge func(s *results.ShardResult)
		want  string
	}{
		{"a refused hit", func(s *results.ShardResult) {
			s.Host = "elsewhere-" + s.RunID
			reqs := s.Run.Targets[0].Trials[0].Requests
			for i := range reqs {
				if s.Shard > 0 || i > 0 {
					reqs[i].Outcome = results.Refused
				}
			}
		}, "never refused"},
		{"no targets", func(s *results.ShardResult) { s.Run.Targets = []results.ShardTarget{} }, "run.targets: none"},
		{"a run labelled load", func(s *results.ShardResult) { s.Kind = results.ShardLoad }, "a load part must hold exactly its load"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			forged := []*results.ShardResult{clone(t, parts[0]), clone(t, parts[1])}
			for _, s := range forged {
				tt.forge(s)
			}
			err := shards.CheckShard(forged[1], Find)
			if !errors.Is(err, engine.ErrInconsistent) || !strings.Contains(err.Error(), tt.want) {
				t.Errorf("CheckShard: %v; want it refused with %q", err, tt.want)
			}
			// Merged without the check (as a library caller might), a
			// part of the wrong kind is refused, never a panic.
			if _, err := shards.VerifyLoad(context.Background(), forged, shards.VerifyPlan{Find: Find}); err == nil && tt.name == "a run labelled load" {
				t.Errorf("VerifyLoad of run parts labelled load: no error")
			}
		})
	}
}

// The verifier's expectation is the verifier's: parts claiming the
// service was expected to break (not strictly) are judged as the
// verifier asks, by default as the catalog says (a URL must hold).
func TestVerifyExpectsWhatTheVerifierAsks(t *testing.T) {
	url := serveContract(t, "kv")
	parts := playShards(t, engine.Plan{Scenario: tenHitsOneView, Targets: []string{url}, Requests: 10, Trials: 1, Timeout: 10 * time.Second}, 2, "claims")
	for _, s := range parts {
		s.Run.Targets[0].Expect, s.Run.Targets[0].Strict = results.ExpectBreak, false
	}
	for _, tt := range []struct {
		expect engine.Override
		want   results.Expectation
		strict bool
		kind   results.ShortfallKind
	}{
		{engine.OverrideAuto, results.ExpectHold, true, results.RuleShortfall},
		{engine.OverrideHold, results.ExpectHold, true, results.RuleShortfall},
		{engine.OverrideBreaks, results.ExpectBreak, false, -1},
	} {
		res, err := shards.VerifyRun(context.Background(), parts, shards.VerifyPlan{Find: Find, Targeting: engine.Targeting{Expect: tt.expect}})
		if err != nil {
			t.Fatal(err)
		}
		tr := res.Targets[0]
		fs := res.Shortfalls()
		if tr.Expect != tt.want || tr.Strict != tt.strict || tt.kind >= 0 && (len(fs) != 1 || fs[0].Kind != tt.kind) || tt.kind < 0 && len(fs) != 0 {
			t.Errorf("--expect %q: expect %s strict %v, shortfalls %v; want %s strict %v", tt.expect, tr.Expect, tr.Strict, fs, tt.want, tt.strict)
		}
	}
	// Saved results too: Reexpect sets what the verifier expects.
	res, err := shards.VerifyRun(context.Background(), parts, shards.VerifyPlan{Find: Find})
	if err != nil {
		t.Fatal(err)
	}
	res.Targets[0].Expect, res.Targets[0].Strict = results.ExpectBreak, false
	if err := engine.Reexpect(nil, engine.OverrideAuto, nil, []*results.Result{res}, nil); err != nil {
		t.Fatal(err)
	}
	if tr := res.Targets[0]; tr.Expect != results.ExpectHold || !tr.Strict || !res.Failed() {
		t.Errorf("re-expected: %s strict %v failed %v; want hold, strict, failed", tr.Expect, tr.Strict, res.Failed())
	}
	if err := engine.Reexpect(nil, engine.OverrideBreaks, nil, []*results.Result{res}, nil); err != nil {
		t.Fatal(err)
	}
	if tr := res.Targets[0]; tr.Expect != results.ExpectBreak || tr.Strict || res.Failed() {
		t.Errorf("re-expected with --expect breaks: %s strict %v failed %v; want breaks, not strict, not failed", tr.Expect, tr.Strict, res.Failed())
	}
	err = engine.Reexpect(nil, engine.OverrideAuto, map[string]engine.Override{"nope": engine.OverrideHold}, []*results.Result{res}, nil)
	var field *usage.FieldError
	if !errors.As(err, &field) || field.Field != "Expect" {
		t.Errorf("an expectation of no target: %v; want a usage error on Expect", err)
	}
}

// A burst whose shards released seconds apart did not play the race:
// it proves nothing unless its counts prove a break, and the cause says
// so. --max-spread moves the bound.
func TestBurstNotSimultaneousIsInconclusive(t *testing.T) {
	url := serveContract(t, "sqlite")
	parts := playShards(t, engine.Plan{Scenario: tenHitsOneView, Targets: []string{url}, Requests: 10, Trials: 1, Timeout: 10 * time.Second}, 2, "spread")
	late := clone(t, parts[1])
	late.Host = "there" // a machine of its own, whose clock the history check does not mix
	for i := range late.Run.Targets[0].Trials[0].Requests {
		r := &late.Run.Targets[0].Trials[0].Requests[i]
		r.Invoke += 2600 * time.Millisecond
		r.Return += 2600 * time.Millisecond
	}
	merged := []*results.ShardResult{parts[0], late}
	res, err := shards.VerifyRun(context.Background(), merged, shards.VerifyPlan{Find: Find})
	if err != nil {
		t.Fatal(err)
	}
	tr := res.Targets[0]
	s := tr.Summary()
	fs := res.Shortfalls()
	// About 2.6 s: the shift, give or take the shards' own spread, which a
	// loaded machine stretches either way (2.7 s once, 2.5998 s once), far
	// past the 250 ms bound either way; the words say the spread measured.
	spread := tr.Trials[0].ReleaseSpread
	want := fmt.Sprintf("burst not simultaneous (spread %s)", spread.Round(time.Millisecond).Round(100*time.Millisecond))
	if spread < 2*time.Second || !tr.Trials[0].NotSimultaneous || s.Inconclusive != 1 || s.NotSimultaneous != 1 || len(fs) != 1 || fs[0].Kind != results.InconclusiveShortfall ||
		!strings.Contains(fs[0].Why, want) {
		t.Errorf("spread %s: not simultaneous %v, %d inconclusive, shortfalls %v; want inconclusive, %s",
			spread, tr.Trials[0].NotSimultaneous, s.Inconclusive, fs, want)
	}
	if err := Check(res, time.Second); err != nil {
		t.Errorf("merged result fails its own check: %v", err)
	}
	res, err = shards.VerifyRun(context.Background(), merged, shards.VerifyPlan{Find: Find, Evidence: engine.Evidence{MaxSpread: time.Minute}})
	if err != nil || res.Targets[0].Trials[0].NotSimultaneous || len(res.Shortfalls()) != 0 {
		t.Errorf("--max-spread 1m: %v, shortfalls %v; want the burst to count", err, res.Shortfalls())
	}
	// The bound at its edge: a spread equal to it counts, one past it
	// does not.
	ev := engine.Evidence{MaxSpread: 50 * time.Millisecond}
	for spread, want := range map[time.Duration]bool{49 * time.Millisecond: false, 50 * time.Millisecond: false, 50*time.Millisecond + 1: true} {
		if got := ev.Scattered(spread); got != want {
			t.Errorf("Scattered(%s) with a bound of 50ms = %v; want %v", spread, got, want)
		}
	}
	if got := (engine.Evidence{}).SpreadBound(); got != engine.DefaultMaxSpread {
		t.Errorf("default bound %s; want %s", got, engine.DefaultMaxSpread)
	}
}

// A break proven by the counts stays a break however spread the burst.
func TestScatteredBurstStillShowsABreak(t *testing.T) {
	url := serveContract(t, "kv")
	parts := playShards(t, engine.Plan{Scenario: tenHitsOneView, Targets: []string{url}, Requests: 10, Trials: 1, Timeout: 10 * time.Second}, 2, "spread-kv")
	res, err := shards.VerifyRun(context.Background(), parts, shards.VerifyPlan{Find: Find, Evidence: engine.Evidence{MaxSpread: time.Nanosecond}})
	if err != nil {
		t.Fatal(err)
	}
	if tr := res.Targets[0].Trials[0]; !tr.NotSimultaneous || !tr.Broken || tr.Inconclusive() {
		t.Errorf("not simultaneous %v, broken %v, inconclusive %v; want a proven break", tr.NotSimultaneous, tr.Broken, tr.Inconclusive())
	}
}

// verify -t replaces the parts' target only with the same target as this
// machine reaches it: a kv, or another store, is not the URL the parts
// ran, and reading it back would judge an empty store.
func TestVerifyRefusesAnotherTarget(t *testing.T) {
	url := serveContract(t, "sqlite")
	parts := playShards(t, engine.Plan{Scenario: tenHitsOneView, Targets: []string{url}, Requests: 4, Trials: 1, Timeout: 10 * time.Second}, 2, "other-target")
	for _, spec := range []string{"kv", "actor", "sqlite?path=" + t.TempDir() + "/x.db"} {
		_, err := shards.VerifyRun(context.Background(), parts, shards.VerifyPlan{Find: Find, Targeting: engine.Targeting{Targets: []string{spec}}})
		var field *usage.FieldError
		if !errors.As(err, &field) || field.Field != "Targets" || !strings.Contains(err.Error(), "the parts ran "+url) {
			t.Errorf("-t %s: %v; want a usage error on Targets naming %s", spec, err, url)
		}
	}
	same := strings.Replace(url, "127.0.0.1", "localhost", 1)
	res, err := shards.VerifyRun(context.Background(), parts, shards.VerifyPlan{Find: Find, Targeting: engine.Targeting{Targets: []string{same}}})
	if err != nil || res.Targets[0].Error != "" || res.Targets[0].Summary().CountedMax != 4 {
		t.Errorf("-t %s (the same service): %v %+v; want 4 counted", same, err, res)
	}
}

// loadParts plays a small sharded load of ten-hits-one-view on url.
func loadParts(t *testing.T, url, runID string) []*results.ShardResult {
	t.Helper()
	start := time.Now().Add(200 * time.Millisecond)
	parts := make([]*results.ShardResult, 2)
	for i := range parts {
		var err error
		parts[i], err = shards.LoadShard(context.Background(), load.LoadPlan{Scenario: tenHitsOneView, Targeting: engine.Targeting{Targets: []string{url}},
			Requests: 40, Concurrency: 4, Keys: 4, Seed: 3}, engine.Sharding{Index: i, Of: 2, RunID: runID, StartAt: start})
		if err != nil {
			t.Fatal(err)
		}
		if err := shards.CheckShard(parts[i], Find); err != nil {
			t.Fatalf("honest part %d: %v", i, err)
		}
	}
	return parts
}

// A load's latencies are what its histogram gives, and a hit is never
// refused: a p99 edited down, or lost hits relabelled refused in the
// key counts, are refused, in a part and in a saved load.
func TestForgedLoadsAreRefused(t *testing.T) {
	url := serveContract(t, "sqlite")
	parts := loadParts(t, url, "forged-load")
	forges := map[string]struct {
		forge func(l *results.LoadResult)
		want  string
	}{
		// A nanosecond off, still in order: only the histogram tells.
		"p99 edited":     {func(l *results.LoadResult) { l.Targets[0].Latency.P99-- }, "p99"},
		"p99 edited far": {func(l *results.LoadResult) { l.Targets[0].Latency.P99 = l.Targets[0].Latency.Min }, "want each at most the next"},
		"out of order": {func(l *results.LoadResult) {
			lt := &l.Targets[0].Latency
			lt.P90, lt.P99 = lt.Max+1, lt.Max
		}, "want each at most the next"},
		"refused in the key counts": {func(l *results.LoadResult) {
			lt := &l.Targets[0]
			lt.KeyCounts[0].Allowed--
			lt.KeyCounts[0].Refused++
			lt.Allowed--
			lt.Refused++
		}, "never refused"},
		"no targets": {func(l *results.LoadResult) { l.Targets = nil }, "targets: none"},
	}
	for name, f := range forges {
		part := clone(t, parts[0])
		f.forge(part.Load)
		if err := shards.CheckShard(part, Find); !errors.Is(err, engine.ErrInconsistent) || !strings.Contains(err.Error(), f.want) {
			t.Errorf("part, %s: %v; want it refused with %q", name, err, f.want)
		}
	}
	res, err := shards.VerifyLoad(context.Background(), parts, shards.VerifyPlan{Find: Find})
	if err != nil || res.Targets[0].Error != "" {
		t.Fatalf("merge: %v %+v", err, res)
	}
	if err := shards.CheckLoad(res, Find); err != nil {
		t.Fatalf("the honest merged load: %v", err)
	}
	for name, f := range forges {
		if name == "refused in the key counts" {
			continue // a saved load keeps no key counts
		}
		saved := clone(t, res)
		f.forge(saved)
		if err := shards.CheckLoad(saved, Find); err == nil || !strings.Contains(err.Error(), f.want) {
			t.Errorf("saved, %s: %v; want it refused with %q", name, err, f.want)
		}
	}
	saved := clone(t, res)
	saved.Targets[0].Refused, saved.Targets[0].Allowed = 1, saved.Targets[0].Allowed-1
	saved.Targets[0].Keys.Allowed.Sum--
	if err := shards.CheckLoad(saved, Find); err == nil || !strings.Contains(err.Error(), "never refused") {
		t.Errorf("saved, a refused hit: %v; want it refused", err)
	}
}

// A saved run whose later requests were relabelled refused, its history
// deleted and its bound edited, is refused: a hit cannot be refused.
func TestForgedSavedRunIsRefused(t *testing.T) {
	res, err := engine.Run(context.Background(), engine.Plan{Scenario: tenHitsOneView, Targets: []string{"kv"}, Requests: 10, Trials: 3, Seed: 1})
	if err != nil {
		t.Fatal(err)
	}
	if err := Check(clone(t, res), time.Second); err != nil {
		t.Fatalf("honest result: %v", err)
	}
	forged := clone(t, res)
	tr := &forged.Targets[0]
	for i := range tr.Trials {
		trial := &tr.Trials[i]
		for j := range trial.Requests {
			if int64(j) >= trial.Counted {
				trial.Requests[j].Outcome = results.Refused
			}
		}
		trial.Count()
		trial.Lost, trial.Broken, trial.Why, trial.History, trial.HistoryWhy, trial.Damage = 0, false, "", "", "", ""
	}
	sum := tr.Summary()
	b := sum.Bound(forged.Confidence, 0)
	tr.Bound = &b
	err = Check(forged, time.Second)
	if !errors.Is(err, engine.ErrInconsistent) || !strings.Contains(err.Error(), "outcome") || !strings.Contains(err.Error(), "never refused") {
		t.Errorf("%v; want the refused hit named", err)
	}
}

// A saved result's story figures are recomputed: stale-plan's exposure
// and six-of-five's admitted per window, edited in the current form or
// in the v1 fields (exposure_ns, windows), are refused by report's check.
func TestForgedFiguresAreRefused(t *testing.T) {
	for _, tt := range []struct {
		sc     *engine.Scenario
		figure string
		legacy string
	}{
		{stalePlan, "exposure_ns", "exposure_ns"},
		{sixOfFive, "windows", "windows"},
	} {
		res, err := engine.Run(context.Background(), engine.Plan{Scenario: tt.sc, Targets: []string{"kv"}, Trials: 1, Seed: 7})
		if err != nil {
			t.Fatal(err)
		}
		trial := res.Targets[0].Trials[0]
		if len(trial.Figures[tt.figure]) == 0 {
			t.Fatalf("%s: trial figures %v; want %s", tt.sc.Name, trial.Figures, tt.figure)
		}
		b, err := json.Marshal(res)
		if err != nil {
			t.Fatal(err)
		}
		forge := func(edit func(trial map[string]any)) *results.Result {
			var doc map[string]any
			if err := json.Unmarshal(b, &doc); err != nil {
				t.Fatal(err)
			}
			edit(doc["targets"].([]any)[0].(map[string]any)["trials"].([]any)[0].(map[string]any))
			out, err := json.Marshal(doc)
			if err != nil {
				t.Fatal(err)
			}
			r := new(results.Result)
			if err := json.Unmarshal(out, r); err != nil {
				t.Fatal(err)
			}
			return r
		}
		if err := Check(forge(func(map[string]any) {}), time.Second); err != nil {
			t.Fatalf("%s: the honest result: %v", tt.sc.Name, err)
		}
		off := func(v []any) []any { v = append([]any(nil), v...); v[0] = v[0].(float64) + 1; return v }
		current := forge(func(tr map[string]any) {
			figs := tr["figures"].(map[string]any)
			figs[tt.figure] = off(figs[tt.figure].([]any))
		})
		legacy := forge(func(tr map[string]any) {
			v := off(tr["figures"].(map[string]any)[tt.figure].([]any))
			delete(tr, "figures")
			if tt.legacy == "exposure_ns" {
				tr[tt.legacy] = v[0]
			} else {
				tr[tt.legacy] = v
			}
		})
		for name, r := range map[string]*results.Result{"figures": current, "v1 field": legacy} {
			if err := Check(r, time.Second); !errors.Is(err, engine.ErrInconsistent) || !strings.Contains(err.Error(), "figures."+tt.figure) {
				t.Errorf("%s, %s %s edited: %v; want it refused naming figures.%s", tt.sc.Name, name, tt.figure, err, tt.figure)
			}
		}
	}
}

// The soft rules at their edges: six-of-five's tolerance lets a window
// admit limit+tolerance and no more; stale-plan's soft rule breaks on a
// lost download alone.
func TestSoftRulesAtTheirEdges(t *testing.T) {
	soft := sixOfFive.Limit + 1 // the default tolerance of one
	for admitted, want := range map[int64]bool{soft - 1: false, soft: false, soft + 1: true} {
		trial := &results.Trial{Figures: map[string][]int64{windowsFigure: {1, admitted}}}
		if got := sixOfFive.Soft(trial); got != want {
			t.Errorf("six-of-five: a window admitting %d (limit %d, tolerance 1): soft broken %v; want %v", admitted, sixOfFive.Limit, got, want)
		}
	}
	for lost, want := range map[int64]bool{0: false, 1: true} {
		if got := stalePlan.Soft(&results.Trial{Lost: lost}); got != want {
			t.Errorf("stale-plan: %d lost, nothing else: soft broken %v; want %v", lost, got, want)
		}
	}
}

// run bounds its own bursts' spread too, and records the bound so that a
// saved result is checked against it; a sequence is spread on purpose.
func TestRunBoundsTheSpread(t *testing.T) {
	db := "sqlite?path=" + t.TempDir() + "/db.sqlite"
	res, err := engine.Run(context.Background(), engine.Plan{Scenario: tenHitsOneView, Targets: []string{db}, Requests: 10, Trials: 2,
		Evidence: engine.Evidence{MaxSpread: time.Nanosecond}})
	if err != nil {
		t.Fatal(err)
	}
	s := res.Targets[0].Summary()
	if res.MaxSpread != time.Nanosecond || s.NotSimultaneous != s.Trials || s.MaxReleaseSpread <= time.Nanosecond || !res.Targets[0].Inconclusive() {
		t.Errorf("max spread %s, %d of %d not simultaneous (widest %s), inconclusive %v; want every trial past a bound of 1ns",
			res.MaxSpread, s.NotSimultaneous, s.Trials, s.MaxReleaseSpread, res.Targets[0].Inconclusive())
	}
	if err := Check(clone(t, res), time.Second); err != nil {
		t.Errorf("the result fails its own check: %v", err)
	}
	forged := clone(t, res)
	forged.Targets[0].Trials[0].NotSimultaneous = false
	if err := Check(forged, time.Second); err == nil || !strings.Contains(err.Error(), "not_simultaneous") {
		t.Errorf("a scattered trial marked simultaneous: %v; want it refused", err)
	}
	forged = clone(t, res)
	forged.Targets[0].Trials[0].ReleaseSpread = 0
	if err := Check(forged, time.Second); err == nil || !strings.Contains(err.Error(), "release_spread_ns") {
		t.Errorf("a release spread edited to 0: %v; want it refused", err)
	}
	seq, err := engine.Run(context.Background(), engine.Plan{Scenario: tenHitsOneView, Targets: []string{"kv"}, Requests: 3, Trials: 1, Sequential: true,
		Evidence: engine.Evidence{MaxSpread: time.Nanosecond}})
	if err != nil {
		t.Fatal(err)
	}
	if seq.MaxSpread != 0 || seq.Targets[0].Summary().NotSimultaneous != 0 {
		t.Errorf("a sequential run: max spread %s, %d not simultaneous; want no bound", seq.MaxSpread, seq.Targets[0].Summary().NotSimultaneous)
	}
}
