package httpapi

import (
	"bytes"
	"strings"
	"unicode/utf8"
)

// MaxPaths is how many fields one Pick finds.
const MaxPaths = 4

// MaxDepth bounds the nesting Pick walks; deeper texts are declined.
const MaxDepth = 64

// The kinds of Value.
const (
	String = '"'
	Number = '0'
	True   = 't'
	False  = 'f'
	Null   = 'n'
	Object = '{'
	Array  = '['
)

// Value is a value found at a path: its kind and its text as written, a
// string's without its quotes (and, Pick declining escapes, the string
// itself).
type Value struct {
	Found bool
	Kind  byte
	Raw   []byte
}

// Pick reads body as exactly one JSON object (whitespace around it, and
// nothing else) and finds the value at each non-empty dotted path of paths, the last
// one when a name repeats, as a decoded map keeps it. It reports false
// for a body that is not one valid JSON object, and for one it leaves to
// encoding/json: an escape in a string, text that is not UTF-8, nesting
// deeper than MaxDepth.
func Pick(body []byte, paths *[MaxPaths]string, got *[MaxPaths]Value) bool {
	if bytes.IndexByte(body, '\\') >= 0 || !utf8.Valid(body) {
		return false
	}
	s := scanner{b: body}
	s.space()
	if s.i >= len(s.b) || s.b[s.i] != '{' {
		return false
	}
	var active uint8
	for i, p := range paths {
		if p != "" {
			active |= 1 << i
		}
	}
	if !s.object(0, *paths, active, got) {
		return false
	}
	s.space()
	return s.i == len(s.b)
}

// scanner walks a JSON text, checking it as it goes.
type scanner struct {
	b []byte
	i int
}

func (s *scanner) space() {
	for s.i < len(s.b) {
		switch s.b[s.i] {
		case ' ', '\t', '\n', '\r':
			s.i++
		default:
			return
		}
	}
}

// object reads an object at s.i. rest holds, for each path still being
// walked (a bit of active), the part of it below this object.
func (s *scanner) object(depth int, rest [MaxPaths]string, active uint8, got *[MaxPaths]Value) bool {
	if empty, ok := s.enter(depth, '}'); empty || !ok {
		return ok
	}
	for {
		if s.i >= len(s.b) || s.b[s.i] != '"' {
			return false
		}
		name, ok := s.str()
		if !ok {
			return false
		}
		s.space()
		if s.i >= len(s.b) || s.b[s.i] != ':' {
			return false
		}
		s.i++
		s.space()
		// The paths this name leads down: ending here (the value is
		// theirs) or going deeper (the value must be an object).
		var here, deeper uint8
		var below [MaxPaths]string
		for p := range MaxPaths {
			if active&(1<<p) == 0 {
				continue
			}
			seg, more, nested := strings.Cut(rest[p], ".")
			if string(name) != seg {
				continue
			}
			got[p] = Value{} // a repeated name replaces what came before
			if nested {
				deeper |= 1 << p
				below[p] = more
			} else {
				here |= 1 << p
			}
		}
		start := s.i
		var kind byte
		if deeper != 0 && s.i < len(s.b) && s.b[s.i] == '{' {
			kind = Object
			if !s.object(depth+1, below, deeper, got) {
				return false
			}
		} else if kind, ok = s.value(depth + 1); !ok {
			return false
		}
		if here != 0 {
			v := Value{Found: true, Kind: kind, Raw: s.b[start:s.i]}
			if kind == String {
				v.Raw = v.Raw[1 : len(v.Raw)-1]
			}
			for p := range MaxPaths {
				if here&(1<<p) != 0 {
					got[p] = v
				}
			}
		}
		if more, ok := s.after('}'); !more {
			return ok
		}
	}
}

// value reads any value at s.i and says its kind.
func (s *scanner) value(depth int) (kind byte, ok bool) {
	if s.i >= len(s.b) {
		return 0, false
	}
	switch c := s.b[s.i]; {
	case c == '{':
		return Object, s.object(depth, [MaxPaths]string{}, 0, nil)
	case c == '[':
		return Array, s.array(depth)
	case c == '"':
		_, ok := s.str()
		return String, ok
	case c == '-' || c >= '0' && c <= '9':
		return Number, s.number()
	case c == 't':
		return True, s.literal("true")
	case c == 'f':
		return False, s.literal("false")
	case c == 'n':
		return Null, s.literal("null")
	}
	return 0, false
}

func (s *scanner) array(depth int) bool {
	if empty, ok := s.enter(depth, ']'); empty || !ok {
		return ok
	}
	for {
		if _, ok := s.value(depth + 1); !ok {
			return false
		}
		if more, ok := s.after(']'); !more {
			return ok
		}
	}
}

// enter steps into the object or array at s.i, which end closes: empty
// says it closed at once (and is read).
func (s *scanner) enter(depth int, end byte) (empty, ok bool) {
	if depth >= MaxDepth {
		return false, false
	}
	s.i++
	s.space()
	if s.i < len(s.b) && s.b[s.i] == end {
		s.i++
		return true, true
	}
	return false, true
}

// after reads what follows a member: a comma and the space after it
// (more to come), or end.
func (s *scanner) after(end byte) (more, ok bool) {
	s.space()
	if s.i >= len(s.b) {
		return false, false
	}
	switch s.b[s.i] {
	case ',':
		s.i++
		s.space()
		return true, true
	case end:
		s.i++
		return false, true
	}
	return false, false
}

// str reads a string at s.i (its opening quote) and returns its content.
// Pick has refused escapes already: the content is the string.
func (s *scanner) str() ([]byte, bool) {
	start := s.i + 1
	for j := start; j < len(s.b); j++ {
		switch c := s.b[j]; {
		case c == '"':
			s.i = j + 1
			return s.b[start:j], true
		case c < 0x20:
			return nil, false
		}
	}
	return nil, false
}

// number reads a number by JSON's grammar:
// -?(0|[1-9][0-9]*)(\.[0-9]+)?([eE][+-]?[0-9]+)?
func (s *scanner) number() bool {
	b := s.b
	if s.i < len(b) && b[s.i] == '-' {
		s.i++
	}
	switch {
	case s.i < len(b) && b[s.i] == '0':
		s.i++
	case s.i < len(b) && b[s.i] >= '1' && b[s.i] <= '9':
		s.digits()
	default:
		return false
	}
	if s.i < len(b) && b[s.i] == '.' {
		s.i++
		if !s.digits() {
			return false
		}
	}
	if s.i < len(b) && (b[s.i] == 'e' || b[s.i] == 'E') {
		s.i++
		if s.i < len(b) && (b[s.i] == '+' || b[s.i] == '-') {
			s.i++
		}
		if !s.digits() {
			return false
		}
	}
	return true
}

// digits reads one or more decimal digits.
func (s *scanner) digits() bool {
	start := s.i
	for s.i < len(s.b) && s.b[s.i] >= '0' && s.b[s.i] <= '9' {
		s.i++
	}
	return s.i > start
}

func (s *scanner) literal(word string) bool {
	if !bytes.HasPrefix(s.b[s.i:], []byte(word)) {
		return false
	}
	s.i += len(word)
	return true
}
