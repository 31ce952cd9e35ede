package targets

import (
	"errors"
	"fmt"
	"strings"
)

// ErrBadSpec is matched (errors.Is) by every error about a malformed target
// spec or an unknown or malformed store parameter: a usage error.
var ErrBadSpec = errors.New("bad target")

// specError is a usage error about a target spec. Its text stands alone, so
// the message reads as one plain sentence rather than "bad target: …".
type specError struct{ msg string }

func (e *specError) Error() string        { return e.msg }
func (e *specError) Is(target error) bool { return target == ErrBadSpec }

func badSpec(format string, args ...any) error {
	return &specError{fmt.Sprintf(format, args...)}
}

// UnknownNameError says a name racelab does not know, with the closest known
// one and the full list, so that the user can fix it in one go. Scenarios use
// it too, so both kinds of name are reported alike.
type UnknownNameError struct {
	Kind  string   // "target", "scenario"
	Name  string   // what the user typed
	Known []string // every valid name
}

func (e *UnknownNameError) Error() string {
	var b strings.Builder
	fmt.Fprintf(&b, "unknown %s %q", e.Kind, e.Name)
	if s := Closest(e.Name, e.Known); s != "" {
		fmt.Fprintf(&b, "; did you mean %q?", s)
	}
	fmt.Fprintf(&b, " (valid: %s)", strings.Join(e.Known, ", "))
	if e.Kind == "target" && strings.HasPrefix(e.Name, "shop:") {
		// The payment and outage replays label their rows with the shop's
		// designs, which read like targets but are not stores to pick.
		b.WriteString("; shop:… rows are the shop designs that five-checkouts' payment and outage replays play side by side, not targets")
	}
	return b.String()
}

// Closest returns the known name nearest to name by edit distance, or ""
// when none is near enough to be a plausible typo.
func Closest(name string, known []string) string {
	best, bestD := "", len(name)/2+2
	for _, k := range known {
		if d := distance(strings.ToLower(name), strings.ToLower(k)); d < bestD {
			best, bestD = k, d
		}
	}
	return best
}

// distance is the Levenshtein distance between a and b, by runes.
func distance(a, b string) int {
	ra, rb := []rune(a), []rune(b)
	prev := make([]int, len(rb)+1)
	cur := make([]int, len(rb)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(ra); i++ {
		cur[0] = i
		for j := 1; j <= len(rb); j++ {
			cost := 1
			if ra[i-1] == rb[j-1] {
				cost = 0
			}
			cur[j] = min(prev[j]+1, cur[j-1]+1, prev[j-1]+cost)
		}
		prev, cur = cur, prev
	}
	return prev[len(rb)]
}
