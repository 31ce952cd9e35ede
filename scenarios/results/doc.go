// Package results is racelab's result data and its JSON schema: what a
// run (Result, TargetResult, Trial, Request, Tally), a load (LoadResult)
// and one shard's part of either (ShardResult) found, the verdicts read
// off them (Shortfalls, Verdict, Bound), and the reading back of what was
// saved (saved.go). It imports no racelab package but two leaves, the
// words of a usage error (internal/usage) and the pace of arrivals
// (scenarios/pace), so that a report renders a saved result with nothing
// but it.
//
// A result speaks for itself: a story's rule records each trial's damage
// and each answer in the story's own words, and a story's own figures
// (the window a rate limiter counted a request in, the requests each
// window admitted, the exposure after a cancel) travel as named figures
// with a declaration of how to say them (Figure), so that no renderer
// looks a story up. Results of schema v1 saved before figures were generic
// read back with their figures (figures.go).
//
// Every trial is summed into its target's Tally as it finishes, and only
// a sample keeps its requests (Recorder, Keep), so a run's memory does not
// grow with its trials.
//
// # Reading saved results
//
// ReadJSON and ReadSaved read what racelab saved: run and load results
// written as JSON (-o json), one document or a stream of them. They read
// with a bound (MaxResultBytes), refuse another schema rather than guess
// at it (ErrNotResult), and hand every document to a Verifier before
// anything is read off it: a saved verdict is never taken on trust, it is
// recomputed from the document's own request data, by checks the caller
// hands in (a story's rule is the scenarios' to know, not this package's).
// The report package's tests (report/json_test.go, json_fuzz_test.go)
// read back what report's renderers wrote, so the reading is tested where
// its input is made.
//
// # Words and numbers
//
// What a result is said in is made here once, for every story, command
// and renderer: a count of things (Plural, words.go), a duration as
// people say it (DurationWords), and a percentage in each of the forms a
// report needs, each with its own rounding (Percent, PercentNear,
// PercentUp, PercentShort, PercentShare; percent.go).
package results
