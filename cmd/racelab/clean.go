package main

import (
	"errors"
	"fmt"

	"github.com/spf13/cobra"

	"github.com/racelab/racelab/scenarios/results"
	"github.com/racelab/racelab/targets"
)

// newCleanCmd wires `racelab clean` to targets.Clean: every run deletes
// its trials' keys and rows as it reads them back; this removes what
// runs that did not get that far left behind.
func newCleanCmd(s Streams, cat *targets.Catalog) *cobra.Command {
	var servers serverFlags
	c := &cobra.Command{
		Use:   "clean",
		Short: "Delete what racelab left on the Redis and PostgreSQL servers",
		Long: `Delete every key and row racelab's stores keep on the real servers: what
interrupted runs, sharded runs (whose keys wait for verify) and a stopped
serve left. A finished run or load deletes its own as it reads them back.
Keys and rows of a run still going are deleted too: run it when none is.`,
		Example: `  racelab clean --redis-url redis://127.0.0.1:56379/0 --postgres-url postgres://racelab@127.0.0.1:55432/racelab`,
		Args:    exactArgs(0, "no arguments (the servers are --redis-url and --postgres-url)"),
		RunE: func(c *cobra.Command, _ []string) error {
			done, err := targets.Clean(c.Context(), cat, servers.options()...)
			var failed []error
			for _, d := range done {
				if d.Err != nil {
					failed = append(failed, fmt.Errorf("%s: %w", d.Server.What, d.Err))
					continue
				}
				fmt.Fprintf(s.Out, "%s: removed %s\n", d.Server.What, results.Plural(d.Removed, d.Server.Unit))
			}
			return errors.Join(append(failed, err)...)
		},
	}
	servers.register(c.Flags(), cat, "to clean")
	return c
}
