package scenarios_test

import (
	"context"
	"fmt"
	"testing"

	"github.com/racelab/racelab/scenarios/engine"
	"github.com/racelab/racelab/scenarios/results"
	"github.com/racelab/racelab/targets/story"
)

// threeADay is a story written the way every story is, in this one file,
// to prove the shape: a quota of three downloads a day, played through the
// story.Quota interface. Nothing else in scenarios, targets, report or cmd
// knows it, yet the engine runs it on every store that plays it, checks
// its histories, judges it and explains it. Registered (one line in
// scenario.go's registry), it would be a story of the CLI too.
var threeADay = engine.Define(engine.Scenario{
	Tale: engine.Tale{
		Name:      "three-a-day",
		Title:     "a quota of three a day",
		Story:     "A visitor may download three files a day.",
		Rule:      "at most 3 downloads granted a visitor a day, and every granted download counted",
		Fix:       "One object per visitor, or one conditional upsert.",
		Needs:     "download quota",
		Lineup:    []string{"kv", "actor", "sqlite"},
		KeyPrefix: "visitor",
	},
	Request: engine.Request{
		DefaultRequests: 8,
		Op:              "download",
		Limit:           3,
	},
	Verdict: engine.Verdict{
		Model: engine.QuotaModel(3),
		Judge: capJudge(3, "download"),
		Tell: func(t *results.Trial, target string) string {
			return fmt.Sprintf("%s: %d granted, counter at %d", target, t.Allowed, t.Counted)
		},
	},
}, func(s story.Quota, ctx context.Context, key string, _ int) engine.Answer {
	return engine.AnswerOf(s.Consume(ctx, key, 3))
}, story.Quota.Count)

func TestANewStoryIsOneFile(t *testing.T) {
	res, err := engine.Run(context.Background(), engine.Plan{Scenario: threeADay, Trials: 5, Seed: 3})
	if err != nil {
		t.Fatal(err)
	}
	kv, actor, sqlite := res.Targets[0].Summary(), res.Targets[1].Summary(), res.Targets[2].Summary()
	if kv.Broken != 5 || actor.Broken != 0 || sqlite.Broken != 0 {
		t.Errorf("broken in %d, %d, %d of 5 trials on kv, actor, sqlite; want 5, 0, 0", kv.Broken, actor.Broken, sqlite.Broken)
	}
	if actor.Allowed.Min != 3 || actor.Allowed.Max != 3 || actor.CountedMin != 3 || actor.HistoryChecked != 5 {
		t.Errorf("actor: allowed %+v, counted from %d, %d histories checked; want 3, 3, 5", actor.Allowed, actor.CountedMin, actor.HistoryChecked)
	}
	if fs := res.Shortfalls(); len(fs) != 0 {
		t.Errorf("shortfalls %+v; want none (kv is expected to break)", fs)
	}
	e, err := engine.Explain(context.Background(), &engine.Explainer{Scenario: threeADay, Target: "kv", Fixed: "actor", Seed: 3})
	if err != nil || len(e.Replays) != 2 {
		t.Errorf("explain: %d replays, %v; want the race and the fix", len(e.Replays), err)
	}
}
