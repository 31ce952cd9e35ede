package targets

import (
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/racelab/racelab/targets/faults"
)

// param binds one spec parameter to a field of a store's config.
type param struct {
	name string
	want string // what a valid value looks like, for error messages
	set  func(string) error
}

// durationParam binds a duration of zero or more. time.ParseDuration
// refuses NaN, Inf and a bare number other than 0, so "5" must be "5ms" or
// "5s": a unit is never guessed.
func durationParam(name string, p *time.Duration) param {
	return param{name, "a duration such as 5ms or 30s", func(s string) error {
		d, err := time.ParseDuration(s)
		switch {
		case err != nil:
			return fmt.Errorf("not a duration")
		case d < 0:
			return fmt.Errorf("a negative duration")
		}
		*p = d
		return nil
	}}
}

func intParam(name string, p *int) param {
	return param{name, "a whole number of at least 1", func(s string) error {
		n, err := strconv.Atoi(s)
		if err != nil || n < 1 {
			return fmt.Errorf("not a whole number of at least 1")
		}
		*p = n
		return nil
	}}
}

func floatParam(name string, p *float64) param {
	return param{name, "a number from 0 to 1", func(s string) error {
		f, err := strconv.ParseFloat(s, 64)
		if err != nil || !(f >= 0 && f <= 1) { // written so that NaN is refused too
			return fmt.Errorf("not a number from 0 to 1")
		}
		*p = f
		return nil
	}}
}

func boolParam(name string, p *bool) param {
	return param{name, "true or false", func(s string) error {
		b, err := strconv.ParseBool(s)
		if err != nil {
			return fmt.Errorf("not true or false")
		}
		*p = b
		return nil
	}}
}

// windowParam binds an outage window, FROM-TO after the start of a trial.
func windowParam(name string, p *faults.Window) param {
	return param{name, "FROM-TO, two durations such as 2m-5m", func(s string) error {
		w, err := faults.ParseWindow(s)
		if err != nil {
			return fmt.Errorf("not FROM-TO")
		}
		*p = w
		return nil
	}}
}

// stringParam binds a free-form value; Parse has already refused an empty
// one.
func stringParam(name string, p *string) param {
	return param{name, "a string", func(s string) error { *p = s; return nil }}
}

// bind applies spec's parameters to ps, and says clearly which parameter is
// unknown or badly written and what would be right.
func bind(spec Spec, ps ...param) error {
	names := make([]string, len(ps))
	for i, p := range ps {
		names[i] = p.name
	}
	keys := make([]string, 0, len(spec.Params))
	for k := range spec.Params {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	for _, k := range keys {
		i := slices.IndexFunc(ps, func(p param) bool { return p.name == k })
		if i < 0 {
			valid := "none"
			if len(names) > 0 {
				valid = strings.Join(names, ", ")
			}
			hint := ""
			if c := Closest(k, names); c != "" {
				hint = fmt.Sprintf(" (did you mean %q?)", c)
			}
			return badSpec("target %s has no parameter %q%s; valid: %s", spec.Name(), k, hint, valid)
		}
		v := spec.Params.Get(k)
		if err := ps[i].set(v); err != nil {
			return badSpec("target %s: parameter %s=%q is %v; want %s", spec.Name(), k, v, err, ps[i].want)
		}
	}
	return nil
}
