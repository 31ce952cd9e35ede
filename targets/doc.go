// Package targets is racelab's catalog of the stores its scenarios race
// against: it names, parses and opens them, and holds the one store that
// is only a combination of two others, the actor+KV hybrid (hybrid.go).
//
// A target is a store plus a strategy: where the state lives and how one
// request updates it. Users name one as STORE[:STRATEGY][?PARAMS] ("kv",
// "sqlite:naive", "kv?locations=5&cache-ttl=30s") or as an http(s) URL.
// Parse turns such a spec into a Spec, a Catalog's Lookup finds its Entry,
// and Open returns a Target whose Store implements one or more of the story
// interfaces declared once in package story (Counter, Quota, Inventory).
// Builtin() is racelab's own catalog; tests and programs build their own
// with With rather than change a shared one.
//
// The stores themselves live in subpackages (kv, actor, sqlite, redis,
// postgres, httpapi) that know nothing of racelab's engine: this package
// adapts them and is the only place that knows the whole line-up. A new
// store is one folder and one entry in builtin.go, whose Kind is the type
// its Open returns. Scenarios import this package; it imports none of
// racelab's other packages.
//
// The hybrid (Store, made by New; the catalog's "hybrid") is the split the
// seeds recommend when part of a job needs correctness: a strong store
// decides, a key-value store fans the result out. It keeps a subscriber's
// daily quota in a simulated Durable Object (package actor), which decides
// every download exactly, and serves the subscriber's plan from a
// simulated KV namespace (package kv), cheap and cached, so a cancelled
// plan still reads "paid" for up to the plan read's cache TTL. Both run on
// one clock, virtual or real. It plays stale-plan only (story.Plans): the
// quota rule holds exactly, and the exposure after a cancel stays within
// the KV cache's bound.
package targets
