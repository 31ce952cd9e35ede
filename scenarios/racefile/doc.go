// Package racefile is racelab's reader and player of race files: a race
// on any HTTP API written in a small YAML file (*.race.yaml) rather than
// in Go, and judged by a rule its author writes in CEL. It parses and
// checks a file and plays it through the engine; package starter writes a
// new one.
//
// A file names setup requests (sent before each trial's burst, in order,
// not raced), the burst (N copies of one request, or several kinds with
// count:), readback requests whose JSON answers are named with as:, and a
// hard rule: a CEL condition over allowed, refused, errors, requests,
// answers and the named answers. Load parses it with positions, so that a
// file it refuses is refused in one line, FILE:LINE:COL: what is wrong,
// what would be right; every template and CEL expression is checked then,
// before anything is sent. The two languages themselves, {{NAME}}
// templates and CEL, live in package expr; this package decides where
// each may be written and what it may read.
//
// File.Scenario makes the race an *engine.Scenario like the built-in
// stories, so that run, load, explain and verify play it through the same
// engine: its burst goes out through targets/httpapi's client,
// synchronized as that client synchronizes the stories' (HTTP/2 single
// packet, HTTP/1.1 last byte), and what each trial read back is kept in
// the trial (results.Readback), so that a saved result is judged again by
// the same rule. A race file declares no history model: its trials are
// judged by its rule alone.
//
// Shards split its burst as they split a story's: shard 0 runs each
// trial's setup (engine.Player.Prelude), every shard keeps its share of
// the answers in its part (Player.Part), and verify puts the shares
// together (Player.Rejoin) before it reads back and judges the rule. A
// burst that sends what the setup captured cannot be split
// (engine.Scenario.Unsplittable): only shard 0 knows it.
//
// Many users at once: a setup step with repeat: is sent N times (16 at a
// time, repeat.go), its as: and capture: names becoming lists that each
// burst request reads its own element of ({{sid[i]}}); capture: takes
// values from an answer's status, headers, cookies and body in CEL
// (capture.go); form: sends an urlencoded body and key: may ask for
// letters and digits (form.go). Secrets (credentials, sessions, values
// marked secret: true) are hidden where a trial keeps them, so that no
// output or error shows them (secret.go); input.go refuses what is not a
// race file's text.
//
// What nuclei's race templates and Turbo Intruder match is the answers'
// status codes; a race file reads the store back and judges the state.
//
// # SQL races
//
// A file whose burst holds transaction:s is a SQL race (transaction.go
// parses it, sqlplay.go plays it): its target is a database
// (postgres://…, mysql://…, sqlite:PATH, at the URL's isolation=), its
// setup, readback and cleanup are sql: statements on it, and each burst
// entry is a transaction, run by package sqlrace on a connection of its
// own: they begin before the release and wait for each other at
// barrier: true, or replay a fixed order: step by step. The database's
// refusals are aborted (retry: runs them again), anything else an error.
// Each transaction's answer is a sqlrace.Answer: committed or aborted,
// what its statements read, and its timeline, which the rule reads and
// explain draws.
package racefile
