package main

import (
	"context"
	"fmt"
	"io"
	"slices"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/racelab/racelab/report"
	"github.com/racelab/racelab/report/output"
	"github.com/racelab/racelab/scenarios"
	"github.com/racelab/racelab/scenarios/engine"
	"github.com/racelab/racelab/scenarios/load"
	"github.com/racelab/racelab/scenarios/pace"
	"github.com/racelab/racelab/scenarios/results"
	"github.com/racelab/racelab/scenarios/shards"
	"github.com/racelab/racelab/targets"
	"github.com/racelab/racelab/targets/httpapi"
)

// loadOptions is everything `racelab load` was asked to do.
type loadOptions struct {
	firing      // flags.go: the targets, -o, --seed, --shard… run and verify share
	Scenario    string
	Rate        string
	Stages      string
	Arrivals    string
	Duration    time.Duration
	Requests    int64
	Concurrency int
	MaxInFlight int
	Keys        int
	Samples     int
	KeyDist     string
	Thresholds  []string
	HTTPVersion string
}

func newLoadCmd(s Streams, cat *targets.Catalog, runF func(*loadOptions) error) *cobra.Command {
	o := &loadOptions{firing: firing{catalog: cat}}
	c := &cobra.Command{
		Use:   "load SCENARIO",
		Short: "Put sustained load on targets, measure it, and judge the rule",
		Long: `Load a scenario: send its requests at a rate or from a pool of workers for
a while, measure throughput, latency percentiles and errors, then read every
key back and judge the story's rule on each, as 'racelab run' judges a trial.

Two models, as load testers have them:
  open    --rate R/s or --stages: requests arrive on a schedule whatever the
          answers (like wrk2, vegeta); latency counts from each request's
          intended instant, so a stalled server shows in the percentiles.
  closed  --concurrency C (the default, C=` + fmt.Sprint(load.DefaultConcurrency) + `): C workers each send the next
          request when the last is answered (like hey, wrk).

The requests spread over --keys fresh keys (slugs, visitors, items), evenly
or Zipf-hot with --key-dist zipf:S: hot keys are where updates get lost.
Simulated stores run on the real clock. Exit codes are run's; a missed
--threshold also exits 3 and is named on stderr.

` + strings.Join(report.WrapWords("Scenarios: "+strings.Join(scenarios.Names(), ", "), 78, "  "), "\n"),
		Example: `  racelab load ten-hits-one-view -t sqlite --rate 2000/s --duration 10s
  racelab load ten-hits-one-view -t kv --rate 500/s --duration 5s --keys 10
  racelab load six-become-four -t http://127.0.0.1:8787 \
    --concurrency 64 --duration 20s --keys 100
  racelab load ten-hits-one-view -t sqlite \
    --stages 10s:500/s,20s:2000/s --key-dist zipf:1.2
  racelab load ten-hits-one-view -t redis -c 100 \
    --threshold 'p99<50ms' --threshold 'errors<1%' --threshold 'lost==0'`,
	}
	takesOneStory(c, s, &o.Scenario, &o.set, runner(runF, runLoad, o))
	f := c.Flags()
	o.register(c, firingWords{targets: targetsUsage, timeout: "time limit of each request",
		seed: "seed for the keys picked and Poisson arrivals (default: random, in the result)", quiet: "no progress bar on stderr, and no table on stdout when -o sends every output to a file",
		formats: report.LoadFormats()})
	f.StringVar(&o.Rate, "rate", "", "open model: requests arriving per second, e.g. 2000/s (or 90/m); with --stages, the rate the first stage starts from")
	f.StringVar(&o.Stages, "stages", "", "open model: ramps DURATION:RATE, comma separated, e.g. 30s:100/s,1m:500/s")
	f.StringVar(&o.Arrivals, "arrivals", string(pace.Even), "open model: how arrivals are spaced: even, or poisson (seeded)")
	f.DurationVar(&o.Duration, "duration", load.DefaultLoadDuration, "how long to send")
	addRequests(f, &o.Requests, "send exactly this many requests instead of for a duration")
	f.IntVarP(&o.Concurrency, "concurrency", "c", load.DefaultConcurrency, "closed model: workers, each sending when its last request is answered")
	f.IntVar(&o.MaxInFlight, "max-in-flight", load.DefaultMaxInFlight, "open model: requests in flight at most; arrivals past it wait and count as late")
	f.IntVar(&o.Keys, "keys", load.DefaultLoadKeys, "fresh keys (slugs, visitors, items) the requests spread over")
	f.StringVar(&o.KeyDist, "key-dist", "uniform", "how keys are picked: uniform, or zipf:S (S above 1; the larger, the hotter the first keys)")
	f.StringArrayVar(&o.Thresholds, "threshold", nil, "a condition every target must meet, repeatable: 'p99<250ms', 'errors<1%', 'lost==0', 'rps>=900';\n"+
		"k6's too: 'p(95)<250' (milliseconds), 'avg<200', 'med<100', 'rate<0.01' (the share failed), 'count>1000' (sent)\n"+
		"(metrics: "+strings.Join(results.ThresholdMetrics(), ", ")+"; pN and p(N) are any percentile)")
	f.IntVar(&o.Samples, "samples", 0, fmt.Sprintf("requests each target keeps one by one, a uniform sample past it (default %d with -o csv, else 0)", load.DefaultSamples))
	f.StringVar(&o.HTTPVersion, "http-version", "1.1", "http targets: 1.1 (keep-alive connections) or 2 (h2c on http, h2 on https)")
	_ = c.RegisterFlagCompletionFunc("arrivals", cobra.FixedCompletions([]string{"even", "poisson"}, cobra.ShellCompDirectiveNoFileComp))
	_ = c.RegisterFlagCompletionFunc("http-version", cobra.FixedCompletions([]string{"1.1", "2"}, cobra.ShellCompDirectiveNoFileComp))
	return c
}

// plan turns the options into a load.LoadPlan, checking every value, the shard flags last.
func (o *loadOptions) plan() (load.LoadPlan, error) {
	var p load.LoadPlan
	given := o.given
	sc, err := o.Store.lookup(o.Scenario, o.Targets)
	if err != nil {
		return p, err
	}
	if o.outs, err = o.Outputs.parse(); err != nil {
		return p, err
	}
	bad := func(format string, args ...any) (load.LoadPlan, error) {
		return load.LoadPlan{}, usageError{fmt.Errorf(format, args...)}
	}
	open := o.Rate != "" || o.Stages != "" || given("rate") || given("stages")
	switch {
	case open && given("concurrency"):
		return bad("--concurrency is the closed model and --rate/--stages the open one; give one of them (a rate with at most C requests in flight is --rate R --max-in-flight C)")
	case given("duration") && given("requests"):
		return bad("--duration and --requests both say when to stop; give one of them")
	case o.Stages != "" && given("duration"):
		return bad("--stages says how long the load lasts; drop --duration")
	case !open && (given("arrivals") || given("max-in-flight")):
		return bad("--arrivals and --max-in-flight shape the open model; add --rate or --stages")
	}
	if open {
		spacing, err := pace.ParseSpacing(o.Arrivals)
		if err != nil {
			return bad("--%v", err)
		}
		sched := pace.Schedule{Spacing: spacing}
		if given("rate") || o.Rate != "" {
			r, err := pace.ParseRate(o.Rate)
			switch {
			case err != nil:
				return bad("--%v", err)
			case r <= 0:
				return bad("--rate %q: want arrivals per second above 0, such as 2000/s", o.Rate)
			}
			sched.Start = r
		}
		if given("stages") || o.Stages != "" {
			st, err := pace.ParseStages(o.Stages)
			if err != nil {
				return bad("--stages: %v", err)
			}
			sched.Stages = st
		} else if !given("requests") {
			sched.Stages = []pace.Stage{{Duration: o.Duration, Target: sched.Start}}
		}
		p.Schedule = &sched
		p.MaxInFlight = o.MaxInFlight
	} else {
		p.Concurrency = o.Concurrency
		p.Duration = o.Duration
	}
	if given("requests") {
		p.Requests = o.Requests
		p.Duration = 0
	}
	dist, err := results.ParseKeyDist(o.KeyDist)
	if err != nil {
		return p, err
	}
	for _, s := range o.Thresholds {
		t, err := results.ParseThreshold(s)
		if err != nil {
			return p, err
		}
		p.Thresholds = append(p.Thresholds, t)
	}
	err = explicitZero(o.set, load.Wants.Invalid,
		zeroIf("Requests", o.Requests, o.Requests == 0), zeroIf("Duration", o.Duration, o.Duration == 0),
		zeroIf("Timeout", o.Timeout, o.Timeout == 0), zeroIf("Concurrency", o.Concurrency, o.Concurrency == 0),
		zeroIf("MaxInFlight", o.MaxInFlight, o.MaxInFlight == 0), zeroIf("Keys", o.Keys, o.Keys == 0))
	if err != nil {
		return p, err
	}
	var h2 bool
	switch o.HTTPVersion {
	case "1.1", "1", "h1":
	case "2", "h2":
		h2 = true
	default:
		return bad("--http-version %q: want 1.1 or 2", o.HTTPVersion)
	}
	if h2 && !targets.HasHTTP(o.specs(sc.Lineup)) {
		return bad("--http-version applies to http targets only, and this load has none (add -t http://HOST:PORT)")
	}
	p.Targeting, err = o.targeting(sc.Lineup, func(c *httpapi.Config) {
		c.Wire.Sync = httpapi.SyncNone // whole requests: a load stages nothing
		c.Wire.HTTP2 = h2
	})
	if err != nil {
		return p, err
	}
	p.Scenario, p.Keys, p.KeyDist, p.Seed, p.Samples = sc, o.Keys, dist, o.seed(), o.Samples
	if !given("samples") && slices.ContainsFunc(o.outs, func(o output.Output) bool { return o.Format == string(report.CSV) }) {
		p.Samples = load.DefaultSamples // what csv is for
	}
	if err := firstError(p.Validate()); err != nil {
		return p, err
	}
	return p, o.checkShard()
}

func runLoad(ctx context.Context, s Streams, o *loadOptions) error {
	return fire(ctx, s, &o.firing, o.plan, func(p load.LoadPlan) error { return o.play(ctx, s, p) }, shards.LoadShard,
		func(load.LoadPlan, engine.Sharding) string { return "its share of the load" })
}

// play runs the whole of p and writes its report.
func (o *loadOptions) play(ctx context.Context, s Streams, p load.LoadPlan) error {
	if s.ErrIsTTY && !o.Quiet {
		p.Watch = func(target string, _ load.LoadProgress, now func() load.LoadProgress) func() {
			return output.WatchLoad(ctx, s.Err, p.Scenario.Name+" on "+target, now)
		}
	}
	res, err := load.Load(ctx, p)
	if err != nil {
		return err
	}
	err = output.Write(s.Out, s.Width, output.WithTerminal(o.outs, o.Quiet), o.Sign.signed(func(w io.Writer, format string, width int) error {
		return report.RenderLoad(w, []*results.LoadResult{res}, report.Format(format), s.reportOptions(width, output.SavesJSON(o.outs)))
	}))
	if err != nil {
		return err
	}
	for _, a := range load.Advice(res) {
		if s.ErrIsTTY && !o.Quiet {
			fmt.Fprintf(s.Err, "racelab: %s\n", a.Say(flagOf))
		}
	}
	return verdict(res.Interrupted, res.Shortfalls())
}
