package report

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"slices"
	"strings"

	"github.com/racelab/racelab/internal/usage"
	"github.com/racelab/racelab/scenarios/results"
)

// Format is an output format.
type Format string

// The output formats.
const (
	Table    Format = "table"    // an ASCII table with the breakages in words under it
	JSON     Format = "json"     // the whole Result, indented
	Markdown Format = "markdown" // a heading, a markdown table and a bullet list
	JUnit    Format = "junit"    // JUnit XML: one test case per story × target
	HTML     Format = "html"     // one self-contained page: table, trial distribution, timeline
	CSV      Format = "csv"      // a load's seconds and requests, one table to plot (loads only)
)

// formats are a run's formats; loadFormats a load's, which has csv too.
var (
	formats     = []Format{Table, JSON, Markdown, JUnit, HTML}
	loadFormats = append(slices.Clip(formats), CSV)
)

// Formats returns the names of every format a run is written in, the
// default first.
func Formats() []string { return namesOf(formats) }

// LoadFormats returns the names of every format a load is written in,
// the default first: a run's, and csv.
func LoadFormats() []string { return namesOf(loadFormats) }

func namesOf(fs []Format) []string {
	names := make([]string, len(fs))
	for i, f := range fs {
		names[i] = string(f)
	}
	return names
}

// ParseFormat reads a format name, ignoring case and surrounding spaces.
// The error is an *UnknownFormatError.
func ParseFormat(s string) (Format, error) {
	name := strings.ToLower(strings.TrimSpace(s))
	for _, f := range loadFormats {
		if name == string(f) {
			return f, nil
		}
	}
	return "", &UnknownFormatError{Name: s}
}

// UnknownFormatError says a format name racelab does not know. It wraps
// results.ErrUsage, so that a command maps it to a usage error.
type UnknownFormatError struct {
	Name string // what the user typed
}

func (e *UnknownFormatError) Error() string {
	names := Formats()
	return fmt.Sprintf("unknown output format %q; want %s or %s",
		e.Name, strings.Join(names[:len(names)-1], ", "), names[len(names)-1])
}

// Unwrap lets errors.Is(err, results.ErrUsage) recognise a bad format.
func (e *UnknownFormatError) Unwrap() error { return results.ErrUsage }

// Options tune rendering.
type Options struct {
	// NoColor asks for output without colour escapes. Every format is
	// uncoloured today; the option is here so that a coloured table can
	// arrive without changing the signature of Render.
	NoColor bool
	// Width is the most display columns the table format may take: it
	// leaves out or folds columns to fit, and says under the table what
	// they held. 0 draws every column in full (a wide table, or a file).
	Width int
	// Say names a setting the report advises by its field ("Trials",
	// "KeepAll") as the reader sets it: cmd passes its flag for the field.
	// Nil says the field's own name. This package names no flag: a report
	// rendered from Go has none.
	Say func(field string) string
	// Saved says the result is also written as JSON, or was read from it:
	// only then is it worth saying how many trials keep their requests
	// in it.
	Saved bool
}

// say writes text with each {Field} in it as o.Say names it.
func (o Options) say(text string) string { return usage.Name(text, o.Say) }

// Render writes r to w in format f. The output is built whole before the
// single write to w, so a failing writer never leaves half a table behind
// and its error is the one returned.
func Render(w io.Writer, r *results.Result, f Format, o Options) error {
	if r == nil {
		return errors.New("render: no result")
	}
	return RenderAll(w, []*results.Result{r}, f, o)
}

// RenderAll writes several results as one report, in order: `racelab
// report` merges saved results with results.Merge and renders what is
// left of different scenarios this way. The table and markdown write one
// report after the other, a blank line between; JSON writes one document
// after the other, a stream that ReadJSON reads back; JUnit writes one
// <testsuites> with a suite per result; HTML one page with a section per
// result. Like Render, it writes once, or not at all.
func RenderAll(w io.Writer, rs []*results.Result, f Format, o Options) error {
	if len(rs) == 0 || slices.Contains(rs, nil) {
		return errors.New("render: no result")
	}
	return renderWith(w, f, func(r format, b *bytes.Buffer) error { return r.runs(b, rs, o) })
}

// RenderLoad writes load results in format f, like RenderAll: one write,
// or none.
func RenderLoad(w io.Writer, rs []*results.LoadResult, f Format, o Options) error {
	if len(rs) == 0 || slices.Contains(rs, nil) {
		return errors.New("render: no load result")
	}
	return renderWith(w, f, func(r format, b *bytes.Buffer) error { return r.loads(b, rs, o) })
}

// renderWith builds the report in format f whole, then writes it once.
func renderWith(w io.Writer, f Format, render func(format, *bytes.Buffer) error) error {
	r, ok := renderers[f]
	if !ok {
		return &UnknownFormatError{Name: string(f)}
	}
	var b bytes.Buffer
	if err := render(r, &b); err != nil {
		return err
	}
	_, err := w.Write(b.Bytes())
	return err
}

// A format is how one output format writes runs, and loads.
type format struct {
	runs  func(*bytes.Buffer, []*results.Result, Options) error
	loads func(*bytes.Buffer, []*results.LoadResult, Options) error
}

// renderers are the formats, the one table a new format joins.
var renderers = map[Format]format{
	Table: {
		oneAfterAnother(func(b *bytes.Buffer, r *results.Result, o Options) error { return renderTable(b, r, o) }, "\n"),
		oneAfterAnother(func(b *bytes.Buffer, r *results.LoadResult, o Options) error {
			return saidLoad(b, o, func() error { return renderLoadTable(b, r, o.Width) })
		}, "\n"),
	},
	Markdown: {
		oneAfterAnother(func(b *bytes.Buffer, r *results.Result, o Options) error { return renderMarkdown(b, r, o) }, "\n"),
		oneAfterAnother(func(b *bytes.Buffer, r *results.LoadResult, o Options) error {
			return saidLoad(b, o, func() error { return renderLoadMarkdown(b, r) })
		}, "\n"),
	},
	JSON: {
		oneAfterAnother(func(b *bytes.Buffer, r *results.Result, _ Options) error { return renderJSON(b, r) }, ""),
		oneAfterAnother(func(b *bytes.Buffer, r *results.LoadResult, _ Options) error { return renderLoadJSON(b, r) }, ""),
	},
	JUnit: {
		func(b *bytes.Buffer, rs []*results.Result, o Options) error { return renderJUnit(b, rs, o) },
		func(b *bytes.Buffer, rs []*results.LoadResult, o Options) error {
			return saidLoad(b, o, func() error { return renderLoadJUnit(b, rs) })
		},
	},
	HTML: {
		func(b *bytes.Buffer, rs []*results.Result, o Options) error { return renderHTML(b, rs, o) },
		func(b *bytes.Buffer, rs []*results.LoadResult, o Options) error {
			return saidLoad(b, o, func() error { return renderLoadHTML(b, rs) })
		},
	},
	CSV: {
		func(*bytes.Buffer, []*results.Result, Options) error { return errNoRunCSV{} },
		func(b *bytes.Buffer, rs []*results.LoadResult, _ Options) error { return renderLoadCSV(b, rs) },
	},
}

// saidLoad runs render, which writes a load's words into b, and then says
// the fields its advice names ({Keys}, {Wide}) as o.Say names them. The
// load renderers write the tokens and are not told o, so the words are
// said here, on what render wrote; a load's table holds no text of the
// user's that could read as a token (names and figures only). The tokens
// are as long as the flags cmd says them as, so a fitted table still fits.
func saidLoad(b *bytes.Buffer, o Options, render func() error) error {
	start := b.Len()
	if err := render(); err != nil {
		return err
	}
	said := o.say(b.String()[start:])
	b.Truncate(start)
	b.WriteString(said)
	return nil
}

// oneAfterAnother renders each result in turn, sep between two.
func oneAfterAnother[R any](render func(*bytes.Buffer, R, Options) error, sep string) func(*bytes.Buffer, []R, Options) error {
	return func(b *bytes.Buffer, rs []R, o Options) error {
		for i, r := range rs {
			if i > 0 {
				b.WriteString(sep)
			}
			if err := render(b, r, o); err != nil {
				return err
			}
		}
		return nil
	}
}
