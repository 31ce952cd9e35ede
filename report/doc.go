// Package report renders a results.Result for people and for programs.
//
// A run ends in one plain-data Result; this package only turns it into text
// and never runs anything. The formats share one reading of the result
// (summary.go):
//
//   - Table, for a terminal or a CI log: a heading with the scenario and its
//     hard rule, one row per target comparing what was allowed with what the
//     store counted, and, under it, the breakages in plain words. A HISTORY
//     column appears when trials' histories were checked for
//     linearizability, and a BREAK RATE column (the rate of breaking, or its
//     upper bound when nothing broke) when targets ran several trials;
//   - Markdown, the same rows and words for a GitHub job summary or a
//     workshop handout, with a one-line outcome on top;
//   - JUnit XML, one test case per story × target, for CI test reports;
//   - HTML, one self-contained page with the table, a timeline of one
//     trial per target and the distribution of what was counted;
//   - JSON, the whole Result (every trial and every request) for tools and
//     for later comparison; it carries its schema version, and
//     results.ReadJSON reads it back for `racelab report`.
//
// The outputs depend on nothing but the Result: no terminal width, no
// locale, no colour, no clock, so the same result always renders to the
// same bytes and can be locked down with golden files (go test ./report
// -update rewrites them). Only table.go imports tablewriter, so an API
// change there stays in one file.
package report
