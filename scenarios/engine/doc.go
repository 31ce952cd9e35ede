// Package engine is racelab's burst engine: it plays a Scenario against
// targets (Run), firing exactly N requests per trial released together
// from one barrier, reading back what the store counted, judging the
// trial by the story's rules and checking its history for
// linearizability (porcupine, in history.go alone). It bounds the rate of
// breaking (Evidence), plays explanations (Explain) and checks saved
// results again from their own request data (CheckWith).
//
// The engine knows no story by name: a story is a Scenario, a struct of
// functions typed on its store interface (Define), and whatever is the
// story's own (its words, its figures, its knobs) travels through the
// fields of its named parts (Tale, Request, Verdict, Teaching, Tuning),
// which the story fills in. The engine writes no files and prints
// nothing: its results are data (package results) for the report
// package and the command to render and save.
package engine
