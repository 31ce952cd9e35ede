// Package report renders a scenarios.Result for people and for programs.
//
// A run ends in one plain-data Result; this package only turns it into text
// and never runs anything. Three formats share one reading of the result:
//
//   - Table, for a terminal or a CI log: a heading with the scenario and its
//     hard rule, one row per target comparing what was allowed with what the
//     store counted, and, under it, the breakages in plain words;
//   - Markdown, the same rows and words for a GitHub job summary or a
//     workshop handout;
//   - JSON, the whole Result (every trial and every request) for tools and
//     for later comparison; it carries its schema version.
//
// The table and markdown outputs depend on nothing but the Result: no
// terminal width, no locale, no colour, so the same result always renders
// to the same bytes and can be locked down with golden files. Only table.go
// imports tablewriter, so an API change there stays in one file.
package report
