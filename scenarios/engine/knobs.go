package engine

import (
	"strconv"
	"time"

	"github.com/racelab/racelab/internal/usage"
	"github.com/racelab/racelab/scenarios/pace"
	"github.com/racelab/racelab/scenarios/results"
)

// A Knob is one of a story's own settings: its name (cmd makes a flag of
// it, --NAME), what it does in a line of help, and how its text is
// checked. A Settings records it by name as the text given; the story
// that declares it reads its value from there (KnobOf), so that a story
// with a knob of its own is one file. Stories that take a knob of one
// name share it: they read it the same way, each says what it means for
// itself.
type Knob struct {
	// Name is the knob's name, and its flag's: "stock" for --stock.
	Name string
	// Usage is what the knob does, in a line of the flag's help.
	Usage string
	// Bool knobs take no value on the command line: --rollover.
	Bool bool
	// check says what is wrong with v as the knob's value: a
	// *usage.FieldError naming the knob; nil when it is fine. A Knob made
	// by hand, without one, takes any text, for its story to read.
	check func(v string) error
}

// Set checks v and records it in s as the knob's text; a value the knob
// cannot take is a *usage.FieldError naming the knob, and leaves s as it
// was.
func (k Knob) Set(s *results.Settings, v string) error {
	if k.check != nil {
		if err := k.check(v); err != nil {
			return err
		}
	}
	s.Set(k.Name, v)
	return nil
}

// KnobOf is a knob whose text reads as a T: a story declares it once,
// lists its Knob among its Knobs, and reads its value from the settings
// it is made with (Read), and records the value it was made with (Put).
type KnobOf[T any] struct {
	Knob
	// parse reads the knob's text; the error is a *usage.FieldError
	// naming the knob.
	parse func(v string) (T, error)
	// format writes a value as text that parse reads back the same.
	format func(T) string
}

// knobOf makes a KnobOf from its parse and format.
func knobOf[T any](name, help string, parse func(string) (T, error), format func(T) string) KnobOf[T] {
	return KnobOf[T]{
		Knob:   Knob{Name: name, Usage: help, check: func(v string) error { _, err := parse(v); return err }},
		parse:  parse,
		format: format,
	}
}

// Read is the knob's value in s, def when s does not set it. A text it
// cannot read sets *err, when *err is still nil, and is read as def; with
// *err already set Read reads nothing, so that a story reads its knobs in
// a row and checks once for the first error.
func (k KnobOf[T]) Read(s results.Settings, def T, err *error) T {
	v, ok := s.Knob(k.Name)
	if !ok || *err != nil {
		return def
	}
	t, perr := k.parse(v)
	if perr != nil {
		*err = perr
		return def
	}
	return t
}

// Put records v in s as the knob's text, which Read reads back as v.
func (k KnobOf[T]) Put(s *results.Settings, v T) { s.Set(k.Name, k.format(v)) }

// IntKnob is a whole number from lo to hi (hi 0: no bound), said as want
// when it is not ("1 or more copies").
func IntKnob(name, help string, lo, hi int64, want string) KnobOf[int64] {
	return knobOf(name, help, func(v string) (int64, error) {
		n, err := strconv.ParseInt(v, 10, 64)
		if err != nil || n < lo || hi > 0 && n > hi {
			return 0, usage.Fieldf(name, "{} %s: want %s", v, want)
		}
		return n, nil
	}, func(n int64) string { return strconv.FormatInt(n, 10) })
}

// DurationKnob is a positive duration such as example.
func DurationKnob(name, help, example string) KnobOf[time.Duration] {
	return knobOf(name, help, func(v string) (time.Duration, error) {
		d, err := time.ParseDuration(v)
		if err != nil || d <= 0 {
			return 0, usage.Fieldf(name, "{} %q: want a positive duration such as %s", v, example)
		}
		return d, nil
	}, time.Duration.String)
}

// RateKnob is a positive rate: 20/s, 6/m.
func RateKnob(name, help string) KnobOf[pace.Rate] {
	parse := func(v string) (pace.Rate, error) {
		r, err := pace.ParseRate(v)
		if err != nil || r <= 0 {
			return 0, usage.Fieldf(name, "{} %q: want a positive rate such as 20/s or 6/m", v)
		}
		return r, nil
	}
	return knobOf(name, help, parse, func(r pace.Rate) string {
		// As a person says it when that reads back the same (6/m), else
		// exactly, a second at a time.
		w := RateWords(r)
		if p, err := parse(w); err != nil || p != r {
			w = r.String()
		}
		return w
	})
}

// SpacingKnob is how a stream's arrivals are spaced: even or poisson.
func SpacingKnob(name, help string) KnobOf[pace.Spacing] {
	return knobOf(name, help, func(v string) (pace.Spacing, error) {
		sp, err := pace.ParseSpacing(v)
		if err != nil {
			return "", usage.Fieldf(name, "{} %q: want even or poisson", v)
		}
		return sp, nil
	}, func(sp pace.Spacing) string { return string(sp) })
}

// BoolKnob is on when given.
func BoolKnob(name, help string) KnobOf[bool] {
	k := knobOf(name, help, func(v string) (bool, error) {
		b, err := strconv.ParseBool(v)
		if err != nil {
			return false, usage.Fieldf(name, "{} %q: want true or false", v)
		}
		return b, nil
	}, strconv.FormatBool)
	k.Bool = true
	return k
}

// ChoiceKnob is one of choices, said as want when it is not.
func ChoiceKnob(name, help, want string, choices []string) KnobOf[string] {
	return knobOf(name, help, func(v string) (string, error) {
		for _, c := range choices {
			if v == c {
				return v, nil
			}
		}
		return "", usage.Fieldf(name, "{} %q: want %s", v, want)
	}, func(v string) string { return v })
}
