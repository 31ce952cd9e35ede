package postgres

import (
	"testing"

	"github.com/racelab/racelab/targets/storetest"
)

// FuzzParseURL feeds any string to ParseURL, which reads --postgres-url before
// anything is dialled; storetest.FuzzURL says what it must hold. CI runs it
// for a few seconds with go test -run '^$' -fuzz '^FuzzParseURL$' -fuzztime
// 10s ./targets/postgres/.
func FuzzParseURL(f *testing.F) {
	storetest.FuzzURL[*URLError](f, func(raw string) error { _, err := ParseURL(raw); return err }, ErrBadURL,
		"postgres://racelab@127.0.0.1:55432/racelab?sslmode=disable", "notaurl", "::garbage::",
		"postgres://u:secret@h:99999/db", "host=h password=secret port=99999",
		"postgresql://h1:5432,h2:5433/db", "postgres://h/db?sslmode=bogus", "postgres://h/db?password=secret")
}
