// Package scenarios holds racelab's stories: one file each, each a Scenario
// of the engine (package scenarios/engine) with one hard rule, and the
// registry that finds them by name (All, Lookup, Find).
//
// A story is one file: engine.Define builds its Scenario typed on its store
// interface (package targets/story), in the Scenario's named parts: its
// words and cast (Tale), its request (Request), its rules, figures and
// history model (Verdict), its extras for explain and parts for `racelab
// run` (Teaching), and its knobs (Tuning): the settings it takes, which a
// result records by name as text and the story reads itself. The
// engine knows no story by name; it finds one through a Finder, and Find
// is the one this package offers: the built-in stories, their parts, and
// race files (package scenarios/racefile), which Lookup takes by their path.
//
// Below this package, each in a folder of its own:
//
//   - engine: the burst engine: fire, pace, verdicts, bounds, history checks;
//   - results: the results and their JSON schema, which reports render
//     without knowing any story;
//   - load: sustained load, judged key by key as the engine judges trials;
//   - shards: a run or a load spread over processes, and its merge;
//   - racefile: a race on any HTTP API written in YAML, judged by CEL;
//   - pace: the arrival schedules that loads and streams share.
package scenarios
