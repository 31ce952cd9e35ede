package scenarios

import (
	"context"
	"fmt"
	"math"
	"time"

	"github.com/racelab/racelab/scenarios/engine"
	"github.com/racelab/racelab/scenarios/results"
	"github.com/racelab/racelab/targets"
	"github.com/racelab/racelab/targets/story"
)

// dailyLimit is the free tier of six-become-four, downloads a visitor a
// UTC day: the download op's default limit, five.
var dailyLimit = defaultLimit(story.OpDownload)

var sixBecomeFour = engine.Define(engine.Scenario{
	Tale: engine.Tale{
		Name:  "six-become-four",
		Title: "a free tier of five downloads a day; the counter lets more through and counts fewer",
		Story: "A tool grants five original-quality downloads a visitor a day, then " +
			"asks for a paid plan. The first version kept the count in a key-value " +
			"store: read it, refuse at five, otherwise write it plus one. Its author " +
			"downloaded six images in a row and the counter said four, because reads " +
			"are cached and the check and the write are separate steps. Fired all " +
			"at once, every request reads the same count and every one is granted. " +
			"One single-threaded object per visitor, or one conditional upsert, makes " +
			"the check and the increment a single step: 5 granted, the rest refused, " +
			"counter at 5.",
		Rule: fmt.Sprintf("at most %d downloads granted a visitor a day, and every granted download counted", dailyLimit),
		Fix: "One object per visitor, addressed by a hash of the IP, receives every " +
			"download of that visitor and handles them one at a time: while it awaits " +
			"its own storage no other request is delivered to it, so the check and " +
			"the increment are one step, and its storage is strongly consistent, so " +
			"no read is stale. A refused download is not counted, and the day and the " +
			"count live in one key that starts again when the day changes, so nothing " +
			"needs cleaning up. A conditional upsert (… DO UPDATE … WHERE count < 5 " +
			"RETURNING count) does the same in one SQL statement.",
		Needs: "download quota",
		// The story's own cast: KV against one Durable Object per visitor.
		// Both run in virtual time, so the default run replays exactly.
		Lineup:    []string{"kv", "actor"},
		KeyPrefix: "visitor",
	},
	Request: engine.Request{
		DefaultRequests:    12,
		SequentialRequests: 6, // six images, one after another
		Op:                 story.OpDownload,
		Limit:              dailyLimit,
	},
	Verdict: engine.Verdict{
		Model:  engine.QuotaModel(dailyLimit),
		Damage: results.OverLost("%d over the limit", "%d never counted"),
		Tell: func(t *results.Trial, target string) string {
			return fmt.Sprintf("%s: %s granted, %d refused, counter at %d", target,
				results.Plural(int64(t.Allowed), "download"), t.Refused, t.Counted)
		},
		Judge: func(t *results.Trial, target string) {
			judgeLimit(t, max(0, int64(t.Allowed)-dailyLimit), func(allowed int64) string {
				return fmt.Sprintf("%s: %s granted against a limit of %d, counter at %d", target,
					results.Plural(allowed, "download"), dailyLimit, t.Counted) + overLimitWords(t)
			}, func(allowed int64) string {
				return fmt.Sprintf("%s: %s granted, yet the counter is at %d: refused downloads were counted",
					target, results.Plural(allowed, "download"), t.Counted)
			})
		},
	},
	Teaching: engine.Teaching{
		Extras: []engine.Extra{{After: "race", Replay: sixInARow}, {After: "fix", Replay: pastMidnight}},
	},
}, func(s story.Quota, ctx context.Context, key string, _ int) engine.Answer {
	return engine.AnswerOf(s.Consume(ctx, key, dailyLimit))
}, story.Quota.Count)

// SequentialTrials is how many times explain plays six downloads in a
// row: a stale read one client makes is rare, so one trial would mostly
// show nothing, and a rate needs many.
const SequentialTrials = 1000

// sixInARow replays the story's other half on the naive target: the
// downloads one after another, none overlapping, SequentialTrials times.
// It shows the first trial whose count fell behind (the first one when
// none did) and says how often that happened, with its bound. On a
// simulated KV target left on its default route it also measures the same
// downloads spread over locations, visitors behind different points of
// presence, which is worse.
func sixInARow(ctx context.Context, x *engine.Explainer) ([]engine.Replay, error) {
	rate := func(target string) (*results.TargetResult, error) {
		plan := x.Plan(target)
		plan.Sequential, plan.Trials = true, SequentialTrials
		return x.Replay(ctx, plan)
	}
	tr, err := rate(x.Target)
	if err != nil {
		return nil, err
	}
	t := &tr.Trials[0]
	for i := range tr.Trials {
		if tr.Trials[i].Broken {
			t = &tr.Trials[i]
			break
		}
	}
	outcome := fmt.Sprintf("%s. From one client, the rule broke in %s", x.Scenario.Account(t, tr.Target), brokeIn(tr))
	if spread, ok := spreadOf(x.Target); ok {
		sr, err := rate(spread)
		if err != nil {
			return nil, err
		}
		outcome += fmt.Sprintf("; spread over locations (%s), as for visitors behind different points of presence, in %s", spread, brokeIn(sr))
	}
	outcome += "."
	return []engine.Replay{{
		Heading: fmt.Sprintf("No overlap needed: %s one after another on %s, %s apart (trial %d of %d)",
			results.Plural(int64(len(t.Requests)), "request"), tr.Target, engine.DefaultGap, t.Index+1, SequentialTrials),
		Target: tr.Target, Clock: tr.Clock, Trial: t, Outcome: outcome,
	}}, nil
}

// brokeIn says how many of a target's trials broke, with the bound on the
// rate.
func brokeIn(tr *results.TargetResult) string {
	b := tr.Evidence()
	return fmt.Sprintf("%d of %d trials (%s; at most %s at %s confidence)",
		b.Broken, b.Trials, results.Percent(float64(b.Broken)/float64(max(b.Trials, 1))), results.Percent(math.Round(b.Upper*1000)/1000), results.Percent(b.Level))
}

// spreadOf is target with its requests spread over locations, when target
// is the simulated KV store on its default, sticky route.
func spreadOf(target string) (string, bool) {
	spec, err := targets.Parse(target)
	if err != nil || spec.URL != nil || spec.Store != "kv" || spec.Params.Has("route") {
		return "", false
	}
	if len(spec.Params) == 0 {
		return spec.Raw + "?route=spread", true
	}
	return spec.Raw + "&route=spread", true
}

// pastMidnight shows the day rolling over by itself on the fixed target,
// when it runs in virtual time: the clock starts just before midnight UTC
// and the downloads go on.
func pastMidnight(ctx context.Context, x *engine.Explainer) ([]engine.Replay, error) {
	if x.Fix.Clock != results.ClockVirtual {
		return nil, nil
	}
	plan := x.Plan(x.Fixed)
	plan.Sequential, plan.Requests, plan.AcrossMidnight = true, 8, true
	plan.Options = []targets.Option{targets.WithStart(engine.Midnight.Add(-15 * time.Second))}
	tr, err := x.Replay(ctx, plan)
	if err != nil {
		return nil, err
	}
	return []engine.Replay{{
		Heading: fmt.Sprintf("Midnight on %s: eight downloads from 23:59:45 UTC, %s apart", tr.Target, engine.DefaultGap),
		Target:  tr.Target, Clock: tr.Clock, Trial: &tr.Trials[0],
		Outcome: fmt.Sprintf("%s: the day in its one key changed at midnight and the count started again at 1, with nothing to clean up and no expiry to schedule", tr.Target),
	}}, nil
}
