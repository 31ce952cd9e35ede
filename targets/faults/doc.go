// Package faults injects seeded failures into the simulated stores (kv and
// actor), so that a run can show what a store's outage does to the code
// that depends on it: an error rate (every operation fails with a given
// probability), an outage window measured from the start of each trial
// (every operation inside it fails), and latency spikes (an operation now
// and then takes much longer). The draws come from a stream of their own,
// decided by the seed, so a run with faults replays like any other in
// virtual time, and a store without faults draws nothing at all: its runs
// stay byte for byte what they were.
//
// Faults hit the stories' requests, never racelab's read-back of what the
// store recorded: the verdict reads the truth, the requests meet the
// outage.
package faults
