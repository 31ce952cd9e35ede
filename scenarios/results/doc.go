// Package results is racelab's result data and its JSON schema: what a
// run (Result, TargetResult, Trial, Request, Tally), a load (LoadResult)
// and one shard's part of either (ShardResult) found, and the verdicts
// read off them (Shortfalls, Verdict, Bound). It imports no other racelab
// package, so that a report renders a saved result with nothing but it.
//
// A result speaks for itself: the judge records each trial's damage and
// each answer in the story's own words, and a story's own figures (the
// window a rate limiter counted a request in, the requests each window
// admitted, the exposure after a cancel) travel as named figures with a
// declaration of how to say them (Figure), so that no renderer looks a
// story up. Results of schema v1 saved before figures were generic read
// back with their figures (figures.go).
//
// Every trial is summed into its target's Tally as it finishes, and only
// a sample keeps its requests (Recorder, Keep), so a run's memory does not
// grow with its trials.
package results
