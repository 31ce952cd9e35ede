package scenarios

import (
	"context"
	"math/rand/v2"
	"slices"
	"sync/atomic"
	"testing"
	"time"

	"github.com/anishathalye/porcupine"

	"github.com/racelab/racelab/scenarios/engine"
	"github.com/racelab/racelab/scenarios/results"
	"github.com/racelab/racelab/targets"
)

// straddlingClock is a wall clock that starts before a window boundary and
// moves on a step every time it is read, so that the reads of a burst's
// first before requests fall in one window and the rest in the next: what
// the real clock does, now and then, to a burst that happens to be fired
// across a boundary.
func straddlingClock(window time.Duration, before int) func() time.Time {
	const step = time.Millisecond
	boundary := time.Date(2026, time.March, 14, 9, 0, 0, 0, time.UTC).Truncate(window).Add(window)
	start := boundary.Add(-time.Duration(before) * step)
	var reads atomic.Int64
	return func() time.Time {
		return start.Add(time.Duration(reads.Add(1)-1) * step)
	}
}

// TestSixOfFiveAcrossABoundary fires bursts at the atomic SQLite limiter
// on a clock that crosses a window boundary mid-burst. Each window is a
// quota of its own, so each admits exactly its limit; the trial holds,
// and so does its history, whose counts restart at one in the new window.
func TestSixOfFiveAcrossABoundary(t *testing.T) {
	const n, before = 50, 25
	sc := mustLookup(t, "six-of-five")
	for trial := range 3 {
		// What is judged here is the windows, on a made-up clock; a burst of
		// 50 under -race on a busy machine can be released over more than
		// the default bound, which would make the trial inconclusive for a
		// reason this test is not about.
		res, err := engine.Run(context.Background(), engine.Plan{Scenario: sc, Targets: []string{"sqlite"}, Requests: n, Trials: 1, Seed: int64(trial + 1),
			Options:  []targets.Option{targets.WithClock(straddlingClock(WindowLength, before))},
			Evidence: engine.Evidence{MaxSpread: time.Minute}})
		if err != nil {
			t.Fatal(err)
		}
		tr := &res.Targets[0]
		if tr.Error != "" {
			t.Fatal(tr.Error)
		}
		got := tr.Trials[0]
		windows := got.Figures[windowsFigure]
		if len(windows) != 2 {
			t.Fatalf("admitted per window %v, want two windows: the clock did not cross the boundary", windows)
		}
		if got.Broken || got.History != results.Linearizable {
			t.Fatalf("broken %v, history %s: %s %s", got.Broken, got.History, got.Why, got.HistoryWhy)
		}
		if windows[0] != windowLimit || windows[1] != windowLimit || got.Counted != 2*windowLimit {
			t.Errorf("admitted per window %v, counted %d; want %d in each and %d counted", windows, got.Counted, windowLimit, 2*windowLimit)
		}
		if tr.Verdict() != "holds" {
			t.Errorf("verdict %s, want holds", tr.Verdict())
		}
	}
}

// TestRefuteWindowsIsSound generates small random histories counted in two
// windows and checks refuteWindows against an exact search: the history is
// linearizable when some split of the sum read back into the two windows'
// counts, and some choice of window for each failed request, makes each
// window's part linearizable under the quota's model. The refutation may
// only condemn what that search condemns.
func TestRefuteWindowsIsSound(t *testing.T) {
	const limit = 3
	sc := mustLookup(t, "six-of-five")
	quotaModel, model := engine.QuotaModel(limit), engine.LimiterModel(limit, windowFigure)
	quota := quotaModel.Porcupine()
	rng := rand.New(rand.NewPCG(7, 7))
	outcomes := []results.Outcome{results.Allowed, results.Allowed, results.Allowed, results.Refused, results.Errored}
	exact := func(trial *results.Trial) bool {
		var failed []results.Request
		parts := [2][]results.Request{}
		for _, r := range trial.Requests {
			if r.Outcome == results.Errored {
				failed = append(failed, r)
			} else {
				parts[r.Figures[windowFigure]] = append(parts[r.Figures[windowFigure]], r)
			}
		}
		for assign := range 1 << len(failed) {
			for c0 := int64(0); c0 <= trial.Counted; c0++ {
				ok := true
				for w, c := range [2]int64{c0, trial.Counted - c0} {
					part := results.Trial{Requests: slices.Clone(parts[w]), Counted: c}
					for i, r := range failed {
						if assign>>i&1 == w {
							part.Requests = append(part.Requests, r)
						}
					}
					if porcupine.CheckOperations(quota, quotaModel.Operations(&part)) != true {
						ok = false
						break
					}
				}
				if ok {
					return true
				}
			}
		}
		return false
	}
	refuted, accepted := 0, 0
	for range 2000 {
		n := 2 + rng.IntN(7)
		reqs := make([]results.Request, n)
		// Mostly the answers an honest limiter gives, in index order,
		// now and then one that is off, so both sides show up.
		var counts [2]int64
		for i := range reqs {
			invoke := rng.IntN(20)
			o := outcomes[rng.IntN(len(outcomes))]
			w := int64(rng.IntN(2))
			if i < 2 {
				// Both windows answered at least once, or it is not
				// this case.
				o, w = results.Allowed, int64(i)
			}
			var v int64
			switch {
			case o == results.Allowed && counts[w] < limit:
				counts[w]++
				v = counts[w]
			case o == results.Allowed:
				v = counts[w] + 1
			default:
				v = counts[w]
			}
			if rng.IntN(6) == 0 {
				v = int64(rng.IntN(limit + 2))
			}
			reqs[i] = req(i, invoke, invoke+1+rng.IntN(20), o, v)
			reqs[i].Figures = map[string]int64{windowFigure: w}
		}
		counted := counts[0] + counts[1]
		if rng.IntN(3) == 0 {
			counted = int64(rng.IntN(2*limit + 2))
		}
		trial := results.Trial{Key: "k", Requests: reqs, Counted: counted}
		trial.Count()
		sc.Judge(&trial, "t")
		why := model.Refute(&trial)
		ok := exact(&trial)
		if why != "" && ok {
			t.Fatalf("refuted (%s) a history the exact search accepts: %+v counted %d", why, trial.Requests, trial.Counted)
		}
		if why != "" {
			refuted++
		}
		if ok {
			accepted++
		}
	}
	t.Logf("%d refuted, %d accepted of 2000", refuted, accepted)
	if refuted == 0 || accepted == 0 {
		t.Errorf("%d refuted, %d accepted of 2000: the generator misses a side", refuted, accepted)
	}
}

// TestWindowsStillCatchBreaks: splitting a history by window forgives a
// second window's fresh counts, never a break inside one window.
func TestWindowsStillCatchBreaks(t *testing.T) {
	sc := mustLookup(t, "six-of-five")
	in := func(r results.Request, w int64) results.Request {
		r.Figures = map[string]int64{windowFigure: w}
		return r
	}
	tests := []struct {
		name    string
		counted int64
		reqs    []results.Request
		want    results.HistoryVerdict
		why     string
	}{
		{"fresh count in the next window", 3, []results.Request{in(req(0, 0, 5, results.Allowed, 1), 7), in(req(1, 0, 5, results.Allowed, 2), 7), in(req(2, 6, 9, results.Allowed, 1), 8)}, results.Linearizable, ""},
		{"two grants at one count in a window", 3, []results.Request{in(req(0, 0, 5, results.Allowed, 1), 7), in(req(1, 0, 5, results.Allowed, 1), 7), in(req(2, 6, 9, results.Allowed, 1), 8)}, results.NotLinearizable,
			"requests 0 and 1 were both granted at count 1 in window 7"},
		{"a refusal below the limit", 2, []results.Request{in(req(0, 0, 5, results.Allowed, 1), 7), in(req(1, 0, 5, results.Refused, 1), 7), in(req(2, 6, 9, results.Allowed, 1), 8)}, results.NotLinearizable,
			"request 1 was refused at count 1 in window 7, not at the limit of 5"},
		{"a grant never counted", 2, []results.Request{in(req(0, 0, 5, results.Allowed, 1), 7), in(req(1, 0, 5, results.Allowed, 2), 7), in(req(2, 6, 9, results.Allowed, 1), 8)}, results.NotLinearizable,
			"the answers in 2 windows prove 3 counted, yet the store read back 2"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			trial := synthetic(sc, tt.counted, tt.reqs...)
			got, why := engine.CheckHistory(sc, &trial, 10*time.Second)
			if got != tt.want || why != tt.why {
				t.Errorf("checkHistory = %s, %q; want %s, %q", got, why, tt.want, tt.why)
			}
			// The search alone, split by window, agrees on the windows'
			// own answers (the read-back across windows is refute's).
			if tt.name != "a grant never counted" {
				wantSearch := map[results.HistoryVerdict]porcupine.CheckResult{results.Linearizable: porcupine.Ok, results.NotLinearizable: porcupine.Illegal}[tt.want]
				if s := searchOnly(t, sc, &trial); s != wantSearch {
					t.Errorf("search alone: %s, want %s", s, wantSearch)
				}
			}
		})
	}
}
