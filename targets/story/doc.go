// Package story declares, once, what a store must do to play each of
// racelab's stories: the store interfaces and the figures every side
// shares (the daily limit, the stock of a one-of-a-kind item), and the
// ops table (Ops): each story's request, its route, its read-back and the
// limit it carries, read by every side that builds or serves one. It is a
// leaf: the scenarios, every store, the HTTP contract's server and client,
// and the conformance kit all import it, and it imports none of them.
//
// A store plays a story by having its method set; what a target can play
// is read off its type (store.(story.Counter)), never declared beside it.
package story
