package main

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"io"
	"time"

	"github.com/spf13/cobra"

	"github.com/racelab/racelab/report"
	"github.com/racelab/racelab/scenarios"
	"github.com/racelab/racelab/scenarios/engine"
	"github.com/racelab/racelab/scenarios/results"
	"github.com/racelab/racelab/scenarios/shards"
	"github.com/racelab/racelab/targets"
	"github.com/racelab/racelab/targets/httpapi"
)

// verifyOptions is everything `racelab verify` (and `racelab report
// --merge`) was asked to do: which parts to merge, and how to reach the
// targets to read every key back.
type verifyOptions struct {
	catalog        *targets.Catalog
	Files          []string
	Targets        []string
	Outputs        outputFlags
	Timeout        time.Duration
	Servers        serverFlags
	HTTP           Flags
	Confidence     percentage
	CheckHistory   bool
	HistoryTimeout time.Duration
	KeepAll        bool
	Expect         []string // the verifier's own: never what a part claims (shards.VerifyPlan.Expect)
	MaxSpread      time.Duration
	Sign           signFlags // sign.go
}

// register defines the flags of the read-back, all but -o.
func (o *verifyOptions) register(c *cobra.Command) {
	f := c.Flags()
	o.Confidence = percentage(results.DefaultConfidence)
	addTargets(c, &o.Targets, "read the keys back from this target instead of the one the shards recorded, once per target, in order\n"+
		"(the service as this machine reaches it, or a URL with the password the parts leave out)")
	addTimeout(f, &o.Timeout, "time limit of each read-back")
	o.Servers.register(f, cmp.Or(o.catalog, targets.Builtin()), "targets")
	o.HTTP.RegisterMapping(f)
	f.Var(&o.Confidence, "confidence", "confidence level of the bound on the rate of breaking, such as 95% or 99%")
	f.BoolVar(&o.CheckHistory, "check-history", true, "check each merged trial's history for linearizability, when every shard ran on one machine (one clock)")
	f.DurationVar(&o.HistoryTimeout, "history-timeout", results.DefaultHistoryTimeout, "time limit of one trial's history check")
	f.BoolVar(&o.KeepAll, "keep-all", false, "keep every merged trial's requests in the result (-o json)")
	addExpect(c, &o.Expect)
	addMaxSpread(f, &o.MaxSpread)
	o.Sign.register(f, true)
}

func newVerifyCmd(s Streams, cat *targets.Catalog, runF func(*cobra.Command, *verifyOptions) error) *cobra.Command {
	o := &verifyOptions{catalog: cat}
	c := &cobra.Command{
		Use:   "verify SHARD.json|DIR...",
		Short: "Merge the parts of a sharded run or load and judge it as one",
		Long: `Merge the parts written by 'racelab run --shard I/N' or 'racelab load
--shard I/N' (one per shard: in files, in the folder --shard-dir wrote them
to, or one after the other in one file or on standard input, as 'kubectl
logs' prints them), read every key back against the target, and judge the
merged run exactly as one machine's run would be judged: one table, one
verdict, one exit code.

Each trial's requests from every shard make one burst of N; a sharded load's
counts are summed per key before each key is judged, its latency histograms
merged exactly. Parts of different runs (run ids), scenarios, N, targets or
starts are refused, and so is a merge with a shard missing or given twice.
Linearizability is checked only when every shard ran on one machine: across
machines the requests' instants come from different clocks.

Exit codes are run's: 0 as expected, 1 could not read back or judge, 2 usage
(mixed or missing parts), 3 a rule broken where it had to hold.`,
		Example: `  racelab verify shard-*.json
  racelab verify results/shard-*.json -t http://shop.internal:8787 \
    -o junit=report.xml
  kubectl logs -l job-name=racelab-shards-RUN_ID --tail=-1 | racelab verify -`,
		Args: someArgs("the shards' parts (SHARD.json..., or - for standard input)"),
		RunE: func(c *cobra.Command, args []string) error {
			o.Files = args
			if runF != nil {
				return runF(c, o)
			}
			outs, err := o.Outputs.parse()
			if err != nil {
				return err
			}
			return runVerify(c.Context(), s, s.width(c), o, outs)
		},
	}
	f := c.Flags()
	o.Outputs.register(c, f, report.Formats())
	o.register(c)
	return c
}

// runVerify reads the parts named by o.Files, merges them, reads every key
// back and writes the one result to outs.
func runVerify(ctx context.Context, s Streams, width int, o *verifyOptions, outs []report.Output) error {
	files, err := shards.ExpandDirs(o.Files)
	if err != nil {
		return err
	}
	v, err := o.Sign.verifier()
	if err != nil {
		return err
	}
	var parts []*results.ShardResult
	for _, name := range files {
		saved, err := results.ReadFile(ctx, s.In, name, v)
		if err != nil {
			return err
		}
		if len(saved.Runs)+len(saved.Loads) > 0 {
			return usageError{fmt.Errorf("%s holds a judged result, not a shard's part; render it with racelab report", name)}
		}
		parts = append(parts, saved.Shards...)
	}
	return verifyParts(ctx, s, width, o, parts, outs)
}

// verifyParts merges parts, reads their keys back and renders the one
// result, with run's exit code.
func verifyParts(ctx context.Context, s Streams, width int, o *verifyOptions, parts []*results.ShardResult, outs []report.Output) error {
	if len(parts) == 0 {
		return usageError{errors.New("no shard parts to merge")}
	}
	// Every value is given here (the flags' defaults are the plan's), so
	// a zero is the user's and is refused as the plan refuses a negative.
	given := func(string) bool { return true }
	err := explicitZero(given, engine.Wants.Invalid, zeroIf("Confidence", o.Confidence.String(), o.Confidence == 0),
		zeroIf("Timeout", o.Timeout, o.Timeout <= 0), zeroIf("HistoryTimeout", o.HistoryTimeout, o.HistoryTimeout <= 0),
		zeroIf("MaxSpread", o.MaxSpread, o.MaxSpread <= 0))
	if err != nil {
		return err
	}
	expect, expectOf, err := parseExpect(o.Expect)
	if err != nil {
		return err
	}
	if err := firstError(engine.Evidence{Confidence: float64(o.Confidence)}.Validate(1)); err != nil {
		return err
	}
	v := shards.VerifyPlan{Find: scenarios.Find,
		Catalog: o.catalog, Targets: o.Targets, Options: o.Servers.options(), Timeout: o.Timeout, Expect: expect, ExpectOf: expectOf,
		Evidence: engine.Evidence{Confidence: float64(o.Confidence), SkipHistory: !o.CheckHistory,
			HistoryTimeout: o.HistoryTimeout, MaxSpread: o.MaxSpread},
		Keep: results.Keep{All: o.KeepAll},
	}
	specs := o.Targets
	if len(specs) == 0 {
		specs = shards.Recorded(parts[0])
	}
	// A read-back is one whole request: nothing to stage.
	if err := o.HTTP.ApplyTo(specs, o.Timeout, &v.Options, func(c *httpapi.Config) { c.Sync = httpapi.SyncNone }); err != nil {
		return err
	}
	opts := func(width int) report.Options { return s.reportOptions(width, report.SavesJSON(outs)) }
	if parts[0].Kind == results.ShardLoad {
		res, err := shards.VerifyLoad(ctx, parts, v)
		if err != nil {
			return err
		}
		err = report.WriteOutputs(s.Out, width, outs, func(w io.Writer, format string, width int) error {
			return report.RenderLoad(w, []*results.LoadResult{res}, report.Format(format), opts(width))
		})
		if err != nil {
			return err
		}
		return loadVerdict(res)
	}
	res, err := shards.VerifyRun(ctx, parts, v)
	if err != nil {
		return err
	}
	err = report.WriteOutputs(s.Out, width, outs, func(w io.Writer, format string, width int) error {
		return report.Render(w, res, report.Format(format), opts(width))
	})
	if err != nil {
		return err
	}
	return verdict(res)
}
