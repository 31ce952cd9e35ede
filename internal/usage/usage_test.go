package usage

import (
	"errors"
	"fmt"
	"math"
	"strings"
	"testing"
	"time"
)

// A FieldError names fields in the plan's words by default and in a
// caller's with Say; a value that happens to hold braces is left alone.
func TestFieldErrorSaysFields(t *testing.T) {
	err := Fieldf("Requests", "{} %d shards cannot share %q; want {MaxRate} below %s", 3, "/posts/{slug}", "1%")
	if got, want := err.Error(), `Requests 3 shards cannot share "/posts/{slug}"; want MaxRate below 1%`; got != want {
		t.Errorf("Error() = %q, want %q", got, want)
	}
	flag := func(f string) string { return "--" + strings.ToLower(f) }
	if got, want := err.Say(flag), `--requests 3 shards cannot share "/posts/{slug}"; want --maxrate below 1%`; got != want {
		t.Errorf("Say = %q, want %q", got, want)
	}
	wrapped := fmt.Errorf("plan: %w", err)
	var fe *FieldError
	if !errors.Is(wrapped, Err) || !errors.As(wrapped, &fe) || fe.Field != "Requests" {
		t.Errorf("wrapped: usage %v, field %v", errors.Is(wrapped, Err), fe)
	}
}

func TestNameSaysFieldsInText(t *testing.T) {
	flag := func(f string) string { return "--" + strings.ToLower(f) }
	for _, tc := range []struct{ text, want, bare string }{
		{"raise {Requests} or {Trials}", "raise --requests or --trials", "raise Requests or Trials"},
		{"50% of {slug} {} {Trials", "50% of {slug} {} {Trials", "50% of {slug} {} {Trials"},
		{"{KeepAll}", "--keepall", "KeepAll"},
	} {
		if got := Name(tc.text, flag); got != tc.want {
			t.Errorf("Name(%q) = %q, want %q", tc.text, got, tc.want)
		}
		if got := Name(tc.text, nil); got != tc.bare {
			t.Errorf("Name(%q, nil) = %q, want %q", tc.text, got, tc.bare)
		}
	}
}

// TestWantsInvalid: the error names the field and the value, and says
// what the field wants in its own words, a percent sign in them included.
func TestWantsInvalid(t *testing.T) {
	w := Wants{"Requests": "1 to 10", "MaxRate": "above 0% and below 100%"}
	for _, tc := range []struct {
		field string
		value any
		want  string
	}{
		{"Requests", 0, "Requests 0: want 1 to 10"},
		{"MaxRate", "120%", "MaxRate 120%: want above 0% and below 100%"},
	} {
		err := w.Invalid(tc.field, tc.value)
		if err.Error() != tc.want || err.Field != tc.field || !errors.Is(err, Err) {
			t.Errorf("Invalid(%q, %v) = %q (field %q); want %q, a usage error about %s", tc.field, tc.value, err, err.Field, tc.want, tc.field)
		}
	}
}

// Within and NotBelow add a field's error only outside the range, ends
// included in it, NaN outside it; errors come in the order checked.
func TestWithin(t *testing.T) {
	w := Wants{"Keys": "1 to 10", "Rate": "0 to 1", "Gap": "0 or more"}
	var errs []error
	Within(&errs, w, "Keys", 1, 1, 10)
	Within(&errs, w, "Keys", 10, 1, 10)
	NotBelow(&errs, w, "Gap", time.Duration(0), 0)
	if len(errs) != 0 {
		t.Fatalf("values at the ends were refused: %v", errs)
	}
	Within(&errs, w, "Keys", 11, 1, 10)
	Within(&errs, w, "Rate", math.NaN(), 0, 1)
	NotBelow(&errs, w, "Gap", -time.Second, 0)
	NotBelow(&errs, w, "Rate", math.NaN(), 0)
	want := []string{"Keys 11: want 1 to 10", "Rate NaN: want 0 to 1", "Gap -1s: want 0 or more", "Rate NaN: want 0 to 1"}
	if len(errs) != len(want) {
		t.Fatalf("errors %v, want %q", errs, want)
	}
	for i, err := range errs {
		if !errors.Is(err, Err) || err.Error() != want[i] {
			t.Errorf("error %d: %q, want %q (a usage error)", i, err, want[i])
		}
	}
}
