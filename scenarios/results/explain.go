package results

// About is a story in its own words: what a report prints of it, kept
// apart from the code that plays it so that a renderer needs none of that.
type About struct {
	// Name is what users type: "ten-hits-one-view".
	Name string
	// Title is the story in one line; Story tells it in a paragraph.
	Title string
	Story string
	// Rule is the hard rule in words; SoftRule, for a story that judges
	// one beside it, the soft rule; Fix says how the fixed targets keep
	// the hard rule.
	Rule     string
	SoftRule string
	Fix      string
	// Needs says in words what a store must be to play the story: "a
	// view counter".
	Needs string
}

// Replay is one traced trial of an explanation, with a heading and its
// outcome in words.
type Replay struct {
	Heading string
	Target  string
	Clock   Clock
	Trial   *Trial
	Outcome string
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
