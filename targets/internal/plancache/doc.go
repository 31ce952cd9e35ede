// Package plancache is the cache of subscription plans a server keeps in
// its own process when it does not ask the strong store about the plan on
// every download: the naive strategies of the real stores (sqlite, redis,
// postgres) play stale-plan through it.
//
// A read of a subscriber's plan is kept for a TTL measured on the store's
// clock, real or virtual, and answered again until it expires. Nothing
// clears it early: the cancel reaches another server (the payment
// provider's webhook), so the server that cached "paid" goes on granting
// originals until its read is TTL old. That is the exposure the story
// measures, and the TTL is its bound.
//
// The package knows nothing of any store: a store hands Read the function
// that reads the plan from the store itself.
package plancache
