// Package postgres is racelab's PostgreSQL store: the three stories (a view
// counter, a daily download quota, a one-of-a-kind item) kept in a real
// PostgreSQL server, each updated by one of four strategies.
//
//   - "" (atomic) lets the server decide in one statement: an upsert that
//     adds one and answers the total, an upsert that only adds while the
//     count is under the limit, and an upsert that only claims an item
//     WHERE remaining > 0.
//   - "naive" reads with a SELECT, decides in Go and writes the value it
//     computed, as separate READ COMMITTED statements: the lost update the
//     stories are about.
//   - "for-update" makes sure the row exists, then runs the same read and
//     write in one transaction whose SELECT … FOR UPDATE locks the row, so
//     that requests take turns.
//   - "serializable" runs the same read and write in a SERIALIZABLE
//     transaction and starts over when PostgreSQL refuses to commit it
//     (SQLSTATE 40001, or 40P01 for a deadlock), after a jittered,
//     exponentially growing wait, until it commits or the request's context
//     ends (Config.MaxAttempts can bound the tries too); Store.Retries
//     counts how often that happened.
//
// The store keeps its state in three tables, racelab_views, racelab_quota
// and racelab_items, which Open creates when they do not exist; it never
// drops a table or deletes a row. Trials use fresh keys, so they need no
// reset.
//
// The package knows nothing of racelab: targets adapts a Store to its
// Counter, Quota and Inventory interfaces. Open checks the URL before it
// dials (an error wrapping ErrBadURL, its password hidden), then that the
// server answers, failing fast with an error that wraps ErrUnreachable when
// it does not, and Prepare opens the connections a burst needs before it
// starts.
package postgres
