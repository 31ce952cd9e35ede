// Package scenarios holds racelab's stories and the burst engine that plays
// them against targets.
//
// A Scenario is one story with one hard rule: how a request acts on a store,
// how to read back what the store counted, and how to judge a trial. The
// engine (Run) opens each target, fires exactly N requests per trial released
// together from one barrier, records every request's instants and outcome,
// reads what the store counted, and checks the rule. The result (Run) is
// plain data that the report package renders; nothing here prints.
package scenarios
