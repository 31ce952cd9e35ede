package httpapi

import (
	"bytes"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/racelab/racelab/targets/story"
)

// The quick reading of an answer. judge decodes every answer's body into a
// map with encoding/json, which under load cost more than reading the
// answer off the socket (issue 24). judgeQuick reads the few fields a
// route names straight off the bytes and accepts the answer only when
// every check passes exactly as judge's would; anything else (a check that
// fails, or a body it leaves to encoding/json) goes to judge, so every
// error and every edge is still judge's own.

// maxQuickDepth bounds the nesting judgeQuick walks; deeper bodies go to
// encoding/json.
const maxQuickDepth = 64

// maxQuickPaths is how many fields a route can name: OK, Key, Field and
// Window.
const maxQuickPaths = 4

// jsonValue is a value found at a path: its kind (one of `"` string, `0`
// number, `t` true, `f` false, `n` null, `{` object, `[` array) and its
// text as written, a string's without its quotes.
type jsonValue struct {
	found bool
	kind  byte
	raw   []byte
}

// judgeQuick is judge for the answers that are right, read without
// encoding/json: ok is false when judge must read the answer instead.
func (c *Client) judgeQuick(call Call, key string, a answer) (reply story.Reply, ok bool) {
	r := c.routes[call]
	switch {
	case call == CallPlan:
		return reply, false
	case containsCode(r.Yes, a.status):
		reply.OK = true
	case !containsCode(r.No, a.status):
		return reply, false
	}
	reply.Arrival = arrivalOf(a.header)
	if call == CallCheckout && reply.OK {
		reply.Value = 1
	}
	if r.Field == "" && r.Key == "" && r.OK == "" {
		return reply, true
	}
	paths := [maxQuickPaths]string{r.OK, r.Key, r.Field, r.Window}
	var got [maxQuickPaths]jsonValue
	if !scanObject(a.body, &paths, &got) {
		return reply, false
	}
	okV, keyV, fieldV, windowV := got[0], got[1], got[2], got[3]
	if r.OK != "" {
		isBool := okV.kind == 't' || okV.kind == 'f'
		if okV.found && (!isBool || (okV.kind == 't') != reply.OK) || !okV.found && reply.OK {
			return reply, false
		}
	}
	if r.Key != "" && reply.OK && (!keyV.found || keyV.kind != '"' || string(keyV.raw) != key) {
		return reply, false
	}
	if r.Field == "" {
		return reply, true
	}
	n, ok := wholeNumber(fieldV)
	if !ok || n < 0 {
		return reply, false
	}
	reply.Value = n
	if r.Window != "" {
		w, ok := wholeNumber(windowV)
		if !ok {
			return reply, false
		}
		reply.Window = w
	}
	return reply, true
}

// wholeNumber is v as json.Number's Int64 reads it.
func wholeNumber(v jsonValue) (int64, bool) {
	if !v.found || v.kind != '0' {
		return 0, false
	}
	n, err := strconv.ParseInt(string(v.raw), 10, 64)
	return n, err == nil
}

// scanObject reads body as exactly one JSON object, as decodeObject does,
// and finds the value at each non-empty dotted path of paths, the last
// one when a name repeats, as a decoded map keeps it. It reports false
// for a body that is not one valid JSON object, and for one it leaves to
// encoding/json: an escape in a string, text that is not UTF-8, nesting
// deeper than maxQuickDepth.
func scanObject(body []byte, paths *[maxQuickPaths]string, got *[maxQuickPaths]jsonValue) bool {
	if bytes.IndexByte(body, '\\') >= 0 || !utf8.Valid(body) {
		return false
	}
	s := jsonScanner{b: body}
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

// jsonScanner walks a JSON text, checking it as it goes.
type jsonScanner struct {
	b []byte
	i int
}

func (s *jsonScanner) space() {
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
func (s *jsonScanner) object(depth int, rest [maxQuickPaths]string, active uint8, got *[maxQuickPaths]jsonValue) bool {
	if depth >= maxQuickDepth {
		return false
	}
	s.i++ // '{'
	s.space()
	if s.i < len(s.b) && s.b[s.i] == '}' {
		s.i++
		return true
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
		var below [maxQuickPaths]string
		for p := range maxQuickPaths {
			if active&(1<<p) == 0 {
				continue
			}
			seg, more, nested := strings.Cut(rest[p], ".")
			if string(name) != seg {
				continue
			}
			got[p] = jsonValue{} // a repeated name replaces what came before
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
			kind = '{'
			if !s.object(depth+1, below, deeper, got) {
				return false
			}
		} else if kind, ok = s.value(depth + 1); !ok {
			return false
		}
		if here != 0 {
			v := jsonValue{found: true, kind: kind, raw: s.b[start:s.i]}
			if kind == '"' {
				v.raw = v.raw[1 : len(v.raw)-1]
			}
			for p := range maxQuickPaths {
				if here&(1<<p) != 0 {
					got[p] = v
				}
			}
		}
		s.space()
		if s.i >= len(s.b) {
			return false
		}
		switch s.b[s.i] {
		case ',':
			s.i++
			s.space()
		case '}':
			s.i++
			return true
		default:
			return false
		}
	}
}

// value reads any value at s.i and says its kind.
func (s *jsonScanner) value(depth int) (kind byte, ok bool) {
	if s.i >= len(s.b) {
		return 0, false
	}
	switch c := s.b[s.i]; {
	case c == '{':
		return '{', s.object(depth, [maxQuickPaths]string{}, 0, nil)
	case c == '[':
		return '[', s.array(depth)
	case c == '"':
		_, ok := s.str()
		return '"', ok
	case c == '-' || c >= '0' && c <= '9':
		return '0', s.number()
	case c == 't':
		return 't', s.literal("true")
	case c == 'f':
		return 'f', s.literal("false")
	case c == 'n':
		return 'n', s.literal("null")
	}
	return 0, false
}

func (s *jsonScanner) array(depth int) bool {
	if depth >= maxQuickDepth {
		return false
	}
	s.i++ // '['
	s.space()
	if s.i < len(s.b) && s.b[s.i] == ']' {
		s.i++
		return true
	}
	for {
		if _, ok := s.value(depth + 1); !ok {
			return false
		}
		s.space()
		if s.i >= len(s.b) {
			return false
		}
		switch s.b[s.i] {
		case ',':
			s.i++
			s.space()
		case ']':
			s.i++
			return true
		default:
			return false
		}
	}
}

// str reads a string at s.i (its opening quote) and returns its content.
// scanObject has refused escapes already: the content is the string.
func (s *jsonScanner) str() ([]byte, bool) {
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
func (s *jsonScanner) number() bool {
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
func (s *jsonScanner) digits() bool {
	start := s.i
	for s.i < len(s.b) && s.b[s.i] >= '0' && s.b[s.i] <= '9' {
		s.i++
	}
	return s.i > start
}

func (s *jsonScanner) literal(word string) bool {
	if !bytes.HasPrefix(s.b[s.i:], []byte(word)) {
		return false
	}
	s.i += len(word)
	return true
}
