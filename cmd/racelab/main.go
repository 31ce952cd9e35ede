// Command racelab fires truly simultaneous requests at a store and shows
// whether its hard rule survived. See `racelab --help`.
package main

import (
	"context"
	"fmt"
	"os"
	"os/signal"
	"runtime/pprof"
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
	defer profileCPU()()
	return Main(ctx, os.Args[1:], Stdio(), cat)
}

// profileCPU writes a CPU profile of the whole command to the file named by
// RACELAB_CPUPROFILE, for `go tool pprof`: how the load's client was found
// to spend its time (see the README's load figures). It returns the
// function that stops it.
func profileCPU() func() {
	name := os.Getenv("RACELAB_CPUPROFILE")
	if name == "" {
		return func() {}
	}
	f, err := os.Create(name)
	if err == nil {
		err = pprof.StartCPUProfile(f)
	}
	if err != nil {
		fmt.Fprintf(os.Stderr, "racelab: RACELAB_CPUPROFILE: %v\n", err)
		return func() {}
	}
	return func() { pprof.StopCPUProfile(); f.Close() }
}
