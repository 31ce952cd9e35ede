package racefile_test

import (
	"cmp"
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/racelab/racelab/scenarios/racefile"
	"github.com/racelab/racelab/scenarios/racefile/starter"
)

// FuzzParse: whatever the file, Parse refuses it in one line naming the
// file, or accepts it with a rule and a burst; it never panics.
func FuzzParse(f *testing.F) {
	f.Add([]byte(minimal))
	f.Add([]byte(starter.Template))
	f.Add([]byte("race: r\nburst:\n  - request: POST /a/{{i}}\n    count: 2\n  - request: GET /b\n    count: 1\nrule: allowed <= 1\n"))
	f.Add([]byte("race: [\n"))
	f.Add([]byte("race: r\nburst: &a [*a]\nrule: true\n"))
	f.Fuzz(func(t *testing.T, data []byte) {
		file, err := racefile.Parse("f.race.yaml", data)
		if err != nil {
			var fe *racefile.Error
			if !errors.As(err, &fe) || !strings.HasPrefix(err.Error(), "f.race.yaml") || strings.Contains(err.Error(), "\n") {
				t.Fatalf("error %q: want one line, FILE:LINE:COL: …", err)
			}
			return
		}
		if file.Rule == nil || len(file.Burst) == 0 || file.Requests < 1 {
			t.Fatalf("accepted without a rule or a burst: %+v", file)
		}
	})
}

// FuzzTemplate: a template that parses expands without panicking, and one
// without holes expands to itself.
func FuzzTemplate(f *testing.F) {
	for _, s := range []string{"/hit/{{key}}", "{{ env.A }}-{{i}}", "{{acct.id.0}}", "plain", "{{", "}}{{x}}", "{{uuid}}"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		tpl, _, err := racefile.ParseTemplate(s)
		if err != nil {
			return
		}
		v := &racefile.Vars{Key: "k", I: 1, Env: map[string]string{"A": "a"}, Captures: map[string]any{"acct": map[string]any{"id": []any{"x"}}}}
		got, err := tpl.Expand(v, nil)
		if tpl.Literal() && (err != nil || got != s) {
			t.Fatalf("literal %q expanded to %q, %v", s, got, err)
		}
	})
}

// TestTemplateHoleShapes: a hole of Vars' own names takes what its name
// takes and no more, refused where it is parsed, never at expansion.
func TestTemplateHoleShapes(t *testing.T) {
	for _, tt := range []struct {
		s, err string
	}{
		{"{{env.A}}", ""},
		{"{{acct.id.0}}", ""},
		{"{{env}}", "{{env}}: want env.NAME, one environment variable"},
		{"x-{{env.A.B}}", "{{env.A.B}}: want env.NAME, one environment variable"},
		{"{{key.x}}", "{{key.x}}: key has no fields; want {{key}}"},
		{"{{i.0}}", "{{i.0}}: i has no fields; want {{i}}"},
	} {
		_, _, err := racefile.ParseTemplate(tt.s)
		if got := fmt.Sprint(err); (tt.err == "" && err != nil) || (tt.err != "" && got != tt.err) {
			t.Errorf("ParseTemplate(%q) = %v; want %q", tt.s, err, cmp.Or(tt.err, "<nil>"))
		}
	}
}
