package main

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/racelab/racelab/report"
	"github.com/racelab/racelab/report/output"
	"github.com/racelab/racelab/scenarios"
	"github.com/racelab/racelab/scenarios/engine"
	"github.com/racelab/racelab/scenarios/load"
	"github.com/racelab/racelab/scenarios/results"
	"github.com/racelab/racelab/scenarios/shards"
	"github.com/racelab/racelab/targets"
)

// runOptions is everything `racelab run` was asked to do, fresh per call.
type runOptions struct {
	firing     // flags.go: the targets, -o, --seed, --shard… load and verify share
	Scenario   string
	Requests   int
	Trials     int
	Clock      string
	Sequential bool
	Gap        time.Duration
	Timeline   bool
	// KeyChars is what the fresh keys are made of (--key-chars). Not
	// --keys: load's --keys counts keys.
	KeyChars string
	// Parts are the stories' own parts, by flag (--payment): whether
	// each was asked for.
	Parts    map[string]*bool
	Evidence evidenceFlags
	Knobs    knobFlags
	// Background is --background RATE, with its keys and whether it
	// reads the bursts' keys; the load.Runner in background plays it and
	// keeps its summaries.
	Background      string
	BackgroundKeys  int
	BackgroundOnKey bool
	background      *load.Runner
	// part is the story's own part asked for, nil for the bursts.
	part *engine.Part
}

func newRunCmd(s Streams, cat *targets.Catalog, runF func(*runOptions) error) *cobra.Command {
	o := &runOptions{firing: firing{catalog: cat}}
	c := &cobra.Command{
		Use:   "run SCENARIO",
		Short: "Fire simultaneous requests at targets and judge the hard rule",
		Long: `Run a scenario: for each target, fire N requests released together from
one barrier, read back what the store counted, and check the story's hard
rule. Each trial uses fresh state. Without -t, the story's own line-up runs,
naive store first.

` + strings.Join(report.WrapWords("Scenarios: "+strings.Join(scenarios.Names(), ", "), 78, "           "), "\n") + `
` + strings.Join(report.WrapWords("Targets:   "+strings.Join(cat.Names(), ", "), 78, "           "), "\n") + `

A naive target breaking the rule is expected and exits 0; a target expected
to hold that breaks it exits 3.`,
		Example: `  racelab run ten-hits-one-view
  racelab run six-become-four -t actor -n 12
  racelab run five-checkouts -t kv -t actor -t sqlite -n 50 --trials 20
  racelab run ten-hits-one-view -t 'kv?locations=5&cold-read=40ms' --seed 7
  racelab run five-checkouts -o json | jq .targets[].trials[0].release_spread_ns`,
	}
	takesOneStory(c, s, &o.Scenario, &o.set, runner(runF, runRun, o))
	f := c.Flags()
	o.register(c, firingWords{targets: targetsUsage, timeout: "time limit of each request",
		seed: "seed for the simulated stores' random choices (default: random, printed)", quiet: "no progress bar or notices on stderr, and no table on stdout when -o sends every output to a file",
		formats: report.Formats(), sync: true, period: true})
	addRequests(f, &o.Requests, "requests per burst (default: the story's own: 10, 12 or 5)")
	f.IntVar(&o.Trials, "trials", engine.DefaultTrials, "bursts per target, each on fresh state")
	f.StringVar(&o.Clock, "clock", "virtual", "time of the simulated stores (kv, actor): virtual (deterministic, replayable by --seed) or real")
	f.BoolVar(&o.Sequential, "sequential", false, "fire a trial's requests one after another, --gap apart, instead of all at once")
	f.DurationVar(&o.Gap, "gap", engine.DefaultGap, "pause between two requests with --sequential")
	f.StringVar(&o.KeyChars, "key-chars", string(results.KeyASCII), "what the fresh keys are made of: ascii; unicode (Arabic letters and / , %2C + space);\n"+
		"percent (Arabic slugs stored percent-encoded, as WordPress does, so sent encoded twice)")
	o.Parts = map[string]*bool{}
	for _, sc := range scenarios.All() {
		for _, part := range sc.Parts {
			if _, ok := o.Parts[part.Flag]; !ok { // two stories may share a part's flag
				o.Parts[part.Flag] = f.Bool(part.Flag, false, part.Usage)
			}
		}
	}
	f.BoolVar(&o.Timeline, "timeline", false, "under the table, one lane per request of one trial per target: what it read, wrote, and whose update it erased")
	o.Evidence.register(f, false)
	o.Knobs.register(f)
	f.StringVar(&o.Background, "background", "", "open-model load on each target through all of its trials, e.g. 200/s (kv and actor need --clock real);\n"+
		"the report adds its throughput, p99 and errors")
	f.IntVar(&o.BackgroundKeys, "background-keys", load.DefaultKeys, "keys of its own the --background load spreads over")
	f.BoolVar(&o.BackgroundOnKey, "background-on-key", false, "with --background, also read each burst's own key at the same rate")
	_ = c.RegisterFlagCompletionFunc("clock", cobra.FixedCompletions([]string{"virtual", "real"}, cobra.ShellCompDirectiveNoFileComp))
	return c
}

// plan turns the options into an engine.Plan, checking every value, the
// shard flags last.
func (o *runOptions) plan() (engine.Plan, error) {
	sc, err := o.Store.lookup(o.Scenario, o.Targets)
	if err != nil {
		return engine.Plan{}, err
	}
	settings, err := o.Knobs.settings()
	if err != nil {
		return engine.Plan{}, err
	}
	if sc, err = scenarios.With(sc, settings); err != nil {
		return engine.Plan{}, err
	}
	if o.outs, err = o.Outputs.parse(); err != nil {
		return engine.Plan{}, err
	}
	err = explicitZero(o.set, engine.Wants.Invalid,
		zeroIf("Requests", o.Requests, o.Requests == 0), zeroIf("Trials", o.Trials, o.Trials == 0),
		zeroIf("Timeout", o.Timeout, o.Timeout == 0), zeroIf("Gap", o.Gap, o.Gap == 0))
	if err != nil {
		return engine.Plan{}, err
	}
	t, err := o.targeting(sc.Lineup, nil)
	if err != nil {
		return engine.Plan{}, err
	}
	if o.Clock != "virtual" && o.Clock != "real" {
		return engine.Plan{}, usageError{fmt.Errorf("--clock %q: want virtual or real", o.Clock)}
	}
	p := engine.Plan{
		Scenario: sc,
		Requests: o.Requests,
		Trials:   o.Trials,
		Seed:     o.seed(),
		// Virtual time by default: a simulated store's trial is then a
		// deterministic replay of the seed.
		RealClock:  o.Clock == "real",
		Sequential: o.Sequential,
		Gap:        o.Gap,
		Trace:      o.Timeline,
		KeyChars:   results.KeyChars(o.KeyChars),
	}
	p.Aim(t)
	if err := o.Evidence.apply(&p); err != nil {
		return engine.Plan{}, err
	}
	switch {
	case o.given("background") && strings.TrimSpace(o.Background) == "":
		return engine.Plan{}, usageError{errors.New("--background '': want a rate above 0 such as 200/s; leave the flag out for no background load")}
	case o.given("background-keys") && o.BackgroundKeys == 0:
		// 0 is the plan's "the default"; given, it is a count of no keys.
		return engine.Plan{}, usageError{fmt.Errorf("--background-keys 0: want 1 to %d", load.MaxLoadKeys)}
	}
	if o.Background == "" && (o.BackgroundOnKey || o.given("background-keys")) {
		return engine.Plan{}, usageError{errors.New("--background-keys and --background-on-key shape a --background load; give --background RATE, e.g. 200/s")}
	}
	if o.Background != "" {
		bp, err := load.Parse(o.Background, o.BackgroundKeys, o.BackgroundOnKey)
		if err != nil {
			return engine.Plan{}, err
		}
		bp.Timeout, bp.Seed = o.Timeout, p.Seed
		o.background = load.New(bp, sc)
		p.Background = o.background.Start
	}
	if err := firstError(p.Validate()); err != nil {
		return engine.Plan{}, err
	}
	if err := o.checkShard(); err != nil {
		return engine.Plan{}, err
	}
	if o.Shard.on() && (o.Timeline || o.Evidence.HistoryHTML != "") {
		return engine.Plan{}, usageError{errors.New("--timeline and --history-html draw judged trials; give them to racelab verify, which judges the merged run")}
	}
	if o.part, err = o.findPart(sc); err == nil && o.part != nil && o.Shard.on() {
		err = usageError{fmt.Errorf("--%s plays in virtual time inside one process; it cannot be sharded", o.part.Flag)}
	}
	return p, err
}

func runRun(ctx context.Context, s Streams, o *runOptions) error {
	return fire(ctx, s, &o.firing, o.plan, func(p engine.Plan) error { return o.play(ctx, s, p) }, shards.RunShard,
		func(p engine.Plan, sh engine.Sharding) string {
			n := cmp.Or(p.Requests, p.Scenario.DefaultRequests)
			lo, hi := sh.Span(n)
			return fmt.Sprintf("requests %d to %d of each burst of %d", lo, hi-1, n)
		})
}

// play runs the whole of p and writes its report.
func (o *runOptions) play(ctx context.Context, s Streams, p engine.Plan) error {
	// run plays the trials, reporting each finished one to onTrial; bars
	// counts them: one bar step per trial of each target.
	run := func(onTrial func(string, int, int)) (*results.Result, error) {
		p.OnTrial = onTrial
		return engine.Run(ctx, p)
	}
	bars := len(p.Targets)
	if bars == 0 {
		bars = len(p.Scenario.Lineup)
	}
	if part := o.part; part != nil {
		run = func(onTrial func(string, int, int)) (*results.Result, error) {
			return part.Run(ctx, p.Trials, p.Seed, onTrial)
		}
		bars = part.Bars
	}
	var onTrial func(string, int, int)
	var bar *output.TrialBar
	// p.Trials, not o.Trials: --max-rate raises the count it needs.
	if p.Trials > 1 && s.ErrIsTTY && !o.Quiet {
		bar = output.NewTrialBar(ctx, s.Err, p.Scenario.Name, bars*p.Trials)
		onTrial = bar.Trial
	}
	if s.ErrIsTTY && !o.Quiet {
		p.OnWait = func(real []string, wait time.Duration) {
			fmt.Fprintf(s.Err, "racelab: %s on the real clock (%s): about %s of gaps between requests; Ctrl-C stops and reports the trials so far\n",
				results.Plural(int64(p.Trials), "sequential trial"), strings.Join(real, ", "), results.Roughly(wait))
		}
	}
	res, runErr := run(onTrial)
	if bar != nil {
		bar.Wait() // the bar is gone before the report is printed
	}
	if res == nil {
		return runErr
	}
	if path := o.Evidence.HistoryHTML; path != "" && o.part == nil && runErr == nil {
		// The report is still worth printing when the picture cannot be
		// written: the error comes after it.
		if err := engine.WriteHistoryFile(path, p, res); err != nil {
			runErr = fmt.Errorf("--history-html %s: %w", path, err)
		}
	}
	err := output.Write(s.Out, s.Width, output.WithTerminal(o.outs, o.Quiet), raceRel([]*results.Result{res}, o.Sign.signed(func(w io.Writer, format string, width int) error {
		f := report.Format(format)
		if err := report.Render(w, res, f, s.reportOptions(width, output.SavesJSON(o.outs))); err != nil {
			return err
		}
		if o.Timeline && (f == report.Table || f == report.Markdown) {
			if err := report.Timelines(w, res, width); err != nil {
				return err
			}
		}
		if o.background != nil && (f == report.Table || f == report.Markdown) {
			return load.Write(w, o.background.Summaries())
		}
		return nil
	})))
	if err != nil {
		return err
	}
	if runErr != nil {
		return runErr
	}
	return verdict(res.Interrupted, res.Shortfalls())
}

// findPart is the story's own part asked for by its flag (--payment), or
// nil for the bursts. A part is the story's whole scenario played its own
// way, in virtual time, so it takes no targets, no sequential firing and
// no real clock of its own.
func (o *runOptions) findPart(sc *engine.Scenario) (*engine.Part, error) {
	for flag, on := range o.Parts {
		if !*on {
			continue
		}
		for i := range sc.Parts {
			if part := &sc.Parts[i]; part.Flag == flag {
				if len(o.Targets) > 0 || o.Sequential || o.Clock == "real" || o.Background != "" {
					return nil, usageError{fmt.Errorf("--%s %s; drop -t, --sequential, --clock and --background", flag, part.Alone)}
				}
				return part, nil
			}
		}
		owner := "another story"
		for _, sc := range scenarios.All() {
			for _, part := range sc.Parts {
				if part.Flag == flag {
					owner = sc.Name
				}
			}
		}
		return nil, usageError{fmt.Errorf("--%s is part of %s, not %s", flag, owner, sc.Name)}
	}
	return nil, nil
}

func completeScenarios(_ *cobra.Command, args []string, _ string) ([]string, cobra.ShellCompDirective) {
	if len(args) > 0 {
		return nil, cobra.ShellCompDirectiveNoFileComp
	}
	var out []string
	for _, sc := range scenarios.All() {
		out = append(out, sc.Name+"\t"+sc.Title)
	}
	return out, cobra.ShellCompDirectiveNoFileComp
}

func completeTargets(_ *cobra.Command, args []string, _ string) ([]string, cobra.ShellCompDirective) {
	var out []string
	// After a scenario, only the targets that can play it: the run
	// refuses the others.
	sc, err := scenarios.Lookup(firstOr(args))
	for _, e := range targets.Entries() {
		if targets.ByURL(e.Name) || err == nil && !sc.Plays(e.Kind) {
			continue
		}
		out = append(out, e.Name+"\t"+e.Guarantee)
	}
	return out, cobra.ShellCompDirectiveNoFileComp
}

// firstOr is the first of args, or "".
func firstOr(args []string) string {
	if len(args) == 0 {
		return ""
	}
	return args[0]
}
