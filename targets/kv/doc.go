// Package kv simulates a Cloudflare Workers KV namespace and runs on it the
// naive Worker code of three lost-update stories: a view counter, a daily
// download quota and a one-of-a-kind checkout.
//
// # Why a simulator
//
// The stories happened on Workers KV, and KV loses updates in two ways that
// a local map would hide. It has no atomic operation, so read, compare and
// write are three steps another request can slip between. And its reads are
// served from caches, so even requests one after another can read a value
// that has since been overwritten. To show both without a Cloudflare
// account, the simulator keeps its own bookkeeping of a central store and of
// per-machine caches, and loses updates by following the platform's rules,
// never through a data race: all of its state sits behind one mutex.
//
// # What it models, and the documented behaviour behind each setting
//
//   - Operations: Get, Put, Delete and List. Like the platform it offers no
//     increment, no compare-and-swap and no transaction, so a counter must be
//     read, changed in code and written back.
//   - Concurrent writes: each write reaches the central store after the write
//     latency, and the last to arrive wins. Nothing reports the writes it
//     overwrote.
//   - Locations and machines (Config.Locations, Config.Machines): requests
//     run where the network routes them, picked here by the seeded source
//     (Namespace.Route). Each machine of each location has its own cache.
//   - Routing (Config.Route, sticky): anycast sends one client to one point
//     of presence, so by default every request reaches one location, the
//     home the seed picks, and any of its machines. RouteSpread sends each
//     request to any location instead, as for visitors behind different
//     points of presence. Sticky is what makes seed 002's lesson hold: one
//     client's sequential tests pass, and only concurrent requests lose.
//   - Cache TTL (Config.CacheTTL, 60 s, at least 30 s): the platform's
//     cacheTtl option. A read that misses the cache fetches the central value
//     and caches the result for that long, including "not found". Until the
//     entry expires that machine answers it, however often the key changes.
//   - Read your own write (Config.MissOwnWrite, 0.4 %): the platform says a
//     change is usually visible at once in the location that made it, but
//     not that it always is. A write updates the caches of the writing
//     location, except with this probability, when they keep what they had.
//     The default is calibrated so that ten hits in a row from one client
//     count all ten in at least 95 % of trials (seed 002) while six
//     downloads in a row still end with the counter behind in about 2 %
//     (seed 000); see DefaultMissOwnWrite.
//   - Propagation elsewhere: other locations see a write only when their
//     cached entry expires, so up to the cache TTL. The platform says "60
//     seconds or more"; the "more" is not modelled.
//   - Write rate (Config.WriteLimit, off): the platform allows one write a
//     second to the same key and answers the excess with HTTP 429, here
//     ErrTooManyWrites.
//   - Latency (Config.HotRead 1 ms, Config.ColdRead 20 ms, Config.Write 30 ms,
//     Config.Jitter ±20 %): a cached read is fast, a central read or a write
//     takes tens of milliseconds. These are orders of magnitude, not
//     measurements. They matter because they set how wide the window between
//     a request's read and its write is.
//   - Keys: the platform's limit of 512 bytes, and no empty, "." or "..".
//
// Every random choice (routing, jitter, missed own writes) comes from
// Config.Seed. Every wait and every timestamp goes through Config.Clock, real
// by default. With a *clock.Virtual (package clock), a burst run with
// clock.Run is a deterministic sequence of events: the requests take turns
// at the latencies' ends, a TTL of minutes passes at once, and the same
// seed gives the same routes, the same answers and the same count every
// time.
//
// # What a request did
//
// With a story.Recorder in its context (story.WithRecorder), a request's
// operations are recorded on the namespace's clock: each read ("read", with
// the value or "not found", and whether a cache served it, how long ago
// that cache took it, and whether the central store has moved on since),
// each write as issued ("write") and as it lands ("write-lands", naming the
// value it replaced: under last-write-wins the landing instant decides
// which write erased which), and each refusal ("refuse": a 429, the
// quota's limit, an item already sold).
//
// # The Worker
//
// App is the code the stories' authors first wrote, on this namespace: Hit
// reads a count, adds one and writes it back; Consume reads a visitor's
// {day, count}, refuses at the limit and otherwise writes count+1; Checkout
// looks for an item's sold mark and writes one if there is none. Released
// together, ten hits record about one view, twelve downloads with a limit of
// five are all granted, and five checkouts of a single painting all succeed.
// Views, Count and Claims read what the store settled on through
// Namespace.Settled, the value every location sees once its cache expires.
//
// The package knows nothing of racelab's engine: App plays the story
// interfaces of package story by its method set, and the targets package
// opens it as a target.
package kv
