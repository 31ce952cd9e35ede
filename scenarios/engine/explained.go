package engine

import "github.com/racelab/racelab/scenarios/results"

// About is a story in its own words, the fields of the same names of its
// engine.Scenario: its name, its title and story, its hard and soft rules,
// how the fix keeps the hard one, and what a store needs to play it. It
// is what a report prints of the story, kept apart from the code that
// plays it so that a renderer needs none of that.
type About struct {
	Name, Title, Story  string
	Rule, SoftRule, Fix string
	Needs               string
}

// Replay is one traced trial of an explanation, with a heading and its
// outcome in words.
type Replay struct {
	Heading string
	Target  string
	Clock   results.Clock
	Trial   *results.Trial
	Outcome string
	// Compared marks the race and its fix: the same burst on two targets,
	// drawn on one time axis so that their difference shows.
	Compared bool
}

// Explanation is what `racelab explain` shows of a story: its replays in
// order, and the command that replays the same explanation.
type Explanation struct {
	// Story is the story told, in its own words.
	Story   About
	Replays []Replay
	// Ending, when the story has one, closes the explanation after how
	// the fix works.
	Ending *Ending
	Footer string
}

// Ending is a story's last section in `racelab explain`: its exercise
// worked through, one item a part of the design.
type Ending struct {
	Heading string
	Items   []EndingItem
	Closing string
}

// EndingItem is one part of a design and how it holds: "approximate" or
// "strict", and why.
type EndingItem struct {
	Part string
	Mark string
	Why  string
}
