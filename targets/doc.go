// Package targets names, parses and opens the stores that racelab's
// scenarios race against.
//
// A target is a store plus a strategy: where the state lives and how one
// request updates it. Users name one as STORE[:STRATEGY][?PARAMS] ("kv",
// "sqlite:naive", "kv?locations=5&cache-ttl=30s") or as an http(s) URL.
// Parse turns such a spec into a Spec, Lookup finds its catalog Entry, and
// Open returns a Target whose Store implements one or more of the story
// interfaces (Counter, Quota, Inventory).
//
// The stores themselves live in subpackages (kv, actor, sqlite) that know
// nothing of racelab: this package adapts them and is the only place that
// knows the whole line-up. Scenarios import this package; it imports none of
// racelab's other packages.
package targets
