// Package postgres is racelab's PostgreSQL store: the five stories (a
// view counter, a daily download quota, a one-of-a-kind item, a rate
// limit's window and a subscription's downloads) kept in a real PostgreSQL
// server, each updated by one of four strategies. The counter, the quota
// and the item are told here; the window (limits.go) and the subscription
// (plans.go) follow the same four.
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
// The store keeps its state in five tables, racelab_views, racelab_quota,
// racelab_items, racelab_limits and racelab_plans, which Open creates when
// they do not exist; it never drops a table, and deletes only a caller's
// expired windows. Trials use fresh keys, so they need no reset.
//
// The package knows nothing of racelab's engine: a Store plays the story
// interfaces of package story (Counter, Quota, Inventory, Limiter, Plans) by
// its method set, and the targets package opens it as a target. Open checks
// the URL before it dials (an error wrapping ErrBadURL, its password hidden),
// then that the server answers, failing fast with an error that wraps
// ErrUnreachable when it does not, and Prepare opens the connections a burst
// needs before it starts.
package postgres
