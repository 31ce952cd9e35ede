package report

import (
	"errors"
	"fmt"
	"io"
	"strings"

	"github.com/racelab/racelab/scenarios"
)

// Format is an output format.
type Format string

// The output formats.
const (
	Table    Format = "table"    // an ASCII table with the breakages in words under it
	JSON     Format = "json"     // the whole Result, indented
	Markdown Format = "markdown" // a heading, a markdown table and a bullet list
)

var formats = []Format{Table, JSON, Markdown}

// Formats returns the names of every format, the default first.
func Formats() []string {
	names := make([]string, len(formats))
	for i, f := range formats {
		names[i] = string(f)
	}
	return names
}

// ParseFormat reads a format name, ignoring case and surrounding spaces.
// The error is an *UnknownFormatError.
func ParseFormat(s string) (Format, error) {
	name := strings.ToLower(strings.TrimSpace(s))
	for _, f := range formats {
		if name == string(f) {
			return f, nil
		}
	}
	return "", &UnknownFormatError{Name: s}
}

// UnknownFormatError says a format name racelab does not know. It wraps
// scenarios.ErrUsage, so that a command maps it to a usage error.
type UnknownFormatError struct {
	Name string // what the user typed
}

func (e *UnknownFormatError) Error() string {
	names := Formats()
	return fmt.Sprintf("unknown output format %q; want %s or %s",
		e.Name, strings.Join(names[:len(names)-1], ", "), names[len(names)-1])
}

// Unwrap lets errors.Is(err, scenarios.ErrUsage) recognise a bad format.
func (e *UnknownFormatError) Unwrap() error { return scenarios.ErrUsage }

// Options tune rendering.
type Options struct {
	// NoColor asks for output without colour escapes. Every format is
	// uncoloured today; the option is here so that a coloured table can
	// arrive without changing the signature of Render.
	NoColor bool
}

// Render writes r to w in format f. The output is built whole before the
// single write to w, so a failing writer never leaves half a table behind
// and its error is the one returned.
func Render(w io.Writer, r *scenarios.Result, f Format, o Options) error {
	if r == nil {
		return errors.New("render: no result")
	}
	switch f {
	case Table:
		return renderTable(w, r, o)
	case JSON:
		return renderJSON(w, r)
	case Markdown:
		return renderMarkdown(w, r, o)
	default:
		return &UnknownFormatError{Name: string(f)}
	}
}
