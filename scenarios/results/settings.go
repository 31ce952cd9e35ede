package results

import (
	"bytes"
	"encoding/json"
	"fmt"
	"maps"
	"slices"
	"strconv"
	"strings"
	"time"
)

// Settings are a story's own settings, given with its own flags of
// `racelab run` (Scenario.Knobs): each knob by its name, as text, which
// the story reads itself, so that a story with a knob of its own needs
// nothing here. A knob it does not set takes the story's default.
//
// In JSON the knobs are the object's fields, each a string ("limit":
// "5", "window": "1m0s"), beside "race". Results saved before knobs were
// text recorded them typed ("limit": 5, "window_ns": 60000000000); they
// read back as the same knobs (UnmarshalJSON).
type Settings struct {
	// Knobs are the knobs set, by name ("limit"), each as the text its
	// flag takes ("5"); nil when none is.
	Knobs map[string]string
	// Race names the race file the story was read from, when it was
	// one: no knob, but what finds the story again.
	Race *RaceFile
}

// raceField is the JSON field of Settings.Race, which no knob may be
// named.
const raceField = "race"

// Uncounted says the story is a race file that declares no counted::
// its counts mean nothing, and a report shows none. Nil settings are a
// story's own, which always counts.
func (s *Settings) Uncounted() bool { return s != nil && s.Race != nil && s.Race.Uncounted }

// Knob is the text of the knob name, and whether it is set.
func (s Settings) Knob(name string) (string, bool) {
	v, ok := s.Knobs[name]
	return v, ok
}

// Set sets the knob name to the text v.
func (s *Settings) Set(name, v string) {
	if s.Knobs == nil {
		s.Knobs = map[string]string{}
	}
	s.Knobs[name] = v
}

// Names lists the knobs set, in order of name.
func (s Settings) Names() []string { return slices.Sorted(maps.Keys(s.Knobs)) }

// Clone is a copy of s whose knobs can be set without changing s's.
func (s Settings) Clone() Settings {
	s.Knobs = maps.Clone(s.Knobs)
	return s
}

// MarshalJSON writes the knobs as string fields, and the race file as
// "race".
func (s Settings) MarshalJSON() ([]byte, error) {
	out := make(map[string]any, len(s.Knobs)+1)
	for k, v := range s.Knobs {
		out[k] = v
	}
	if s.Race != nil {
		out[raceField] = s.Race
	}
	return json.Marshal(out) // its fields in order of name
}

// UnmarshalJSON reads what MarshalJSON writes, and the typed settings of
// results saved before knobs were text: a number or a true is the knob's
// text as written ("limit": 5 is limit 5, "rate": 0.1 a rate of 0.1 a
// second), and a field NAME_ns a duration in nanoseconds, the knob NAME
// ("window_ns": 60000000000 is window 1m0s).
func (s *Settings) UnmarshalJSON(b []byte) error {
	var fields map[string]json.RawMessage
	if err := json.Unmarshal(b, &fields); err != nil {
		return err
	}
	*s = Settings{}
	for name, raw := range fields {
		raw = bytes.TrimSpace(raw)
		switch {
		case name == raceField:
			if err := json.Unmarshal(raw, &s.Race); err != nil {
				return fmt.Errorf("settings: race: %w", err)
			}
		case bytes.Equal(raw, []byte("null")):
		case raw[0] == '"':
			var v string
			if err := json.Unmarshal(raw, &v); err != nil {
				return fmt.Errorf("settings: %s: %w", name, err)
			}
			s.Set(name, v)
		default:
			knob, v, err := legacyKnob(name, string(raw))
			if err != nil {
				return err
			}
			s.Set(knob, v)
		}
	}
	return nil
}

// legacyKnob reads a typed setting of an earlier result as a knob's text.
func legacyKnob(name, raw string) (knob, v string, err error) {
	if base, ok := strings.CutSuffix(name, "_ns"); ok {
		ns, err := strconv.ParseInt(raw, 10, 64)
		if err != nil {
			return "", "", fmt.Errorf("settings: %s: %s is not a duration in nanoseconds", name, raw)
		}
		return base, time.Duration(ns).String(), nil
	}
	if raw == "true" || raw == "false" {
		return name, raw, nil
	}
	if _, err := strconv.ParseFloat(raw, 64); err != nil {
		return "", "", fmt.Errorf("settings: %s: %s is neither text nor a number", name, raw)
	}
	return name, raw, nil
}
