package main

import (
	"context"
	"errors"
	"fmt"
	"io"

	"github.com/spf13/cobra"

	"github.com/racelab/racelab/report"
	"github.com/racelab/racelab/report/output"
	"github.com/racelab/racelab/scenarios/engine"
	"github.com/racelab/racelab/scenarios/results"
	"github.com/racelab/racelab/scenarios/shards"
	"github.com/racelab/racelab/targets"
	"github.com/racelab/racelab/targets/httpapi"
)

// verifyOptions is everything `racelab verify` (and `racelab report
// --merge`) was asked to do: which parts to merge, and how to reach the
// targets to read every key back. Its expectations are the verifier's
// own, never what a part claims (shards.VerifyPlan).
type verifyOptions struct {
	firing   // flags.go: the targets, -o, --sign-key… run and load share
	Files    []string
	Evidence evidenceFlags
	// RaceFile is where a saved race file's result finds its race file
	// (--race-file), when it is not where the result says.
	RaceFile string
}

// register defines the flags of the read-back; formats are -o's, none
// for a command that has an -o of its own (report).
func (o *verifyOptions) register(c *cobra.Command, formats []string) {
	o.firing.register(c, firingWords{targets: "read the keys back from this target instead of the one the shards recorded, once per target, in order\n" +
		"(the service as this machine reaches it, or a URL with the password the parts leave out)",
		timeout: "time limit of each read-back", formats: formats, reads: true})
	o.Evidence.register(c.Flags(), true)
	c.Flags().StringVar(&o.RaceFile, "race-file", "", "judge a race file's saved result by this file, when it is not where the result says (its SHA-256 must match)")
}

func newVerifyCmd(s Streams, cat *targets.Catalog, runF func(*verifyOptions) error) *cobra.Command {
	o := &verifyOptions{firing: firing{catalog: cat}}
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
starts are refused, and so is a merge with a shard missing (exit 2); a part
given twice is refused as a replay (exit 1).
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
			return runner(runF, runVerify, o)(c.Context(), s.of(c))
		},
	}
	o.register(c, report.Formats())
	return c
}

// runVerify reads the parts named by o.Files, merges them, reads every
// key back and writes the one result to -o's outputs, with run's exit
// code.
func runVerify(ctx context.Context, s Streams, o *verifyOptions) error {
	results.LimitReadMemory()
	var err error
	if o.outs, err = o.Outputs.parse(); err != nil {
		return err
	}
	files, err := shards.ExpandDirs(o.Files)
	if err != nil {
		return err
	}
	check, err := o.Sign.verifier()
	if err != nil {
		return err
	}
	var parts []*results.ShardResult
	for _, name := range files {
		saved, err := results.ReadFile(ctx, s.In, name, judgedFrom(check, o.raceFiles(name)))
		if err != nil {
			return err
		}
		if len(saved.Runs)+len(saved.Loads) > 0 {
			return usageError{fmt.Errorf("%s holds a judged result, not a shard's part; render it with racelab report", name)}
		}
		parts = append(parts, saved.Shards...)
	}
	v, err := o.plan(parts)
	if err != nil {
		return err
	}
	opts := func(width int) report.Options { return s.reportOptions(width, output.SavesJSON(o.outs)) }
	if parts[0].Kind == results.ShardLoad {
		res, err := shards.VerifyLoad(ctx, parts, v)
		if err != nil {
			return err
		}
		err = output.Write(s.Out, s.Width, o.outs, func(w io.Writer, format string, width int) error {
			return report.RenderLoad(w, []*results.LoadResult{res}, report.Format(format), opts(width))
		})
		if err != nil {
			return err
		}
		return verdict(res.Interrupted, res.Shortfalls())
	}
	res, err := shards.VerifyRun(ctx, parts, v)
	if err != nil {
		return err
	}
	err = output.Write(s.Out, s.Width, o.outs, func(w io.Writer, format string, width int) error {
		return report.Render(w, res, report.Format(format), opts(width))
	})
	if err != nil {
		return err
	}
	return verdict(res.Interrupted, res.Shortfalls())
}

// plan is the read-back of parts the options ask for, every value checked.
func (o *verifyOptions) plan(parts []*results.ShardResult) (shards.VerifyPlan, error) {
	if len(parts) == 0 {
		return shards.VerifyPlan{}, usageError{errors.New("no shard parts to merge")}
	}
	// Every value is given here (the flags' defaults are the plan's), so
	// a zero is the user's and is refused as the plan refuses a negative.
	e := &o.Evidence
	given := func(string) bool { return true }
	err := explicitZero(given, engine.Wants.Invalid, zeroIf("Confidence", e.Confidence.String(), e.Confidence == 0),
		zeroIf("Timeout", o.Timeout, o.Timeout <= 0), zeroIf("HistoryTimeout", e.HistoryTimeout, e.HistoryTimeout <= 0),
		zeroIf("MaxSpread", e.MaxSpread, e.MaxSpread <= 0))
	if err != nil {
		return shards.VerifyPlan{}, err
	}
	// A read-back is one whole request: nothing to stage.
	t, err := o.targeting(shards.Recorded(parts[0]), func(c *httpapi.Config) { c.Wire.Sync = httpapi.SyncNone })
	if err != nil {
		return shards.VerifyPlan{}, err
	}
	if err := firstError(e.evidence().Validate(1)); err != nil {
		return shards.VerifyPlan{}, err
	}
	races := o.raceFiles(o.Files[0])
	fire := o.Store.options(o.specs(shards.Recorded(parts[0])))
	races.Fire = &fire
	return shards.VerifyPlan{Targeting: t, Find: races.Find, Evidence: e.evidence(), Keep: results.Keep{All: e.KeepAll}}, nil
}
