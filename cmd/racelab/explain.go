package main

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/racelab/racelab/report"
	"github.com/racelab/racelab/scenarios"
	"github.com/racelab/racelab/targets"
	"github.com/racelab/racelab/targets/shop"
	"github.com/spf13/cobra"
)

// explainOptions is what `racelab explain` was asked to do.
type explainOptions struct {
	Scenario string
	Target   string
	Fixed    string
	Seed     int64
	Requests int
	// RequestsSet: an explicit -n 0 is a mistake, as in run, not the
	// story's default.
	RequestsSet bool
}

func newExplainCmd(s Streams) *cobra.Command {
	o := &explainOptions{}
	c := &cobra.Command{
		Use:   "explain SCENARIO",
		Short: "Tell a story and replay its race step by step, then the fix",
		Long: `Tell a scenario's story and its hard rule, replay one trial on the naive
target as a timeline (one lane per request: what it read, what it wrote,
when its write landed, and whose update it erased), replay the same trial
on a fixed target, and say how the fix works.

--target names a target that breaks the rule (a naive one, or your own
service by URL) and --fixed one that holds it: a fixed target that breaks
has no fix to show, and a named target that holds has no race to replay.

The timelines are drawn from what the stores recorded during a real replay
in virtual time: the same --seed shows the same race on every screen.`,
		Example: `  racelab explain ten-hits-one-view
  racelab explain six-become-four --seed 7
  racelab explain five-checkouts --target actor:await-fetch --fixed actor`,
		Args:              exactArgs(1, "one scenario"),
		ValidArgsFunction: completeScenarios,
		RunE: func(c *cobra.Command, args []string) error {
			o.Scenario = args[0]
			o.RequestsSet = c.Flags().Changed("requests")
			return runExplain(c.Context(), s, o)
		},
	}
	f := c.Flags()
	f.StringVarP(&o.Target, "target", "t", "kv", "the naive target whose race is replayed")
	f.StringVar(&o.Fixed, "fixed", "actor", "the fixed target replayed after it")
	f.Int64Var(&o.Seed, "seed", 7, "seed of the replay")
	f.IntVarP(&o.Requests, "requests", "n", 0, "requests in the burst (default: the story's own)")
	_ = c.RegisterFlagCompletionFunc("target", completeTargets)
	_ = c.RegisterFlagCompletionFunc("fixed", completeTargets)
	return c
}

func runExplain(ctx context.Context, s Streams, o *explainOptions) error {
	sc, err := scenarios.Lookup(o.Scenario)
	if err != nil {
		return err
	}
	if o.Requests < 0 || o.RequestsSet && o.Requests == 0 || o.Requests > scenarios.MaxRequests {
		return usageError{fmt.Errorf("--requests %d: want a whole number from 1 to %d", o.Requests, scenarios.MaxRequests)}
	}
	if err := checkExplainTargets(sc, o.Target, o.Fixed); err != nil {
		return err
	}
	e := report.Explanation{
		Scenario: sc,
		Footer:   fmt.Sprintf("Replay it: racelab explain %s --seed %d; see more trials: racelab run %s --trials 100", sc.Name, o.Seed, sc.Name),
	}
	base := scenarios.Plan{Scenario: sc, Requests: o.Requests, Seed: o.Seed, Trace: true}
	naive, err := replay(ctx, base, o.Target)
	if err != nil {
		return err
	}
	e.Replays = append(e.Replays, report.Replay{
		Heading: fmt.Sprintf("The race, replayed on %s (%s at once, seed %d)", naive.target.Target, plural(len(naive.trial.Requests), "request"), o.Seed),
		Target:  naive.target.Target, Clock: naive.target.Clock, Trial: naive.trial, Outcome: sc.Outcome(naive.trial, naive.target.Target),
	})
	if sc.SequentialRequests > 0 {
		seq := base
		seq.Sequential = true
		one, err := replay(ctx, seq, o.Target)
		if err != nil {
			return err
		}
		e.Replays = append(e.Replays, report.Replay{
			Heading: fmt.Sprintf("No overlap needed: %s one after another on %s, %s apart", plural(len(one.trial.Requests), "request"), one.target.Target, scenarios.DefaultGap),
			Target:  one.target.Target, Clock: one.target.Clock, Trial: one.trial, Outcome: sc.Outcome(one.trial, one.target.Target),
		})
	}
	fixed, err := replay(ctx, base, o.Fixed)
	if err != nil {
		return err
	}
	if fixed.trial.Broken {
		// A service given by URL is expected to hold, and may not: then
		// "How the fix works" under it would be a lie. Say what happened
		// instead, as run would (exit 3).
		return verdictError{exitRuleBroken, fmt.Sprintf("--fixed %s broke the rule in the replay, so it shows no fix: %s",
			fixed.target.Target, sc.Outcome(fixed.trial, fixed.target.Target))}
	}
	e.Replays = append(e.Replays, report.Replay{
		Heading: fmt.Sprintf("The same burst on %s (%s)", fixed.target.Target, fixed.target.Guarantee),
		Target:  fixed.target.Target, Clock: fixed.target.Clock, Trial: fixed.trial, Outcome: sc.Outcome(fixed.trial, fixed.target.Target),
	})
	if sc.SequentialRequests > 0 && fixed.target.Clock == "virtual" {
		// The day rolls over by itself: start the clock just before
		// midnight UTC and keep downloading.
		night := base
		night.Sequential, night.Requests = true, 8
		night.Options = []targets.Option{targets.WithStart(midnight.Add(-15 * time.Second))}
		m, err := replay(ctx, night, o.Fixed)
		if err != nil {
			return err
		}
		e.Replays = append(e.Replays, report.Replay{
			Heading: fmt.Sprintf("Midnight on %s: eight downloads from 23:59:45 UTC, %s apart", m.target.Target, scenarios.DefaultGap),
			Target:  m.target.Target, Clock: m.target.Clock, Trial: m.trial,
			Outcome: fmt.Sprintf("%s: the day in its one key changed at midnight and the count started again at 1, with nothing to clean up and no expiry to schedule", m.target.Target),
		})
	}
	if sc.Name == "five-checkouts" {
		payments, err := paymentReplays(ctx, o.Seed)
		if err != nil {
			return err
		}
		e.Replays = append(e.Replays, payments...)
	}
	return report.Explain(s.Out, e)
}

// checkExplainTargets refuses a --fixed target that breaks the rule by
// design, and a --target named from the catalog that holds it: either would
// print a story the replay does not tell (a "fix" under a store that loses
// updates, a "race" on one that cannot have it). A URL is the user's own
// service: it may be the race to explain, and is expected to hold as a fix.
func checkExplainTargets(sc *scenarios.Scenario, target, fixed string) error {
	spec, e, err := targets.Lookup(target)
	if err != nil {
		return err
	}
	if e.Holds && spec.URL == nil {
		return usageError{fmt.Errorf("--target %s holds the rule, so it has no race to replay; want a target that breaks it: %s",
			spec.Name(), orList(catalogTargets(sc, false)))}
	}
	spec, e, err = targets.Lookup(fixed)
	if err != nil {
		return err
	}
	if !e.Holds {
		return usageError{fmt.Errorf("--fixed %s breaks the rule by design, so it has no fix to show; want a target that holds it: %s",
			spec.Name(), orList(append(catalogTargets(sc, true), "your service's URL")))}
	}
	return nil
}

// catalogTargets lists the targets named in the catalog (not URLs) that
// can play sc and are expected to hold (holds) or to break it.
func catalogTargets(sc *scenarios.Scenario, holds bool) []string {
	var out []string
	for _, e := range targets.Entries() {
		if e.Name == "http" || e.Name == "https" || e.Holds != holds || !e.Abilities.Has(sc.Needs) {
			continue
		}
		out = append(out, e.Name)
	}
	return out
}

// orList writes "a, b or c".
func orList(words []string) string {
	if len(words) <= 1 {
		return strings.Join(words, "")
	}
	return strings.Join(words[:len(words)-1], ", ") + " or " + words[len(words)-1]
}

// paymentReplays finds the seed's first payment script in which the
// reserve-only shop sells a painting twice, and replays that same script
// on the shop that expires the earlier session first.
func paymentReplays(ctx context.Context, seed int64) ([]report.Replay, error) {
	const search = 1000
	for i := range search {
		naive, err := scenarios.PlayPayment(ctx, shop.DesignReserveOnly, seed, i)
		if err != nil {
			return nil, err
		}
		if !naive.Broken {
			continue
		}
		fixed, err := scenarios.PlayPayment(ctx, shop.DesignExpireFirst, seed, i)
		if err != nil {
			return nil, err
		}
		fixedOutcome := "shop:expire-first: painting-2 sold once"
		if fixed.Broken {
			fixedOutcome = fixed.Why
		}
		return []report.Replay{
			{Heading: fmt.Sprintf("The whole checkout, script %d: a 7-minute reservation, a 30-minute payment page", i+1),
				Target: "shop:reserve-only", Clock: "virtual", Trial: &naive, Outcome: naive.Why},
			{Heading: "The same script when the shop expires the earlier session before opening a new one",
				Target: "shop:expire-first", Clock: "virtual", Trial: &fixed, Outcome: fixedOutcome},
		}, nil
	}
	return nil, fmt.Errorf("no double sale in %d payment scripts of seed %d", search, seed)
}

// midnight is the day boundary the explanation of six-become-four crosses.
var midnight = targets.DefaultStart.Truncate(24 * time.Hour).Add(24 * time.Hour)

type replayed struct {
	target *scenarios.TargetResult
	trial  *scenarios.Trial
}

// replay runs one traced trial of plan on target.
func replay(ctx context.Context, plan scenarios.Plan, target string) (replayed, error) {
	plan.Targets = []string{target}
	res, err := scenarios.Run(ctx, plan)
	if err != nil {
		return replayed{}, err
	}
	if res.Interrupted {
		return replayed{}, context.Canceled
	}
	tr := &res.Targets[0]
	if tr.Error != "" {
		return replayed{}, fmt.Errorf("%s", tr.Error)
	}
	return replayed{tr, &tr.Trials[0]}, nil
}

func plural(n int, word string) string {
	if n == 1 {
		return fmt.Sprintf("%d %s", n, word)
	}
	return fmt.Sprintf("%d %ss", n, word)
}
