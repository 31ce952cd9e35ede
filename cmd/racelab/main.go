// Command racelab fires truly simultaneous requests at a store and shows
// whether its hard rule survived. See `racelab --help`.
package main

import (
	"context"
	"os"
	"os/signal"
	"syscall"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	// After the first signal, restore the default handling: the run prints
	// its partial report, and a second Ctrl-C ends the process at once.
	go func() { <-ctx.Done(); stop() }()
	code := Main(ctx, os.Args[1:], Stdio())
	stop()
	os.Exit(code)
}
