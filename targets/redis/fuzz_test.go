package redis

import (
	"errors"
	"strings"
	"testing"
	"unicode/utf8"
)

// FuzzParseURL feeds any string to ParseURL, which reads --redis-url before
// anything is dialled. It must not panic; every error must be a *URLError
// (ErrBadURL) printable as one line; and a password written as
// user:secret@ or password=secret must never show in it. CI runs it for a
// few seconds with go test -run '^$' -fuzz '^FuzzParseURL$' -fuzztime 10s
// ./targets/redis/.
func FuzzParseURL(f *testing.F) {
	for _, seed := range []string{"redis://127.0.0.1:56379/0", "notaurl", "::garbage::", "redis://u:secret@h:99999/0", "rediss://h", "unix:///tmp/r.sock?password=secret", "redis://h/x", "redis://h:6379/0?foo=bar", "http://h:1"} {
		f.Add(seed)
	}
	f.Fuzz(func(t *testing.T, raw string) {
		_, err := ParseURL(raw)
		if err == nil {
			return
		}
		var ue *URLError
		if !errors.As(err, &ue) || !errors.Is(err, ErrBadURL) {
			t.Fatalf("ParseURL(%q) = %v, want a *URLError", raw, err)
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
