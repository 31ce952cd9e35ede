package scenarios

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"slices"
	"testing"
	"time"

	"github.com/racelab/racelab/scenarios/engine"
	"github.com/racelab/racelab/scenarios/results"
	"github.com/racelab/racelab/targets/story"
)

// windowLimit is six-of-five's limit at its defaults, its op's.
const windowLimit = story.WindowLimit

// knobs are the settings of knob names and their texts, in pairs.
func knobs(pairs ...string) results.Settings {
	var s results.Settings
	for i := 0; i+1 < len(pairs); i += 2 {
		s.Set(pairs[i], pairs[i+1])
	}
	return s
}

// vary is the story name with settings set, or the test stops.
func vary(t *testing.T, name string, set results.Settings) *engine.Scenario {
	t.Helper()
	sc, err := Lookup(name)
	if err != nil {
		t.Fatal(err)
	}
	v, err := With(sc, set)
	if err != nil {
		t.Fatalf("%s with %+v: %v", name, set, err)
	}
	return v
}

// runStory runs trials of sc on targets at seed and returns the result.
func runStory(t *testing.T, sc *engine.Scenario, trials int, seed int64, targets ...string) *results.Result {
	t.Helper()
	res, err := engine.Run(context.Background(), engine.Plan{Scenario: sc, Targets: targets, Trials: trials, Seed: seed})
	if err != nil {
		t.Fatal(err)
	}
	ranEveryTarget(t, res.Shortfalls())
	return res
}

// A burst of 12 is the limiter's worst case: KV admits every one and
// breaks both rules; one object per caller and one upsert admit exactly
// the limit, and the soft rule holds with them.
func TestSixOfFiveBurst(t *testing.T) {
	sc := vary(t, "six-of-five", results.Settings{})
	res := runStory(t, sc, 10, 3, "kv", "actor", "sqlite")
	if res.Soft == "" || res.Settings == nil || res.Settings.Knobs["limit"] != "5" {
		t.Fatalf("soft %q, settings %+v; want the soft rule and the limit recorded", res.Soft, res.Settings)
	}
	for _, tr := range res.Targets {
		s := tr.Summary()
		switch tr.Target {
		case "kv":
			if s.Broken != 10 || s.SoftBroken != 10 || s.Allowed.Min <= windowLimit+DefaultTolerance {
				t.Errorf("kv: broken %d, soft %d, allowed %+v; want every trial over both rules", s.Broken, s.SoftBroken, s.Allowed)
			}
		default:
			// SQLite plays on the real clock: a burst that straddles a
			// minute falls in two windows and is admitted the limit in
			// each, so every window, not every trial, holds exactly the
			// limit.
			w := s.Figures[windowsFigure]
			if s.Broken != 0 || s.SoftBroken != 0 || s.Allowed.Min != windowLimit || s.Allowed.Max > 2*windowLimit || len(w) != 1 || w[windowLimit] < 10 {
				t.Errorf("%s: broken %d, soft %d, allowed %+v, windows %v; want exactly %d a window", tr.Target, s.Broken, s.SoftBroken, s.Allowed, s.Figures[windowsFigure], windowLimit)
			}
		}
	}
}

// A bot at a steady 20/s: KV admits the limit in every window and more
// in some, and every admission is in a window of the tally; the object
// admits exactly the limit. The same seed gives the same bytes.
func TestSixOfFiveStream(t *testing.T) {
	sc := vary(t, "six-of-five", knobs("rate", "20/s"))
	// Ten trials of some 1,200 requests each: seed 5 breaks kv in three
	// of them.
	const trials = 10
	var out [2][]byte
	for i := range out {
		res := runStory(t, sc, trials, 5, "kv", "actor")
		if res.Stream == "" || res.Requests != int(sc.Stream.Schedule.Expected()) {
			t.Fatalf("stream %q, requests %d; want a stream result", res.Stream, res.Requests)
		}
		var err error
		if out[i], err = json.Marshal(res); err != nil {
			t.Fatal(err)
		}
		kv, actor := res.Targets[0].Summary(), res.Targets[1].Summary()
		kvWindows, actorWindows := kv.Figures[windowsFigure], actor.Figures[windowsFigure]
		if kvWindows[windowLimit-1] > 0 || kv.Broken == 0 || kv.Allowed.Min < windowLimit {
			t.Errorf("kv: windows %v, broken %d; want at least the limit in each window and some over it", kvWindows, kv.Broken)
		}
		if actor.Broken != 0 || len(actorWindows) != 1 || actorWindows[windowLimit] != trials {
			t.Errorf("actor: broken %d, windows %v; want exactly %d in each of %d windows", actor.Broken, actorWindows, windowLimit, trials)
		}
		if err := Check(res, time.Second); err != nil {
			t.Errorf("a stream result does not read back: %v", err)
		}
	}
	if !bytes.Equal(out[0], out[1]) {
		t.Error("two runs of the same seed differ")
	}
}

// Across a boundary, each window keeps its limit on the object, and the
// span of one window's length admits twice it.
func TestSixOfFiveRollover(t *testing.T) {
	sc := vary(t, "six-of-five", knobs("rate", "1/s", "arrivals", "even", "rollover", "true"))
	res := runStory(t, sc, 3, 1, "actor")
	for _, trial := range res.Targets[0].Trials {
		if windows := trial.Figures[windowsFigure]; trial.Broken || !slices.Equal(windows, []int64{windowLimit, windowLimit}) {
			t.Errorf("trial %d: broken %v, windows %v; want %d and %d", trial.Index, trial.Broken, windows, windowLimit, windowLimit)
		}
	}
}

// A saved result whose soft verdict was changed is refused on reading.
func TestSoftVerdictIsRechecked(t *testing.T) {
	res := runStory(t, vary(t, "six-of-five", results.Settings{}), 2, 1, "kv")
	res.Targets[0].Trials[0].SoftBroken = false
	if err := Check(res, time.Second); !errors.Is(err, engine.ErrInconsistent) {
		t.Errorf("Check = %v; want ErrInconsistent", err)
	}
}

// Stock K: the rule is successes ≤ K, and every store's checkout
// generalises; the naive KV shop oversells.
func TestFiveCheckoutsStock(t *testing.T) {
	sc := vary(t, "five-checkouts", knobs("stock", "3"))
	if sc.Settings == nil || sc.Settings.Knobs["stock"] != "3" {
		t.Fatalf("settings %+v; want the stock recorded", sc.Settings)
	}
	res, err := engine.Run(context.Background(), engine.Plan{Scenario: sc, Targets: []string{"kv", "actor", "sqlite", "sqlite:naive"}, Requests: 10, Trials: 10, Seed: 2})
	if err != nil {
		t.Fatal(err)
	}
	for _, tr := range res.Targets {
		s := tr.Summary()
		switch tr.Target {
		case "actor", "sqlite":
			if s.Broken != 0 || s.Allowed.Min != 3 || s.Allowed.Max != 3 || s.CountedMin != 3 || s.CountedMax != 3 {
				t.Errorf("%s: broken %d, allowed %+v, counted %d-%d; want 3 and 3 in every trial", tr.Target, s.Broken, s.Allowed, s.CountedMin, s.CountedMax)
			}
		default:
			if s.Broken < 8 {
				t.Errorf("%s: broke in %d of 10 trials, want at least 8", tr.Target, s.Broken)
			}
		}
	}
	if def := vary(t, "five-checkouts", knobs("stock", "1")); def.Settings != nil {
		t.Errorf("stock 1 records settings %+v; want none, as before", def.Settings)
	}
}

// A setting of another story, or out of range, is a usage error.
func TestSettingsAreChecked(t *testing.T) {
	for _, c := range []struct {
		story string
		set   results.Settings
	}{
		{"six-of-five", knobs("stock", "3")},
		{"ten-hits-one-view", knobs("rate", "20/s")},
		{"six-of-five", knobs("tolerance", "-1")},
		{"six-of-five", knobs("rollover", "true")},
		{"six-of-five", knobs("rate", "1000/s")},
		{"six-of-five", knobs("window", "soon")},
		{"stale-plan", knobs("limit", "3")},
		{"stale-plan", knobs("via", "browser")},
		{"six-of-five", knobs("via", "extension")},
		{"six-of-five", knobs("for", "1m")},
		{"stale-plan", knobs("rate", "100/s", "for", "24h")},
		{"stale-plan", knobs("rollover", "true")},
	} {
		sc, _ := Lookup(c.story)
		if _, err := With(sc, c.set); !errors.Is(err, results.ErrUsage) {
			t.Errorf("%s with %+v: %v; want a usage error", c.story, c.set, err)
		}
	}
}

// The explanations of the new stories run to their endings.
func TestExplainEndings(t *testing.T) {
	for _, name := range []string{"six-of-five", "stale-plan"} {
		sc, _ := Lookup(name)
		e, err := engine.Explain(context.Background(), &engine.Explainer{Scenario: sc, Target: "kv", Fixed: "actor", Seed: 7})
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		if e.Ending == nil || len(e.Ending.Items) < 3 {
			t.Errorf("%s: ending %+v; want the exercise worked through", name, e.Ending)
		}
	}
}
