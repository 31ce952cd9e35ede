package storetest

import (
	"errors"
	"strings"
	"testing"
	"unicode/utf8"
)

// FuzzURL is the body of a store package's FuzzParseURL: it feeds seeds,
// and any string the fuzzer makes of them, to parse, which reads a server's
// URL before anything is dialled. parse must not panic; every error must be
// an E (the package's *URLError) wrapping badURL, printable as one line; and
// a password written as user:secret@ or password=secret must never show in
// it.
func FuzzURL[E error](f *testing.F, parse func(raw string) error, badURL error, seeds ...string) {
	for _, seed := range seeds {
		f.Add(seed)
	}
	f.Fuzz(func(t *testing.T, raw string) {
		err := parse(raw)
		if err == nil {
			return
		}
		var ue E
		if !errors.As(err, &ue) || !errors.Is(err, badURL) {
			t.Fatalf("ParseURL(%q) = %v, want a %T wrapping %v", raw, err, ue, badURL)
		}
		msg := err.Error()
		if strings.ContainsAny(msg, "\n\r") || !utf8.ValidString(msg) {
			t.Fatalf("ParseURL(%q): error is not one printable line: %q", raw, msg)
		}
		const secret = "s3cretPW"
		for _, form := range []string{"u:" + secret + "@", "password=" + secret} {
			if strings.Contains(raw, form) && strings.Count(raw, secret) == 1 && strings.Contains(msg, secret) {
				t.Fatalf("ParseURL(%q): error shows the password: %q", raw, msg)
			}
		}
	})
}
