package racefile_test

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/racelab/racelab/scenarios/racefile"
	"github.com/racelab/racelab/scenarios/racefile/starter"
	"github.com/racelab/racelab/scenarios/results"
)

// minimal is a race file with what it needs and nothing else; the cases
// below change one line of it.
const minimal = `race: r
burst:
  - request: POST /hit/{{key}}
readback:
  - request: GET /get/{{key}}
    as: post
rule: post.views == allowed
`

func TestParseRefusesWithPosition(t *testing.T) {
	for _, tc := range []struct {
		name, file string
		want       string // the whole first line, FILE:LINE:COL: …, or its start
	}{
		{"not yaml", "race: r\nburst: x: y\n", "f.yaml:2:1: not YAML: mapping values are not allowed"},
		{"not a mapping", "- a\n", "f.yaml:1:1: a race file is a mapping"},
		{"unknown key", minimal + "expect: holds\n", `f.yaml:8:1: unknown key "expect" in a race file; want one of race, title`},
		{"unknown step key", strings.Replace(minimal, "    as: post", "    as: post\n    allowed: true", 1), `f.yaml:7:5: unknown key "allowed" in a readback request`},
		{"no rule", strings.Replace(minimal, "rule: post.views == allowed\n", "", 1), "f.yaml:1:1: no rule: here; want the hard rule in CEL"},
		{"no burst", "race: r\nrule: true\n", "f.yaml:1:1: no burst: here"},
		{"bad request line", strings.Replace(minimal, "POST /hit/{{key}}", "POST hit", 1), `f.yaml:3:14: request: "POST hit"; want METHOD /PATH`},
		{"unknown template", strings.Replace(minimal, "/hit/{{key}}", "/hit/{{slug}}", 1), "f.yaml:3:24: {{slug}} names no variable; want one of key, i, trial, uuid, env.NAME"},
		{"unclosed template", strings.Replace(minimal, "/hit/{{key}}", "/hit/{{key", 1), `f.yaml:3:24: "{{key" opens {{ and never closes it`},
		{"undeclared env", strings.Replace(minimal, "/hit/{{key}}", "/hit/{{env.TOKEN}}", 1), "f.yaml:3:24: {{env.TOKEN}} reads an environment variable the file does not declare; want env: [TOKEN]"},
		{"index outside the burst", strings.Replace(minimal, "/get/{{key}}", "/get/{{i}}", 1), "f.yaml:5:23: {{i}} in a readback request; only a burst request has an index"},
		{"cel does not compile", strings.Replace(minimal, "post.views == allowed", "post.views == = allowed", 1), "f.yaml:7:21: rule: Syntax error"},
		{"cel unknown name", strings.Replace(minimal, "post.views == allowed", "posts.views == allowed", 1), "f.yaml:7:7: rule: undeclared reference to 'posts'"},
		{"cel not boolean", strings.Replace(minimal, "post.views == allowed", "allowed + 1", 1), `f.yaml:7:7: rule: "allowed + 1" is int; want CEL that is true or false`},
		{"allowed not boolean", strings.Replace(minimal, "POST /hit/{{key}}", "POST /hit/{{key}}\n    allowed: status", 1), `f.yaml:4:14: allowed: "status" is int`},
		{"as reserved", strings.Replace(minimal, "as: post", "as: answers", 1), `f.yaml:6:9: as: "answers" is a name the rule already has`},
		{"readback without as", strings.Replace(minimal, "    as: post\n", "", 1), "f.yaml:5:5: no as: here"},
		{"several kinds without count", strings.Replace(minimal, "burst:\n", "burst:\n  - request: POST /a\n    count: 2\n", 1), "f.yaml:5:5: a burst of several kinds gives each its count:"},
		{"requests sets N", strings.Replace(minimal, "race: r\n", "race: r\nrequests: 5\n", 1), ""},
		{"requests out of range", strings.Replace(minimal, "race: r\n", "race: r\nrequests: 0\n", 1), `f.yaml:2:11: requests: "0"; want a whole number from 1 to 10000`},
		{"body and json", strings.Replace(minimal, "POST /hit/{{key}}", "POST /hit/{{key}}\n    body: x\n    json: {a: 1}", 1), "f.yaml:4:11: body: and json: both given"},
		{"two documents", minimal + "---\nrace: s\n", "f.yaml:8:1: a second YAML document"},
		{"empty", "", "f.yaml:1:1: empty"},
	} {
		t.Run(tc.name, func(t *testing.T) { parses(t, tc.file, tc.want) })
	}
}

// TestParseSizeLimit: a file of exactly MaxFileBytes is read, and one
// byte more is refused.
func TestParseSizeLimit(t *testing.T) {
	padded := func(size int) []byte {
		head := minimal + "# "
		return []byte(head + strings.Repeat("x", size-len(head)-1) + "\n")
	}
	for _, tc := range []struct {
		size int
		ok   bool
	}{{racefile.MaxFileBytes - 1, true}, {racefile.MaxFileBytes, true}, {racefile.MaxFileBytes + 1, false}} {
		_, err := racefile.Parse("f.race.yaml", padded(tc.size))
		if (err == nil) != tc.ok {
			t.Errorf("%d bytes: err %v; want accepted %t", tc.size, err, tc.ok)
		}
	}
}

func TestParseTooBig(t *testing.T) {
	data := []byte(minimal + "# " + strings.Repeat("x", racefile.MaxFileBytes) + "\n")
	_, err := racefile.Parse("big.race.yaml", data)
	if err == nil || !strings.HasPrefix(err.Error(), "big.race.yaml: over 256 KiB") {
		t.Fatalf("got %v; want it refused for its size", err)
	}
	if _, err := racefile.Parse("ok.race.yaml", []byte(minimal)); err != nil {
		t.Fatalf("minimal file refused: %v", err)
	}
}

func TestShippedAndStarterFilesLint(t *testing.T) {
	for _, path := range []string{"../races/ten-hits-one-view.race.yaml", "../races/six-become-four.race.yaml", "../races/five-checkouts.race.yaml",
		"../races/coupon.race.yaml", "testdata/balance.race.yaml", "testdata/signup.race.yaml", "testdata/idempotency.race.yaml"} {
		if _, err := racefile.Load(context.Background(), path); err != nil {
			t.Error(err)
		}
	}
	f, err := racefile.Parse("starter", []byte(starter.Template))
	if err != nil {
		t.Fatal(err)
	}
	if f.Name != "coupon-once" || f.Requests != 10 || len(f.Setup) != 1 || len(f.Readback) != 1 {
		t.Errorf("starter read as %+v", f)
	}
}

func TestMixedBurstCounts(t *testing.T) {
	f, err := racefile.Parse("f", []byte(`race: transfer
setup:
  - request: PUT /accounts/{{key}}-a
burst:
  - request: POST /transfer?from=a&to=b
    count: 3
    kind: a-to-b
  - request: POST /transfer?from=b&to=a
    count: 2
rule: allowed <= 5
`))
	if err != nil {
		t.Fatal(err)
	}
	if f.Requests != 5 || f.Burst[0].Kind != "a-to-b" || f.Burst[1].Kind != "POST /transfer?from=b&to=a" {
		t.Errorf("requests %d, kinds %q, %q; want 5, a-to-b and the request line", f.Requests, f.Burst[0].Kind, f.Burst[1].Kind)
	}
}

// parses checks that file, named f.yaml, is accepted when want is empty,
// else refused as a usage error on one line that starts with want.
func parses(t *testing.T, file, want string) {
	t.Helper()
	_, err := racefile.Parse("f.yaml", []byte(file))
	if want == "" {
		if err != nil {
			t.Fatalf("refused: %v", err)
		}
		return
	}
	if err == nil {
		t.Fatalf("accepted; want %q", want)
	}
	if !errors.Is(err, results.ErrUsage) {
		t.Errorf("%v is not a usage error", err)
	}
	if got := err.Error(); !strings.HasPrefix(got, want) || strings.Contains(got, "\n") {
		t.Errorf("got  %q\nwant %q… on one line", got, want)
	}
}
