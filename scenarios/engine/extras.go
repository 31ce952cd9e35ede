package engine

import (
	"context"

	"github.com/racelab/racelab/scenarios/results"
)

// Extra is one of a story's own replays in `racelab explain`, shown after
// the race and the fix that every story shows.
type Extra struct {
	// After says where it goes: after the race ("race") or after the fix
	// ("fix").
	After string
	// Replay plays it; x holds what explain was asked.
	Replay func(ctx context.Context, x *Explainer) ([]Replay, error)
}

// Part is a run of a story besides its bursts, with its own flag of `racelab
// run`, such as five-checkouts' payment part.
type Part struct {
	// Flag names it on the command line: "payment" for --payment.
	Flag string
	// Usage is the flag's help; Alone says why it takes no targets, no
	// sequential firing and no real clock: "compares the two shop designs
	// in virtual time".
	Usage string
	Alone string
	// Run plays trials of it from seed; onTrial reports progress.
	Run func(ctx context.Context, trials int, seed int64, onTrial func(string, int, int)) (*results.Result, error)
	// Bars is how many progress bars it fills, one per target it runs.
	Bars int
}
