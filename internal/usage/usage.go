// Package usage is the words of a value a plan cannot take: the error
// every layer returns about its own fields, which the command line says
// as the flags that set them.
package usage

import (
	"cmp"
	"errors"
	"fmt"
	"regexp"
	"strings"
)

// Err is wrapped by every error about a plan that cannot be run as
// written (a bad count, a target that cannot play the story).
var Err = errors.New("usage")

// A FieldError is a value a plan cannot take, said in words that name the
// plan's fields as {Field}: "{Requests} 0 is out of range; want 1 to
// 10000". Error writes each field's own name there; a program that sets
// the fields under other names (cmd: its flags) writes those with Say, so
// that the domain checks a plan once and never names a flag. It is a usage
// error: errors.Is(err, Err) holds.
type FieldError struct {
	// Field is the field at fault: "Requests", "MaxRate", or a story's
	// knob by its name ("stock").
	Field  string
	format string
	args   []any
}

// Fieldf makes a FieldError about field; format names fields as {Name},
// and "{}" is field itself. Only the format's own braces name fields: a
// value given in args ("/posts/{slug}") is written as it is.
func Fieldf(field, format string, args ...any) *FieldError {
	return &FieldError{Field: field, format: format, args: args}
}

var fieldRef = regexp.MustCompile(`\{([A-Za-z][\w.-]*)?\}`)

// Say writes the error with each field named by name(field).
func (e *FieldError) Say(name func(field string) string) string {
	format := fieldRef.ReplaceAllStringFunc(e.format, func(ref string) string {
		f := ref[1 : len(ref)-1]
		if f == "" {
			f = e.Field
		}
		return strings.ReplaceAll(name(f), "%", "%%")
	})
	return fmt.Sprintf(format, e.args...)
}

func (e *FieldError) Error() string { return e.Say(func(f string) string { return f }) }

// Is makes every FieldError a usage error.
func (e *FieldError) Is(target error) bool { return target == Err }

// Wants says, for each field of a plan that a value can be wrong for,
// what a right one is ("1 to 10000"): the words of its checks, in one
// place.
type Wants map[string]string

// Invalid is the error of a value field cannot take, in the words of w.
func (w Wants) Invalid(field string, value any) *FieldError {
	return Fieldf(field, "{} %v: want "+strings.ReplaceAll(w[field], "%", "%%"), value)
}

// Within adds w's error for field to errs unless lo <= v <= hi (a NaN is
// outside every range). A plan's Validate checks its numbers with it, one
// line a field, in the order it names them.
func Within[T cmp.Ordered](errs *[]error, w Wants, field string, v, lo, hi T) {
	if !(v >= lo && v <= hi) {
		*errs = append(*errs, w.Invalid(field, v))
	}
}

// NotBelow is Within with no upper bound: mostly a count or a duration
// that may be 0, never negative.
func NotBelow[T cmp.Ordered](errs *[]error, w Wants, field string, v, lo T) {
	if !(v >= lo) {
		*errs = append(*errs, w.Invalid(field, v))
	}
}

// fieldToken is a field named in words that are not an error: a hint in a
// report ("raise {Trials}").
var fieldToken = regexp.MustCompile(`\{([A-Z][A-Za-z]*)\}`)

// Name writes text with each {Field} in it named by name(field), or by the
// field itself when name is nil. It is Say for words that are not an
// error: a report advising a setting names the field, and the command
// line that prints the report says it as its flag.
func Name(text string, name func(field string) string) string {
	if name == nil {
		name = func(f string) string { return f }
	}
	return fieldToken.ReplaceAllStringFunc(text, func(ref string) string { return name(ref[1 : len(ref)-1]) })
}
