package engine

import (
	"strconv"
	"time"

	"github.com/racelab/racelab/internal/usage"
	"github.com/racelab/racelab/scenarios/pace"
	"github.com/racelab/racelab/scenarios/results"
)

// A Knob is one of a story's own settings: its name (cmd makes a flag of
// it, --NAME), what it does in a line of help, and how a value given as
// text sets it in a Settings. Stories that take a knob of one name share
// it: they read it the same way, each says what it means for itself.
type Knob struct {
	Name  string
	Usage string
	// Bool knobs take no value on the command line: --rollover.
	Bool bool
	// Set reads v into s; a value the knob cannot take is a
	// *usage.FieldError naming the knob.
	Set func(s *results.Settings, v string) error
}

// IntKnob is a whole number from lo to hi (hi 0: no bound), said as want
// when it is not ("1 or more copies").
func IntKnob(name, help string, lo, hi int64, want string, field func(*results.Settings) *int64) Knob {
	return Knob{Name: name, Usage: help, Set: func(s *results.Settings, v string) error {
		n, err := strconv.ParseInt(v, 10, 64)
		if err != nil || n < lo || hi > 0 && n > hi {
			return usage.Fieldf(name, "{} %s: want %s", v, want)
		}
		*field(s) = n
		return nil
	}}
}

// DurationKnob is a positive duration such as example.
func DurationKnob(name, help, example string, field func(*results.Settings) *time.Duration) Knob {
	return Knob{Name: name, Usage: help, Set: func(s *results.Settings, v string) error {
		d, err := time.ParseDuration(v)
		if err != nil || d <= 0 {
			return usage.Fieldf(name, "{} %q: want a positive duration such as %s", v, example)
		}
		*field(s) = d
		return nil
	}}
}

// RateKnob is a positive rate: 20/s, 6/m.
func RateKnob(name, help string, field func(*results.Settings) *pace.Rate) Knob {
	return Knob{Name: name, Usage: help, Set: func(s *results.Settings, v string) error {
		r, err := pace.ParseRate(v)
		if err != nil || r <= 0 {
			return usage.Fieldf(name, "{} %q: want a positive rate such as 20/s or 6/m", v)
		}
		*field(s) = r
		return nil
	}}
}

// SpacingKnob is how a stream's arrivals are spaced: even or poisson.
func SpacingKnob(name, help string, field func(*results.Settings) *pace.Spacing) Knob {
	return Knob{Name: name, Usage: help, Set: func(s *results.Settings, v string) error {
		sp, err := pace.ParseSpacing(v)
		if err != nil {
			return usage.Fieldf(name, "{} %q: want even or poisson", v)
		}
		*field(s) = sp
		return nil
	}}
}

// BoolKnob is on when given.
func BoolKnob(name, help string, field func(*results.Settings) *bool) Knob {
	return Knob{Name: name, Usage: help, Bool: true, Set: func(s *results.Settings, v string) error {
		b, err := strconv.ParseBool(v)
		if err != nil {
			return usage.Fieldf(name, "{} %q: want true or false", v)
		}
		*field(s) = b
		return nil
	}}
}

// ChoiceKnob is one of choices, said as want when it is not.
func ChoiceKnob(name, help, want string, choices []string, field func(*results.Settings) *string) Knob {
	return Knob{Name: name, Usage: help, Set: func(s *results.Settings, v string) error {
		for _, c := range choices {
			if v == c {
				*field(s) = v
				return nil
			}
		}
		return usage.Fieldf(name, "{} %q: want %s", v, want)
	}}
}
