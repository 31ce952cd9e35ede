// Package saved reads what racelab saved: run and load results written as
// JSON (-o json), one document or a stream of them. It reads with a
// bound, refuses another schema rather than guessing at it, and hands
// every document to a Verifier before anything is judged or rendered from
// it: a saved verdict is never taken on trust, it is recomputed from the
// document's own request data. report renders what it returns, and its
// tests (report/json_test.go, json_fuzz_test.go) read back what report's
// renderers wrote, so this package is tested where its input is made.
package saved
