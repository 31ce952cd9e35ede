package scenarios

import (
	"context"
	"fmt"
	"time"

	"github.com/racelab/racelab/scenarios/engine"
	"github.com/racelab/racelab/scenarios/pace"
	"github.com/racelab/racelab/scenarios/results"
	"github.com/racelab/racelab/targets"
	"github.com/racelab/racelab/targets/story"
)

// explainTrials bounds how many stream trials an explanation plays to
// find one worth showing.
const explainTrials = 20

// maxLanes bounds the lanes a trimmed stream trial shows.
const maxLanes = 16

// playStream plays the explanation's trials on target, the story with its
// settings changed by change, traced when trace (to show lanes) and not
// when only the figures are wanted, and returns the target's result.
func playStream(ctx context.Context, x *engine.Explainer, target string, trials int, trace bool, change func(*results.Settings)) (*results.TargetResult, error) {
	set := x.Scenario.Settings.Clone()
	change(&set)
	sc, err := x.Scenario.Vary(set)
	if err != nil {
		return nil, err
	}
	p := x.Plan(target)
	p.Scenario, p.Trials, p.Requests, p.Trace = sc, trials, 0, trace
	return x.Replay(ctx, p)
}

// streamReplay plays a bot streaming at 20/s on the naive target until a
// window admits more than the limit, and shows that window's first lanes:
// the race without a burst.
func streamReplay(ctx context.Context, x *engine.Explainer) ([]engine.Replay, error) {
	const rate = 20
	tr, err := playStream(ctx, x, x.Target, explainTrials, true, func(s *results.Settings) { botRateKnob.Put(s, rate) })
	if err != nil {
		return nil, err
	}
	pick := &tr.Trials[0]
	for i := range tr.Trials {
		if tr.Trials[i].Over > 0 {
			pick = &tr.Trials[i]
			break
		}
	}
	shown := trimmed(pick)
	heading := fmt.Sprintf("A bot at %d/s for one window on %s (the first %d of %d requests; seed %d)",
		rate, tr.Target, len(shown.Requests), len(pick.Requests), x.Seed)
	outcome := x.Scenario.Account(pick, tr.Target)
	if pick.Over == 0 {
		outcome += fmt.Sprintf("; no window of %d went over the limit", len(tr.Trials))
	} else {
		outcome += fmt.Sprintf(" (window %d of the %d played)", pick.Index+1, len(tr.Trials))
	}
	return []engine.Replay{{Heading: heading, Target: tr.Target, Clock: tr.Clock, Trial: &shown, Outcome: outcome}}, nil
}

// rolloverReplays streams one request a second from half a window before
// a boundary to half a window after it on the fixed target: each window
// keeps its limit, and the span across the boundary gets twice it.
func rolloverReplays(ctx context.Context, x *engine.Explainer) ([]engine.Replay, error) {
	if x.Fix.Clock != results.ClockVirtual {
		return nil, nil // a window of real time is too long to wait for
	}
	tr, err := playStream(ctx, x, x.Fixed, 1, true, func(s *results.Settings) {
		botRateKnob.Put(s, 1)
		arrivalsKnob.Put(s, pace.Even)
		rolloverKnob.Put(s, true)
	})
	if err != nil {
		return nil, err
	}
	t := &tr.Trials[0]
	shown := trimmed(t)
	w := windowOf(x.Scenario)
	return []engine.Replay{{
		Heading: fmt.Sprintf("The rollover on %s: one request a second from %s before a window boundary to %s after it (admitted ones, and the refusal after each run)",
			tr.Target, results.DurationWords(w.Length/2), results.DurationWords(w.Length/2)),
		Target: tr.Target, Clock: tr.Clock, Trial: &shown,
		Outcome: fmt.Sprintf("%s: %s admitted within one window's length (%s): every window kept its limit of %d, and the span across the boundary got %d, on any store",
			tr.Target, results.Plural(int64(t.Allowed), "request"), perWindow(t.Figures[windowsFigure]), w.Limit, t.Allowed),
	}}, nil
}

// trimmed is t with only the lanes worth reading: every admitted request
// and the first refusal after each run of them, at most maxLanes.
func trimmed(t *results.Trial) results.Trial {
	c := *t
	c.Requests = nil
	for i, r := range t.Requests {
		keep := r.Outcome != results.Refused || i > 0 && t.Requests[i-1].Outcome == results.Allowed
		if keep && len(c.Requests) < maxLanes {
			c.Requests = append(c.Requests, r)
		}
	}
	return c
}

// records is what expiry left of one caller's windows on target: three
// requests a second apart, then the window and its expiry past, then a
// count of the records still held.
func records(ctx context.Context, x *engine.Explainer, target string) (int64, time.Duration, error) {
	w := windowOf(x.Scenario)
	cat := x.Catalog
	if cat == nil {
		cat = targets.Builtin()
	}
	t, err := cat.Open(ctx, target, targets.WithSeed(x.Seed), targets.WithVirtualTime(true))
	if err != nil {
		return 0, 0, err
	}
	defer t.Close()
	lim, ok := t.Store.(story.Limiter)
	v := engine.VirtualClock(t.Store)
	if !ok || v == nil {
		return 0, 0, fmt.Errorf("%s: no rate limiter in virtual time", target)
	}
	wait := w.Length + w.Expiry() + time.Second
	var n int64
	var rerr error
	err = v.Run(ctx, 1, func(ctx context.Context, _ int) {
		for range 3 {
			if _, rerr = lim.Admit(ctx, "caller-ttl", w); rerr != nil {
				return
			}
			if rerr = v.Sleep(ctx, time.Second); rerr != nil {
				return
			}
		}
		if rerr = v.Sleep(ctx, wait); rerr != nil {
			return
		}
		n, rerr = lim.Records(ctx, "caller-ttl", w)
	})
	if err == nil {
		err = rerr
	}
	return n, wait, err
}

// limiterExercise is the seed's exercise worked through: each part of the
// KV rate limiter marked approximate or strict, with what the replays and
// a look after the expiry showed.
func limiterExercise(ctx context.Context, x *engine.Explainer) (engine.Ending, error) {
	w := windowOf(x.Scenario)
	naive, wait, err := records(ctx, x, x.Target)
	if err != nil {
		return engine.Ending{}, err
	}
	fixed, _, err := records(ctx, x, x.Fixed)
	if err != nil {
		return engine.Ending{}, err
	}
	most := x.Race.Summary().Allowed.Max
	return engine.Ending{
		Heading: "The exercise: which parts are approximate, which strict",
		Items: []engine.EndingItem{
			{Part: "The counter", Mark: "approximate on KV, strict in one object or one statement", Why: fmt.Sprintf("Read, compare, write is three steps with no lock: the burst above got %d through a limit of %d, and a steady stream gets one or two more through in some windows. %s admits exactly %d.",
				most, w.Limit, x.Fixed, w.Limit)},
			{Part: "The window rollover", Mark: "approximate on every store", Why: fmt.Sprintf("The count starts over at each boundary of floor(now / %s), so a caller can spend one window's allowance at its end and the next one's at its start: twice the limit within one window's length, as the rollover replay shows on %s. Each window is exact; a span across two is not.",
				results.DurationWords(w.Length), x.Fixed)},
			{Part: "The TTL cleanup", Mark: "approximate, and harmless", Why: fmt.Sprintf("Each window's key expires max(60 s, window) after its last write, on the platform's own schedule; the window number in the key already retires it, so no rule depends on when it goes. %s after a caller's last request, %s held %s; %s held %s until the caller's next request sweeps them.",
				results.DurationWords(wait), x.Target, results.Plural(naive, "window record"), x.Fixed, results.Plural(fixed, "window record"))},
			{Part: "The block decision", Mark: "approximate on KV", Why: "It compares a count that may be stale (a cached read) or about to be overwritten (a racing write), so it can admit over the limit, never under it: fine for keeping a bot off a free endpoint."},
		},
		Closing: "If the limit became part of a paid contract, the counter and the block decision " +
			"would need strong coordination: one object per caller, or one conditional upsert, " +
			"deciding and counting in one step. The rollover would need the contract to say " +
			"\"per calendar window\", or a sliding window kept in the same strong store. The " +
			"TTL cleanup can stay as it is.",
	}, nil
}
