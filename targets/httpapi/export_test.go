package httpapi

import (
	"net/url"
	"testing"
)

// MustParseURL parses a URL a test wrote. It is exported for the tests of
// package httpapi_test too, so that both packages' tests share it.
func MustParseURL(tb testing.TB, s string) *url.URL {
	tb.Helper()
	u, err := url.Parse(s)
	if err != nil {
		tb.Fatal(err)
	}
	return u
}
