// Package sqlite keeps the stories' state in a real SQLite database, through
// the pure-Go driver modernc.org/sqlite, to show the fix the stories report
// for D1 (which is SQLite) holding on a real engine, and the naive code
// breaking on the very same one.
//
// The database runs in WAL mode so that readers never wait for the writer,
// and every connection carries a busy timeout, so that writers queue for the
// database's single write lock instead of failing with "database is locked".
// Tables are named racelab_* and can share a file with anything else.
//
// Two strategies use the same tables:
//
//   - The default, atomic one makes each request a single statement that
//     reads, decides and writes under the write lock: an upsert that adds
//     one and answers the new total with RETURNING, or one whose DO UPDATE
//     carries a WHERE so that a request over the limit changes nothing and
//     gets no row back.
//   - "naive" reads with a SELECT, decides and computes the new value in Go,
//     and writes it with a second statement, with no transaction around the
//     two. Requests that read before another one writes write the same value
//     and updates are lost. SQLite is quick enough that few requests would
//     overlap, so the store waits ThinkTime between the read and the write,
//     modelling the application's own work (rendering, a call to another
//     service); it widens the window the race needs without creating the
//     race.
//
// The package knows nothing of racelab's engine: a Store plays the story
// interfaces of package story (Counter, Quota, Inventory, Limiter, Plans)
// by its method set, and the targets package opens it as a target.
package sqlite
