// Package redis is racelab's Redis store: the five stories (a view
// counter, a daily download quota, a one-of-a-kind item, a rate limit's
// window and a subscription's downloads) kept in a real Redis server, each
// updated by one of three strategies. The counter, the quota and the item
// are told here; the window (limits.go) and the subscription (plans.go)
// follow the same three.
//
//   - "" (atomic) lets the server decide in one step: INCR for the counter,
//     a Lua check-and-increment for the quota, and a Lua SET NX PX claim for
//     the item, so no other request can run between the read and the write.
//   - "naive" reads with GET (or HMGET), decides in Go and writes with SET:
//     two round trips with nothing between them to stop another client, the
//     lost update the stories are about.
//   - "watch" runs the same read and write as naive inside WATCH/MULTI/EXEC,
//     so that EXEC fails when another client changed the key in between, and
//     tries again after a jittered, exponentially growing wait, until it
//     commits or the request's context ends (Config.MaxAttempts can bound
//     the tries too); Store.Retries counts how often that happened.
//
// Every key the store writes starts with KeyPrefix and expires on its own
// (RecordTTL, ReservationTTL, or the end of the quota's day), so that trials
// on fresh keys leave nothing behind for long and never touch anything else
// kept in the same server.
//
// The package knows nothing of racelab's engine: a Store plays the story
// interfaces of package story (Counter, Quota, Inventory, Limiter, Plans) by
// its method set, and the targets package opens it as a target. Open checks
// the URL before it dials (an error wrapping ErrBadURL, its password hidden),
// then that the server answers, failing fast with an error that wraps
// ErrUnreachable when it does not, and Prepare opens the connections a burst
// needs before it starts.
package redis
