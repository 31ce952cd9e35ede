// Package load is racelab's load generator: sustained load on a target
// in a story's requests (racelab load), and the background load that runs
// beside a run's bursts (racelab run --background RATE, background.go).
//
// # A load
//
// Load plays a LoadPlan on each target in turn, in the open model
// (arrivals on a pace.Schedule whatever the answers, latency counted from
// each request's intended instant, as wrk2, vegeta and k6's arrival-rate
// executors do) or the closed one (workers that send again as soon as they
// are answered, as hey and wrk do), over fresh keys of its own. A meter
// records every answer (latency histogram, per-second series, failures by
// kind, HTTP statuses, a uniform sample of the requests); afterwards every
// key that was sent a request is read back and held to the story's own
// rule, one key as one trial (KeyReadback): the same rule, the same words
// and the same verdict as a run, summed into a results.Tally. A LoadPlan's
// thresholds (results.Threshold) are then checked on what the target did.
// A sharded load sends its share of the plan and leaves the read-back to
// the merge (package shards).
//
// # Background load
//
// Races happen while a service is busy, where a lock that holds in an idle
// test may time out, a serializable transaction retry past its deadline, a
// cache fall further behind. A Runner (New, of a Plan made by Parse) puts
// an open load on the burst's own store (the store the trials opened,
// handed to the load as a shared catalog entry, so that an embedded store
// is loaded too) over keys of its own, from before the first trial to
// after the last. With OnKey, a reader also reads the key of the trial in
// progress at the same rate: reads only, since a write there would change
// what the trial counts. Each target's Summary says what the background
// achieved beside the run's verdict: its throughput, p99 and errors.
//
// The engine knows a background only as a function in its Plan (engine
// depends on nothing that depends on it), and results keep no background
// figures, so that a run without --background writes exactly what it
// wrote before.
package load
