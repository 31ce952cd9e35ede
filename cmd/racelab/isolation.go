package main

import (
	"fmt"
	"time"

	"github.com/spf13/cobra"

	"github.com/racelab/racelab/scenarios/isolation"
)

// isolationOptions are `racelab isolation`'s flags.
type isolationOptions struct {
	Targets []string
	Timeout time.Duration
}

// newIsolationCmd measures Hermitage's table on the databases given.
func newIsolationCmd(s Streams) *cobra.Command {
	o := &isolationOptions{}
	c := &cobra.Command{
		Use:   "isolation -t NAME=URL [-t NAME=URL…]",
		Short: "Measure Hermitage's isolation table on your databases",
		Long: `Run Hermitage's ten tests (G0, G1a, G1b, G1c, OTV, PMP, P4, G-single,
G2-item, G2; github.com/ept/hermitage), shipped as SQL race files under
scenarios/races/sql, on each database at every isolation level it has (or
the one its URL names with isolation=), and print a row per target and
level: ✓ prevented (and how: blocked on a lock, or aborted by the
database), — the anomaly happened, ? the trial proved nothing.`,
		Example: `  racelab isolation -t pg='postgres://racelab@127.0.0.1:55432/racelab?sslmode=disable' \
    -t maria=mysql://racelab@127.0.0.1:53306/racelab -t lite=sqlite:/tmp/hermitage.db`,
		Args: exactArgs(0, "no arguments; name the databases with -t"),
		RunE: func(c *cobra.Command, _ []string) error {
			rows, err := isolation.Measure(c.Context(), o.Targets, o.Timeout)
			if err != nil {
				return err
			}
			if err := isolation.Write(s.Out, rows); err != nil {
				return err
			}
			for _, r := range rows {
				for _, cell := range r.Cells {
					if cell.Outcome == isolation.Unknown {
						return verdictError{exitFailure, fmt.Sprintf("%s %s %s proved nothing: %s", r.Target, r.Level, cell.Test, cell.Why)}
					}
				}
			}
			return nil
		},
	}
	c.Flags().StringArrayVarP(&o.Targets, "target", "t", nil, "a database: NAME=postgres://…, NAME=mysql://… or NAME=sqlite:PATH (repeatable)")
	c.Flags().DurationVar(&o.Timeout, "timeout", isolation.DefaultTimeout, "bound on each test's trial at each level")
	return c
}
