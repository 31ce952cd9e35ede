// Package trace records, per request, the store operations the request
// made, so that a timeline can show what each request read and wrote and
// which write erased which.
//
// A caller that wants a request's history gives it a Recorder through its
// context (WithRecorder); a store appends a Step with Add wherever it reads,
// writes or refuses. Without a recorder Add does nothing, so a store records
// unconditionally and pays only a context lookup. Steps carry the instant
// on the store's own clock (see package clock): on a virtual clock two runs
// with the same seed record identical steps.
//
// The ops are a small fixed set, so that a renderer can lay out any store's
// steps alike:
//
//	read         a value read, as the request saw it (Value; "not found" in Note)
//	write        a write as the request issued it (Value)
//	write-lands  a write reaching the store that decides, where the last to land wins;
//	             Note names the value it replaced: the write it erased
//	fetch        an await on something outside the store (another service)
//	refuse       the store or the code on it said no: a 429, a limit reached, sold out
//
// A store whose writes take effect at once (a single-threaded object, an
// atomic statement) records write only; one whose writes travel (a
// replicated KV store) records write when issued and write-lands on
// arrival. Where a read was served from matters for stale reads, and goes
// in Note ("cache hit, cached 2s ago, stale: the store holds 42").
//
// The package knows nothing of racelab; stores import it, and racelab's
// engine and report read the steps.
package trace
