// Command racelab fires truly simultaneous requests at a store and shows
// whether its hard rule survived. See `racelab --help`.
package main

import (
	"context"
	"os"
	"os/signal"
	"syscall"

	"github.com/racelab/racelab/targets"
)

func main() { os.Exit(run(targets.Builtin())) }

// run is main with the catalog of targets passed in, so that tests run the
// real command with targets of their own.
func run(cat *targets.Catalog) int {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	// After the first signal, restore the default handling: the run prints
	// its partial report, and a second Ctrl-C ends the process at once.
	go func() { <-ctx.Done(); stop() }()
	return Main(ctx, os.Args[1:], Stdio(), cat)
}
