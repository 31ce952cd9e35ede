package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"slices"
	"strings"

	"github.com/spf13/cobra"

	"github.com/racelab/racelab/report"
	"github.com/racelab/racelab/report/output"
	"github.com/racelab/racelab/scenarios/engine"
	"github.com/racelab/racelab/scenarios/results"
	"github.com/racelab/racelab/targets"
)

// reportOptions is everything `racelab report` was asked to do: the
// files, the outputs, and verify's read-back for --merge.
type reportOptions struct {
	verifyOptions // verify.go
	// Merge reads the files as the parts of one sharded run and merges
	// them, reading every key back as racelab verify does.
	Merge bool
}

// newReportCmd builds `racelab report`; runF, when set, replaces the
// command's work, so that tests can check flag parsing alone.
func newReportCmd(s Streams, cat *targets.Catalog, runF func(*reportOptions) error) *cobra.Command {
	// The catalog says which targets are naive, whatever the files claim.
	o := &reportOptions{verifyOptions: verifyOptions{firing: firing{catalog: cat}}}
	c := &cobra.Command{
		Use:   "report FILE.json...",
		Short: "Re-render saved results, merging several into one report",
		Long: `Render results saved with 'racelab run -o json' or 'racelab load -o json'
in any output format, and merge several (from several machines, or several
CI jobs) into one report. A FILE of - reads standard input; a file may hold
several results one after the other, as -o json writes them.

Load results of the same scenario, model and key count are listed together,
target after target; their thresholds and rules are judged again from the
saved figures, and a file whose verdicts contradict its figures is refused.

Results of the same scenario at the same N become one: a target found in
several files gets their trials one after the other, and its bound on the
rate of breaking is computed again over all of them; other targets are
added in order. Results of different scenarios, or of different N, are
rendered one after the other. One run's results given twice (or the
same trials under two runs) are refused: each run counts once.

Each target is judged by what its file says it was expected to do, unless
--expect says otherwise (for every target, or NAME=… for one); with a key
every file must be signed by it.

The exit code judges the merged results as 'racelab run' would: 3 when a
target broke a rule it had to keep (or did not show a race it had to), 1
when one could not be run, 2 for a file that does not exist, and 1 for one
that is not a racelab result of schema ` + results.SchemaVersion + ` or ` + results.LoadSchemaVersion + `.`,
		Example: `  racelab run ten-hits-one-view -t sqlite --trials 300 -o json > a.json
  racelab report a.json -o junit=report.xml -o html=report.html
  racelab report machine-*.json -o table -o markdown+="$GITHUB_STEP_SUMMARY"
  racelab run five-checkouts -o json | racelab report - -o markdown`,
		Args: someArgs("one or more result files (FILE.json, or - for standard input)"),
		RunE: func(c *cobra.Command, args []string) error {
			o.Files = args
			return runner(runF, runReport, o)(c.Context(), s.of(c))
		},
	}
	o.register(c, report.LoadFormats()) // csv for saved loads
	c.Flags().BoolVar(&o.Merge, "merge", false, "the files are the parts of one sharded run (run|load --shard): merge them into one result,\n"+
		"reading every key back against -t, as racelab verify does")
	return c
}

func runReport(ctx context.Context, s Streams, o *reportOptions) error {
	results.LimitReadMemory()
	outs, err := o.Outputs.parse()
	if err != nil {
		return err
	}
	if err := o.checkMerge(); err != nil {
		return err
	}
	if o.Merge {
		return runVerify(ctx, s, &o.verifyOptions)
	}
	v, err := o.Sign.verifier()
	if err != nil {
		return err
	}
	var all []*results.Result
	var loads []*results.LoadResult
	for _, name := range o.Files {
		saved, err := results.ReadFile(ctx, s.In, name, judgedFrom(v, o.raceFiles(name)))
		if err != nil {
			return err
		}
		if len(saved.Shards) > 0 {
			return usageError{fmt.Errorf("%s holds a shard's part of run %s; merge the parts with --merge -t TARGET (or racelab verify)", name, saved.Shards[0].RunID)}
		}
		all = append(all, saved.Runs...)
		loads = append(loads, saved.Loads...)
		// Checked as each file comes, so that the error names the file
		// that brought a run or trial a second time.
		if err := results.Distinct(all, loads); err != nil {
			return fmt.Errorf("%s: %w", name, err)
		}
	}
	if err := o.expect(all, loads); err != nil {
		return err
	}
	merged := results.Merge(all)
	mergedLoads := results.MergeLoads(loads)
	// Bursts and load in one report: the bursts' report, then the load's,
	// a blank line between in the formats read as text.
	err = output.Write(s.Out, s.Width, outs, raceRel(merged, func(w io.Writer, format string, width int) error {
		f, opts := report.Format(format), s.reportOptions(width, true) // read from JSON
		if len(merged) > 0 {
			if err := report.RenderAll(w, merged, f, opts); err != nil {
				return err
			}
		}
		if len(mergedLoads) > 0 {
			if len(merged) > 0 && (f == report.Table || f == report.Markdown) {
				if _, err := io.WriteString(w, "\n"); err != nil {
					return err
				}
			}
			return report.RenderLoad(w, mergedLoads, f, opts)
		}
		return nil
	}))
	if err != nil {
		return err
	}
	// run's verdict over the merged results, less the interrupt:
	// re-rendering a partial result is not itself interrupted, and the
	// report already says the result is partial.
	return shortfallError(results.MergedShortfalls(merged, mergedLoads))
}

// checkMerge refuses the read-back flags without --merge, and --merge
// without -t: a merge reads every key back, so it must be told where
// from, and re-rendering saved results never touches a target.
func (o *reportOptions) checkMerge() error {
	switch {
	case o.Merge && len(o.Targets) == 0:
		return usageError{errors.New("--merge reads every key back: add -t TARGET (or use racelab verify, which reads back from the targets the shards recorded)")}
	case !o.Merge && len(o.Targets) > 0:
		return usageError{errors.New("-t reads keys back, which only --merge does; add --merge for the parts of a sharded run")}
	case !o.Merge && o.Evidence.MaxSpread != engine.DefaultMaxSpread:
		return usageError{errors.New("--max-spread judges the bursts of merged parts; a saved result was judged by the bound it records (add --merge for the parts of a sharded run)")}
	}
	return nil
}

// expect sets what each target of the saved results is expected to do:
// what the file says, as the run that wrote it was asked (`run --expect
// naive=breaks -o json=r.json`, then `report r.json`, exits as the run
// did), unless this command's --expect says otherwise: for every target
// (a bare --expect WHAT), or for the targets it names. With a key every
// document read was signed by it (signFlags.verifier), so a kept
// expectation is the one racelab wrote; verify, which merges parts that
// each claim their own, always judges by its own --expect instead.
func (o *reportOptions) expect(rs []*results.Result, ls []*results.LoadResult) error {
	all, one, err := parseExpect(o.Expect)
	if err != nil {
		return err
	}
	if slices.ContainsFunc(o.Expect, func(v string) bool { return !strings.Contains(v, "=") }) {
		return engine.Reexpect(o.catalog, all, one, rs, ls)
	}
	return engine.KeepExpect(o.catalog, one, rs, ls)
}
