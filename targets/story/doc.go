// Package story is the one place that says what a store must do to play
// each of racelab's stories, in the words every side that builds, serves
// or shows a story shares. It holds:
//
//   - the store interfaces (Counter, Quota, Inventory, Limiter, Plans,
//     Capped) and the figures every side shares (the daily limit, the
//     stock of a one-of-a-kind item, a rate limiter's Window);
//   - the ops table (Ops): each story's request, its route, its
//     read-back, the limit it carries and the words it is said in, read by
//     the HTTP client and server, the classroom board and the history
//     models (ops.go);
//   - the two states of a subscription plan, Paid and Cancelled, as every
//     store writes them (plan.go);
//   - the HTTP status a service answered, carried back through a context
//     (WithStatus, NoteStatus; status.go);
//   - the trace of a request's store operations (trace.go): what each
//     request read and wrote and which write erased which, for a timeline.
//
// It is a leaf: the scenarios, every store, the HTTP contract's server and
// client, and the conformance kit all import it, and it imports none of
// them.
//
// # The ops table
//
// The table is a value, not a registry: a story with a request of its own
// (a test's) adds its row with Table.With and hands the table to whoever
// reads it; the stores play such an op as a count capped at the
// request's limit (Capped). Nothing global changes, so a test that adds
// an op leaves every other test as it was.
//
// A store plays a story by having its method set; what a target can play
// is read off its type (store.(story.Counter)), never declared beside it.
//
// # Traces
//
// A caller that wants a request's history gives it a Recorder through its
// context (WithRecorder); a store appends a Step with Trace wherever it reads,
// writes or refuses. Without a recorder Trace does nothing, so a store records
// unconditionally and pays only a context lookup. Steps carry the instant
// on the store's own clock (see package clock): on a virtual clock two runs
// with the same seed record identical steps.
//
// The ops a Step records are a small fixed set, so that a renderer can lay
// out any store's steps alike:
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
// racelab's engine and report read the steps.
package story
