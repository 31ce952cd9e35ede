package main

import (
	"errors"
	"fmt"

	"github.com/spf13/cobra"

	"github.com/racelab/racelab/scenarios/engine"
	"github.com/racelab/racelab/scenarios/load"
	"github.com/racelab/racelab/scenarios/results"
	"github.com/racelab/racelab/targets"
)

// cleanIdle is how long a key or row must have gone unwritten before a
// clean without a scope removes it: the longest a load may last, so that
// no run or load still going wrote it that long ago (a run's trial key
// lives one trial; a load writes its keys from its start).
const cleanIdle = load.MaxLoadDuration

// newCleanCmd wires `racelab clean` to targets.Clean: every run deletes
// its trials' keys and rows as it reads them back; this removes what
// runs that did not get that far left behind.
func newCleanCmd(s Streams, cat *targets.Catalog) *cobra.Command {
	var servers serverFlags
	var runID, prefix string
	c := &cobra.Command{
		Use:   "clean",
		Short: "Delete what racelab left on the Redis and PostgreSQL servers",
		Long: fmt.Sprintf(`Delete keys and rows racelab's stores left on the real servers: what
interrupted runs, sharded runs (whose keys wait for verify) and a stopped
serve left. A finished run or load deletes its own as it reads them back.

--run-id ID removes one run's (a shard's --run-id, or the run_id of a saved
result); --prefix P the keys starting with P (slug-, visitor-, item-, …).
Without either it removes only keys and rows no one has written for over
%s, the longest a load may last: a run still going, yours or another
user's on the same server, wrote its own more recently. It says what it
removed, and how many it kept as too recent.`, cleanIdle),
		Example: `  racelab clean --run-id gh4242-1
  racelab clean --prefix slug- --redis-url redis://127.0.0.1:56379/0
  racelab clean --redis-url redis://127.0.0.1:56379/0 --postgres-url postgres://racelab@127.0.0.1:55432/racelab`,
		Args: exactArgs(0, "no arguments (the servers are --redis-url and --postgres-url)"),
		RunE: func(c *cobra.Command, _ []string) error {
			scope, what, err := cleanScope(c, runID, prefix)
			if err != nil {
				return err
			}
			done, err := targets.Clean(c.Context(), cat, scope, servers.options()...)
			var failed []error
			for _, d := range done {
				if d.Err != nil {
					failed = append(failed, fmt.Errorf("%s: %w", d.Server.What, d.Err))
					continue
				}
				line := fmt.Sprintf("%s: removed %s %s", d.Server.What, results.Plural(d.Removed, d.Server.Unit), what)
				if scope.Idle > 0 {
					line += fmt.Sprintf("; kept %d written since (a run may still use them)", d.Kept)
				}
				fmt.Fprintln(s.Out, line)
			}
			return errors.Join(append(failed, err)...)
		},
	}
	c.Flags().StringVar(&runID, "run-id", "", "remove only the keys and rows of this run (a shard's --run-id, a result's run_id)")
	c.Flags().StringVar(&prefix, "prefix", "", "remove only the keys and rows whose story key starts with this, e.g. slug-")
	servers.register(c.Flags(), cat, "to clean")
	return c
}

// cleanScope reads clean's flags into the scope and the words that say
// it: a run, a prefix, or, without either, keys older than cleanIdle.
func cleanScope(c *cobra.Command, runID, prefix string) (targets.CleanScope, string, error) {
	var scope targets.CleanScope
	var what string
	if c.Flags().Changed("run-id") {
		if err := engine.CheckRunID(runID); err != nil {
			return scope, "", err
		}
		scope.Within, what = targets.RunKey(runID), "of run "+runID
	}
	if c.Flags().Changed("prefix") {
		if prefix == "" {
			return scope, "", usageError{errors.New("--prefix '': want the start of the keys to remove, such as slug-; leave the flag out to remove only old keys")}
		}
		scope.Prefix = prefix
		what = andWords(what, fmt.Sprintf("starting with %q", prefix))
	}
	if what == "" {
		scope.Idle, what = cleanIdle, fmt.Sprintf("not written for over %s", cleanIdle)
	}
	return scope, what, nil
}

// andWords joins two phrases of a scope with "and".
func andWords(a, b string) string {
	if a == "" {
		return b
	}
	return a + " and " + b
}
