package starter_test

import (
	"strings"
	"testing"

	"github.com/racelab/racelab/scenarios/racefile"
	"github.com/racelab/racelab/scenarios/racefile/starter"
)

// TestFromCurlStarter: the starter lints clean, keeps credentials out of
// the file (an env: hole, and a note), reads the state back, and gives a
// PUT or DELETE no "allowed <= 1", which would call an idempotent
// endpoint broken.
func TestFromCurlStarter(t *testing.T) {
	for _, tc := range []struct {
		method, rule string
	}{
		{"POST", "rule: allowed <= 1\n"},
		{"PATCH", "rule: allowed <= 1\n"},
		{"PUT", "rule: allowed + refused == requests\n"},
		{"DELETE", "rule: allowed + refused == requests\n"},
	} {
		file, _, notes, err := starter.FromCurl("curl -X " + tc.method + ` https://shop.example/api/carts/7 -H 'Authorization: Bearer s3cr3t-t0ken' -H 'Cookie: sid=abcdef123' -H 'X-Trace: 1'`)
		if err != nil {
			t.Fatal(err)
		}
		f, err := racefile.Parse("starter.race.yaml", []byte(file))
		if err != nil {
			t.Fatalf("%s: the starter does not lint: %v\n%s", tc.method, err, file)
		}
		if !strings.HasSuffix(file, tc.rule) || strings.Contains(file, "s3cr3t") || strings.Contains(file, "abcdef123") ||
			len(notes) != 2 || !strings.Contains(notes[0], "$AUTHORIZATION") || len(f.Readback) != 1 || f.Counted == nil ||
			strings.Join(f.Env, ",") != "AUTHORIZATION,COOKIE" || !strings.Contains(file, `X-Trace: "1"`) {
			t.Errorf("%s: notes %q, env %v; starter:\n%s", tc.method, notes, f.Env, file)
		}
	}
}
