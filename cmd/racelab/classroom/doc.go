// Package classroom is the page `racelab serve` shows a room at its root:
// the stories' keys moving as requests land (Server-Sent Events), the
// named stores side by side (--store naive=kv --store fixed=sqlite, each
// under its own path prefix with the HTTP contract unchanged below it), a
// "fire N at once" button per story that runs a burst through the same
// engine as `racelab run` and draws its lanes in SVG, the curl lines a
// student copies, and a replay of `racelab explain`'s steps that advances
// one step per click or key press. A story whose trial is not a burst
// (stale-plan: a subscription, a cancel, then downloads over minutes) has
// no button; the page gives the `racelab run` line that plays it on the
// same stores instead, and the button's API refuses it.
//
// A Room is an http.Handler over the stores serve opened. It owns the
// routing around the contract: the page and its API under /classroom/,
// each named store under /NAME/, or a single unnamed store at the root,
// where GET / still answers the contract's JSON index to anything that
// does not ask for HTML (curl, racelab's own warm-up). Every request to a
// store passes through a watcher that notes its route, key and answer for
// the page after the contract has answered it; the page never changes
// what a store is told.
//
// What the page knows of a story's requests (their routes, the fields
// that hold a count, the words its tables are headed with, a key to try)
// it reads off the story's row of the ops table (story.Table), handed in
// with the stories (Config.Ops, Config.Stories), so that a story with an
// op of its own shows as racelab's do. Its keys are kept by story, not by
// op: a request belongs to the stories of its op held to the limit it
// carries (?limit=3 is a three-a-day quota's, no limit six-become-four's),
// so that two stories of one op each show their own keys.
//
// The page itself (page/) is embedded: no script, font or style comes
// from anywhere but this server, and its Content Security Policy says so,
// so it works in a room with no internet. Everything a store or a student
// sent is shown as text (textContent in the script, escaped in the SVG
// drawn here), never as markup.
//
// A "background load" switch (off by default, with a rate such as
// 200/s) puts scenarios/background's load on every store the page shows
// while it is on and a page is open, so that the room's bursts land on
// busy stores, as racelab run --background fires its trials: each burst
// fired meanwhile runs with a load of its own around its trial, and the
// page shows beside its verdict what that load came to (answered rate,
// p99, errors), in run's words. Turning the switch off, closing the last
// page or stopping serve stops the load, every goroutine of it, before
// the switch answers. A store in virtual time has no rate: the switch
// refuses with the engine's own reason, said as the page says fields.
//
// With Config.Race (racelab serve --race FILE) the page shows one SQL
// race file instead of the stories, beside stores that are databases and
// serve no contract (read committed beside serializable): its button
// plays one trial of the file on every database through the engine, as
// racelab run FILE -t NAME=URL does, and each database shows its verdict
// (never "holds" on an error), a lane per transaction (its reads, writes,
// where it blocked, how it ended, with the database's code) and the same
// timeline in words, read off the answers the race file keeps
// (sqlrace.Answer). Its replay steps through the last trial: a run on
// databases has no seed. See race.go.
//
// The burst button is the one thing on the page that costs the machine
// work, so with --public a room could press it in a loop: one burst runs
// at a time, at most one every DefaultBurstEvery, of at most
// DefaultMaxBurst requests a store; a refused press is answered 429 with
// Retry-After. The switch's rate is capped at DefaultMaxBackground. The
// Host and cross-origin checks of guarded.Server guard the page as they
// guard the contract.
package classroom
