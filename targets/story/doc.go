// Package story declares, once, what a store must do to play each of
// racelab's stories: the store interfaces and the figures every side
// shares (the daily limit, the stock of a one-of-a-kind item), and the
// ops table (Ops): each story's request, its route, its read-back, the
// limit it carries and the words it is said in, read by every side that
// builds, serves or shows one (the HTTP client and server, the classroom
// board, the history models). It is a leaf: the scenarios, every store,
// the HTTP contract's server and client, and the conformance kit all
// import it, and it imports none of them.
//
// The table is a value, not a registry: a story with a request of its own
// (a test's) adds its row with Table.With and hands the table to whoever
// reads it; the stores play such an op as a count capped at the
// request's limit (Capped). Nothing global changes, so a test that adds
// an op leaves every other test as it was.
//
// A store plays a story by having its method set; what a target can play
// is read off its type (store.(story.Counter)), never declared beside it.
package story
