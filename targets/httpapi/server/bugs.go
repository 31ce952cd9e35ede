package server

import (
	"fmt"
	"net/url"
	"strings"
)

// Bug is a mistake Handler can make on purpose, so that a workshop can
// find it with racelab while it runs (racelab serve --bug).
type Bug string

// The teaching bugs.
const (
	// BugDoubleDecode is seed 002's second bug: the batch read decodes
	// each slug once more after the URL's own decoding, so a slug stored
	// percent-encoded (as WordPress stores Arabic ones) is looked up as
	// another string and reads 0, with no error anywhere. The single
	// reads stay right, which is why it went unnoticed.
	BugDoubleDecode Bug = "double-decode"
)

// Bugs lists the teaching bugs by name.
func Bugs() []Bug { return []Bug{BugDoubleDecode} }

// ParseBug reads a --bug value.
func ParseBug(s string) (Bug, error) {
	for _, b := range Bugs() {
		if string(b) == s {
			return b, nil
		}
	}
	names := make([]string, len(Bugs()))
	for i, b := range Bugs() {
		names[i] = string(b)
	}
	return "", fmt.Errorf("bug %q; want one of %s", s, strings.Join(names, ", "))
}

// WithBug makes Handler commit bug. Only for teaching.
func WithBug(bug Bug) Option { return func(h *Handler) { h.bug = bug } }

// batchLookup is the key the batch read looks slug up under: slug itself,
// or, with BugDoubleDecode, slug decoded once more, as JavaScript's
// decodeURIComponent on a value URLSearchParams.get() had decoded already.
// A slug that does not decode again is looked up as it is, as a
// try/catch around that call would.
func (h *Handler) batchLookup(slug string) string {
	if h.bug != BugDoubleDecode {
		return slug
	}
	if again, err := url.QueryUnescape(slug); err == nil {
		return again
	}
	return slug
}
