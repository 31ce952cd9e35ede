// Package background puts load on a target while its bursts run (racelab
// run --background RATE): races happen while a service is busy, where a
// lock that holds in an idle test may time out, a serializable
// transaction retry past its deadline, a cache fall further behind.
//
// The load is scenarios/load's open model, sent at the burst's own store
// (the store the trials opened, handed to load as a shared catalog entry,
// so that an embedded store is loaded too) over keys of its own, from
// before the first trial to after the last. With OnKey, a reader also
// reads the key of the trial in progress at the same rate: reads only,
// since a write there would change what the trial counts. Each target's
// Summary says what the load achieved beside the run's verdict: its
// throughput, p99 and errors.
//
// The package sits beside scenarios/load rather than in it: the engine
// knows a background only as a function in its Plan (engine depends on
// nothing that depends on it), and results keep no background figures,
// so that a run without --background writes exactly what it wrote before.
package load
