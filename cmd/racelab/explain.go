package main

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"slices"
	"strings"

	"github.com/spf13/cobra"

	"github.com/racelab/racelab/cmd/racelab/classroom"
	"github.com/racelab/racelab/report"
	"github.com/racelab/racelab/report/output"
	"github.com/racelab/racelab/scenarios"
	"github.com/racelab/racelab/scenarios/engine"
	"github.com/racelab/racelab/targets"
)

// explainOptions is what `racelab explain` was asked to do.
type explainOptions struct {
	catalog  *targets.Catalog
	Scenario string
	Target   string
	Fixed    string
	Seed     int64
	Requests int
	// set tells which flags were given: an explicit -n 0 is a mistake, as
	// in run, not the story's default.
	set func(name string) bool
	// Step waits for Enter between the steps, on a terminal.
	Step bool
	// Until is "broken" to replay until a trial breaks the rule, at most
	// MaxTrials trials (--until, --max-trials).
	Until     string
	MaxTrials int
	Outputs   outputFlags
	Servers   serverFlags
	HTTP      httpFlags
	Store     storeFlags
}

func newExplainCmd(s Streams, cat *targets.Catalog) *cobra.Command {
	o := &explainOptions{catalog: cat}
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
in virtual time: the same --seed shows the same race on every screen.

-o html (or html=FILE) writes the same explanation as one self-contained
page, each replay drawn as an SVG timeline on one shared time axis.`,
		Example: `  racelab explain ten-hits-one-view
  racelab explain six-become-four --seed 7
  racelab explain five-checkouts --target actor:await-fetch --fixed actor
  racelab explain ten-hits-one-view --step
  racelab explain ten-hits-one-view -o html=ten-hits.html`,
		Args:              exactArgs(1, "one scenario ("+strings.Join(scenarios.Names(), ", ")+")"),
		ValidArgsFunction: completeScenarios,
		RunE: func(c *cobra.Command, args []string) error {
			o.Scenario = args[0]
			o.set = c.Flags().Changed
			return runExplain(c.Context(), s, o)
		},
	}
	f := c.Flags()
	f.StringVarP(&o.Target, "target", "t", "kv", "the naive target whose race is replayed")
	f.StringVar(&o.Fixed, "fixed", "actor", "the fixed target replayed after it")
	addSeed(f, &o.Seed, 7, "seed of the replay")
	addRequests(f, &o.Requests, "requests in the burst (default: the story's own)")
	f.StringVar(&o.Until, "until", "", "broken: replay trial after trial until one breaks the rule, and show that one (a race that shows in some trials only)")
	f.IntVar(&o.MaxTrials, "max-trials", engine.DefaultMaxTrials, "with --until broken, the most trials replayed before saying none broke")
	f.BoolVar(&o.Step, "step", false, "on a terminal, wait for Enter before each step: the story, each request of each replay, the fix")
	o.Outputs.register(c, []string{"text", "html", "json"})
	o.Servers.register(f, cat, "targets")
	o.HTTP.registerMapping(f)
	o.Store.register(f)
	_ = c.RegisterFlagCompletionFunc("target", completeTargets)
	_ = c.RegisterFlagCompletionFunc("fixed", completeTargets)
	return c
}

func runExplain(ctx context.Context, s Streams, o *explainOptions) error {
	sc, err := o.Store.lookup(o.Scenario, []string{o.Target, o.Fixed})
	if err != nil {
		return err
	}
	x := &engine.Explainer{Scenario: sc, Catalog: o.catalog, Target: o.Target, Fixed: o.Fixed, Requests: o.Requests, Seed: o.Seed,
		Options: o.Servers.options()}
	if x.MaxTrials, err = o.until(); err != nil {
		return err
	}
	if err := explicitZero(o.set, engine.Wants.Invalid, zeroIf("Requests", o.Requests, o.Requests == 0)); err != nil {
		return err
	}
	given := func(field string) bool { return o.set != nil && o.set(strings.TrimPrefix(flagOf(field), "--")) }
	if err := x.CheckTargets(given); err != nil {
		return err
	}
	// The plan of one replay checks what a run's would: -n, the targets.
	for _, target := range []string{o.Target, o.Fixed} {
		if err := firstError(new(x.Plan(target)).Validate()); err != nil {
			return err
		}
	}
	if err := o.HTTP.apply([]string{o.Target, o.Fixed}, engine.DefaultTimeout, &x.Options, nil); err != nil {
		return err
	}
	outs, err := o.Outputs.parse()
	if err != nil {
		return err
	}
	e, err := engine.Explain(ctx, x)
	if errors.Is(err, engine.ErrFixBroke) {
		return verdictError{exitRuleBroken, "--fixed " + err.Error()}
	}
	if err != nil {
		return err
	}
	e.Footer = classroom.ExplainFooter(sc.Name, o.Seed)
	if len(sc.Lineup) == 0 {
		// A race file replays on the services named, in real time: the
		// way back is the file and the two URLs, not a name and a seed.
		e.Footer = fmt.Sprintf("Replay it: racelab explain %s -t %s --fixed %s; see more trials: racelab run %s -t naive=%s -t fixed=%s --expect naive=breaks --trials 100",
			o.Scenario, o.Target, o.Fixed, o.Scenario, o.Target, o.Fixed)
	}
	render := func(w io.Writer, format string, _ int) error {
		switch format {
		case "html":
			return report.ExplainHTML(w, e)
		case "json":
			enc := json.NewEncoder(w)
			enc.SetIndent("", "  ")
			return enc.Encode(e)
		}
		return report.Explain(w, e) // a handout's width, whatever the terminal
	}
	i := slices.IndexFunc(outs, func(out output.Output) bool { return out.Path == "" && out.Format == "text" })
	if !o.Step || !s.InIsTTY || !s.OutIsTTY || !s.ErrIsTTY || i < 0 {
		// Piped, there is nobody to press Enter, or nobody to read the
		// prompt where it would go (a file, a pipe): the whole text at
		// once, no prompt.
		return output.Write(s.Out, 0, outs, render)
	}
	// The files first, as writeOutputs would, then the steps on the
	// terminal.
	if err := output.Write(s.Out, 0, slices.Delete(slices.Clone(outs), i, i+1), render); err != nil {
		return err
	}
	steps, err := report.ExplainSteps(e)
	if err != nil {
		return err
	}
	return showSteps(ctx, s, steps)
}

// until reads --until and --max-trials: the explainer's MaxTrials, 0
// for one replay.
func (o *explainOptions) until() (int, error) {
	given := o.set != nil && o.set("max-trials")
	switch {
	case o.Until == "" && given:
		return 0, usageError{errors.New("--max-trials bounds --until broken; give --until broken too")}
	case o.Until == "":
		return 0, nil
	case o.Until != "broken":
		return 0, usageError{fmt.Errorf("--until %s: want --until broken (replay until a trial breaks the rule)", o.Until)}
	case o.MaxTrials < 1 || o.MaxTrials > engine.MaxMaxTrials:
		return 0, usageError{fmt.Errorf("--max-trials %d: want a whole number from 1 to %d", o.MaxTrials, engine.MaxMaxTrials)}
	}
	return o.MaxTrials, nil
}

// showSteps writes each step, then, before the next, asks on stderr for
// Enter and waits for a line on stdin (or its end, or Ctrl-C).
func showSteps(ctx context.Context, s Streams, steps []string) error {
	lines := make(chan struct{})
	go func() { // ends with the process if no line ever comes
		in := bufio.NewScanner(s.In)
		for in.Scan() {
			lines <- struct{}{}
		}
		close(lines)
	}()
	for i, step := range steps {
		if _, err := io.WriteString(s.Out, step); err != nil {
			return err
		}
		if i == len(steps)-1 {
			break
		}
		fmt.Fprintf(s.Err, "-- step %d of %d: press Enter for the next --", i+1, len(steps))
		select {
		case _, ok := <-lines:
			if !ok { // stdin closed: show the rest at once
				lines = nil
			}
		case <-ctx.Done():
			fmt.Fprintln(s.Err)
			return ctx.Err()
		}
		if lines == nil {
			fmt.Fprintln(s.Err)
			_, err := io.WriteString(s.Out, strings.Join(steps[i+1:], ""))
			return err
		}
	}
	return nil
}
