package expr_test

import (
	"cmp"
	"fmt"
	"testing"

	"github.com/racelab/racelab/scenarios/racefile/expr"
)

// FuzzTemplate: a template that parses expands without panicking, and one
// without holes expands to itself.
func FuzzTemplate(f *testing.F) {
	for _, s := range []string{"/hit/{{key}}", "{{ env.A }}-{{i}}", "{{acct.id.0}}", "plain", "{{", "}}{{x}}", "{{uuid}}"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		tpl, _, err := expr.ParseTemplate(s)
		if err != nil {
			return
		}
		v := &expr.Vars{Key: "k", I: 1, Env: map[string]string{"A": "a"}, Captures: map[string]any{"acct": map[string]any{"id": []any{"x"}}}}
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
		_, _, err := expr.ParseTemplate(tt.s)
		if got := fmt.Sprint(err); (tt.err == "" && err != nil) || (tt.err != "" && got != tt.err) {
			t.Errorf("expr.ParseTemplate(%q) = %v; want %q", tt.s, err, cmp.Or(tt.err, "<nil>"))
		}
	}
}
