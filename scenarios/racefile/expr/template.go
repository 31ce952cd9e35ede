package expr

import (
	"crypto/rand"
	"fmt"
	"regexp"
	"strconv"
	"strings"
)

// Template is a string with {{NAME}} holes, parsed once when the file is
// loaded and expanded for every request. The names are those of Vars:
// key, i, n, trial, uuid, env.NAME, and CAPTURE.FIELD… for a setup answer
// named with as: or a value taken with capture:. A setup step repeated
// (repeat:) makes lists, which a burst request reads with an index hole,
// CAPTURE[i].FIELD… (its own, by its index within its kind), and a later
// repeated setup step with CAPTURE[n] (the same repetition's).
type Template struct {
	parts []part
}

// part is literal text or, when Ref is set, a hole.
type part struct {
	lit string
	Hole
}

// Hole is one {{NAME}} of a template.
type Hole struct {
	// Ref is the name split at its dots: ["env", "API_TOKEN"].
	Ref []string
	// Index is a list hole's index after its first name: "i", "n", or a
	// number; "" for none.
	Index string
}

// refName is what a hole may name: words joined by dots, the first one
// perhaps indexed ([i], [n] or [3]).
var refName = regexp.MustCompile(`^([A-Za-z_][A-Za-z0-9_-]*)(?:\[(i|n|[0-9]+)\])?((?:\.[A-Za-z0-9_-]+)*)$`)

// ParseTemplate reads s. The error says what is wrong with the first bad
// hole, and its offset in s.
func ParseTemplate(s string) (*Template, int, error) {
	t := &Template{}
	at := 0
	for {
		open := strings.Index(s[at:], "{{")
		if open < 0 {
			if at < len(s) {
				t.parts = append(t.parts, part{lit: s[at:]})
			}
			return t, 0, nil
		}
		open += at
		if open > at {
			t.parts = append(t.parts, part{lit: s[at:open]})
		}
		end := strings.Index(s[open:], "}}")
		if end < 0 {
			return nil, open, fmt.Errorf("%q opens {{ and never closes it; want {{NAME}}", Clip(s[open:]))
		}
		end += open
		name := strings.TrimSpace(s[open+2 : end])
		m := refName.FindStringSubmatch(name)
		if m == nil {
			return nil, open, fmt.Errorf("{{%s}} is not a name; want key, i, n, trial, uuid, env.NAME or a setup answer's name with its fields", s[open+2:end])
		}
		ref := append([]string{m[1]}, strings.Split(m[3], ".")[1:]...)
		if err := refShape(ref); err != nil || m[2] != "" && isOwn(m[1]) {
			if err == nil {
				err = fmt.Errorf("%s is not a list; want {{%s}}", m[1], m[1])
			}
			return nil, open, fmt.Errorf("{{%s}}: %w", name, err)
		}
		t.parts = append(t.parts, part{Hole: Hole{Ref: ref, Index: m[2]}})
		at = end + 2
	}
}

// refShape checks what a name of Vars' own takes after it: env exactly
// one variable's name, key, i, trial and uuid nothing. Expand reads
// ref[1] of an env hole, so {{env}} must not get that far. A setup
// answer's name takes any fields, checked against its answer then.
func refShape(ref []string) error {
	switch ref[0] {
	case "env":
		if len(ref) != 2 {
			return fmt.Errorf("want env.NAME, one environment variable")
		}
	case "key", "i", "n", "trial", "uuid":
		if len(ref) != 1 {
			return fmt.Errorf("%s has no fields; want {{%s}}", ref[0], ref[0])
		}
	}
	return nil
}

// isOwn says name is one of Vars' own, not a setup answer's.
func isOwn(name string) bool {
	switch name {
	case "env", "key", "i", "n", "trial", "uuid":
		return true
	}
	return false
}

// Clip shortens s to 40 bytes and an ellipsis, to quote it in an error.
func Clip(s string) string {
	if len(s) > 40 {
		return s[:40] + "…"
	}
	return s
}

// Refs lists the names of the template's holes, dotted, in order, as
// they are written ([i] included).
func (t *Template) Refs() []string {
	var out []string
	for _, p := range t.parts {
		if p.Ref != nil {
			out = append(out, p.Name())
		}
	}
	return out
}

// Name is the hole as written, without its braces.
func (p Hole) Name() string {
	if p.Index == "" {
		return strings.Join(p.Ref, ".")
	}
	return strings.Join(append([]string{p.Ref[0] + "[" + p.Index + "]"}, p.Ref[1:]...), ".")
}

// Holes lists the template's holes in order.
func (t *Template) Holes() []Hole {
	var out []Hole
	for _, p := range t.parts {
		if p.Ref != nil {
			out = append(out, p.Hole)
		}
	}
	return out
}

// Text is the template as written.
func (t *Template) Text() string {
	var b strings.Builder
	for _, p := range t.parts {
		if p.Ref == nil {
			b.WriteString(p.lit)
		} else {
			b.WriteString("{{" + strings.Join(p.Ref, ".") + "}}")
		}
	}
	return b.String()
}

// Shape is the template with each hole shown as "…": a request as every
// trial sends it, to count trials that failed alike together.
func (t *Template) Shape() string {
	var b strings.Builder
	for _, p := range t.parts {
		if p.Ref != nil {
			b.WriteString("…")
			continue
		}
		b.WriteString(p.lit)
	}
	return b.String()
}

// Literal reports whether the template has no holes.
func (t *Template) Literal() bool { return len(t.Refs()) == 0 }

// Vars are the values a template's holes take for one request.
type Vars struct {
	// Key is the trial's fresh key; Trial numbers the trial from 0; I is
	// the request's index in the burst, -1 outside it, and Own its index
	// within its kind, which [i] reads; N is a repeated setup step's
	// repetition, -1 outside one.
	Key   string
	Trial int
	I     int
	Own   int
	N     int
	// Env holds the environment variables the file declared.
	Env map[string]string
	// Captures are setup answers' JSON bodies, by their as: names, and
	// the values capture: took, by their names; a repeated step's are
	// lists, one element per repetition.
	Captures map[string]any
}

// Expand fills the holes from v; escape, when set, encodes each value for
// where it goes (a path segment). A hole whose value is missing is an
// error naming it.
func (t *Template) Expand(v *Vars, escape func(string) string) (string, error) {
	var b strings.Builder
	for _, p := range t.parts {
		if p.Ref == nil {
			b.WriteString(p.lit)
			continue
		}
		s, err := v.Value(p.Hole)
		if err != nil {
			return "", fmt.Errorf("{{%s}}: %w", p.Name(), err)
		}
		if escape != nil {
			s = escape(s)
		}
		b.WriteString(s)
	}
	return b.String(), nil
}

// Value is one hole's value for v.
func (v *Vars) Value(h Hole) (string, error) {
	ref, index := h.Ref, h.Index
	switch ref[0] {
	case "key":
		return v.Key, nil
	case "trial":
		return strconv.Itoa(v.Trial), nil
	case "i":
		if v.I < 0 {
			return "", fmt.Errorf("only a burst request has an index")
		}
		return strconv.Itoa(v.I), nil
	case "n":
		if v.N < 0 {
			return "", fmt.Errorf("only a repeated setup step has a repetition")
		}
		return strconv.Itoa(v.N), nil
	case "uuid":
		return newUUID(), nil
	case "env":
		s, ok := v.Env[ref[1]]
		if !ok {
			return "", fmt.Errorf("not set")
		}
		return s, nil
	}
	c, ok := v.Captures[ref[0]]
	if !ok {
		return "", fmt.Errorf("no setup answer named %s yet", ref[0])
	}
	if index != "" {
		var err error
		if c, err = v.element(ref[0], c, index); err != nil {
			return "", err
		}
	}
	for _, field := range ref[1:] {
		switch x := c.(type) {
		case map[string]any:
			if c, ok = x[field]; !ok {
				return "", fmt.Errorf("the answer has no field %q", field)
			}
		case []any:
			i, err := strconv.Atoi(field)
			if err != nil || i < 0 || i >= len(x) {
				return "", fmt.Errorf("the answer's list has no element %q", field)
			}
			c = x[i]
		default:
			return "", fmt.Errorf("the answer has no field %q", field)
		}
	}
	switch x := c.(type) {
	case string:
		return x, nil
	case nil, map[string]any, []any:
		return "", fmt.Errorf("is %s, not a string or a number", JSONKind(x))
	default:
		return fmt.Sprint(x), nil
	}
}

// element is element index of the list c, named name: [i] the burst
// request's own, [n] the repetition's, [3] the fourth.
func (v *Vars) element(name string, c any, index string) (any, error) {
	list, ok := c.([]any)
	if !ok {
		return nil, fmt.Errorf("%s is %s, not a repeated step's list", name, JSONKind(c))
	}
	var at int
	switch index {
	case "i":
		if at = v.Own; v.I < 0 {
			return nil, fmt.Errorf("only a burst request has an index")
		}
	case "n":
		if at = v.N; v.N < 0 {
			return nil, fmt.Errorf("only a repeated setup step has a repetition")
		}
	default:
		at, _ = strconv.Atoi(index)
	}
	if at >= len(list) {
		return nil, fmt.Errorf("%s has %d values, so no [%d]; repeat its step as many times as the burst has requests (repeat: requests)", name, len(list), at)
	}
	return list[at], nil
}

// newUUID is a random (version 4) UUID.
func newUUID() string {
	var b [16]byte
	_, _ = rand.Read(b[:])
	b[6] = b[6]&0x0f | 0x40
	b[8] = b[8]&0x3f | 0x80
	return fmt.Sprintf("%x-%x-%x-%x-%x", b[0:4], b[4:6], b[6:8], b[8:10], b[10:16])
}

// JSONKind names the kind of a decoded JSON value, "an object", for an
// error that says what a value is instead of what was wanted.
func JSONKind(v any) string {
	switch v.(type) {
	case nil:
		return "null"
	case map[string]any:
		return "an object"
	case []any:
		return "a list"
	case string:
		return "a string"
	case bool:
		return "a boolean"
	}
	return "a number"
}
