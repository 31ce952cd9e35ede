// Package explained holds what `racelab explain` shows of a story: the
// story in its own words, its traced replays (the race, the fix, and any
// of the story's own), and the exercise it ends with. Like a result, an
// explanation carries its own words, so that the report package renders
// it without the code that played it; the engine builds it (engine.Explain)
// and each story adds its own replays and ending.
package explained
