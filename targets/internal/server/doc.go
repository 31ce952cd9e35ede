// Package server is the common part of racelab's stores on a real server
// (redis, postgres, and sqlite's plan cache), so that each store keeps
// only what its driver and its strategies make its own:
//
//   - what a store holds (Store) and its Config's defaults filled in and
//     strategy checked (Config.WithDefaults);
//   - the steps of opening a store, each store's names, defaults and
//     driver given as a Kind (Open);
//   - the server's URL checked in plain words before anything is dialled,
//     its password hidden in every message (HidePassword, ParseURL,
//     CheckAddress, Printable, URLErrors);
//   - a failed first contact told in one line that wraps the store's
//     sentinel (Server.Unreachable);
//   - the pool of connections, replaced by a larger one and warmed before a
//     burst, so that no connection is opened inside it (Pool);
//   - the pause between a read-then-write strategy's read and its write
//     (Pause);
//   - the retries of an optimistic strategy (retry.go): a request started
//     over when the server refused it because of a concurrent change, as
//     Redis's WATCH strategy does when EXEC fails and PostgreSQL's
//     SERIALIZABLE strategy when a commit is refused. Both stores retry
//     the same way (a jittered, growing wait, an optional bound on the
//     attempts, a count of the restarts; RetryLoop), and give up with
//     ErrTooManyRetries; only what they call a refusal and how they word
//     giving up are their own;
//   - the cache of subscription plans a server keeps in its own process
//     when it does not ask the strong store about the plan on every
//     download (plancache.go; PlanCache, NewPlans): the naive strategies of
//     the real stores (sqlite, redis, postgres) play stale-plan through it.
//
// # The plan cache
//
// A read of a subscriber's plan is kept for a TTL measured on the store's
// clock, real or virtual, and answered again until it expires. Nothing
// clears it early: the cancel reaches another server (the payment
// provider's webhook), so the server that cached "paid" goes on granting
// originals until its read is TTL old. That is the exposure the story
// measures, and the TTL is its bound.
//
// The package knows nothing of Redis, PostgreSQL or SQLite: each store
// hands in what is its own (a Kind, a Driver, and to PlanCache.Read the
// function that reads the plan from the store itself).
package server
