// Package targets names, parses and opens the stores that racelab's
// scenarios race against.
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
package targets
