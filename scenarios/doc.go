// Package scenarios holds racelab's stories and the burst engine that plays
// them against targets.
//
// A Scenario is one story with one hard rule: how a request acts on a store,
// how to read back what the store counted, and how to judge a trial. The
// engine (Run) opens each target, fires exactly N requests per trial released
// together from one barrier, records every request's instants and outcome,
// reads what the store counted, and checks the rule. The result (Run) is
// plain data that the report package renders; nothing here prints.
//
// A story is one file: define[S] builds its Scenario typed on its store
// interface S (package targets/story), with its judge, its history model,
// and its own extras for Explain and parts for `racelab run`. A trial that
// did not break but in which a request failed is inconclusive: it proves
// nothing, and Result.Shortfalls, the one verdict behind every report and
// exit code, gives no "holds" without conclusive trials. Every trial is
// summed into its target's Tally as it finishes, so memory does not grow
// with the number of trials.
//
// Load is the other engine: sustained load in an open model (arrivals on a
// schedule from package pace, latency from each intended instant) or a
// closed one (C workers), measured in an HDR histogram, then every key
// read back and judged by the story's own Judge, one key as one trial, so
// that a load's verdict is decided by the same code as a run's.
package scenarios
