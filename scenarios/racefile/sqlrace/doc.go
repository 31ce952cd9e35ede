// Package sqlrace runs the transactions of a SQL race on a database, each
// on a connection of its own: begun before the release, they wait for
// each other at their barriers, or replay a fixed order step by step as
// Hermitage's scripts do, and end as the database ends them (committed,
// aborted by its own refusal and perhaps retried, or failed). Each keeps
// a timeline of what it did, which a rule reads and explain draws.
//
// A statement still running past BlockedAfter waits on another's lock:
// the barrier, or the order, goes on without it. That wait only shapes
// the interleaving; the database's answers decide every verdict.
//
// Package racefile parses a race file's transactions and judges what
// they came to; this package knows nothing of YAML, CEL or rules: a
// statement's arguments come from a function it is given.
package sqlrace
