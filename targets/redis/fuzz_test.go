package redis

import (
	"testing"

	"github.com/racelab/racelab/targets/storetest"
)

// FuzzParseURL feeds any string to ParseURL, which reads --redis-url before
// anything is dialled; storetest.FuzzURL says what it must hold. CI runs it
// for a few seconds with go test -run '^$' -fuzz '^FuzzParseURL$' -fuzztime
// 10s ./targets/redis/.
func FuzzParseURL(f *testing.F) {
	storetest.FuzzURL[*URLError](f, func(raw string) error { _, err := ParseURL(raw); return err }, ErrBadURL,
		"redis://127.0.0.1:56379/0", "notaurl", "::garbage::", "redis://u:secret@h:99999/0",
		"rediss://h", "unix:///tmp/r.sock?password=secret", "redis://h/x", "redis://h:6379/0?foo=bar", "http://h:1")
}
