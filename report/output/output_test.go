package output

import (
	"errors"
	"strings"
	"testing"

	"github.com/racelab/racelab/internal/usage"
)

// TestParse: every output is checked before any work is done, and
// each refusal names the setting, which the command line says as -o.
func TestParse(t *testing.T) {
	dir := t.TempDir()
	formats := []string{"table", "json", "junit"}
	for _, tc := range []struct {
		raw     []string
		want    []Output
		wantErr string
	}{
		{nil, []Output{{Format: "table"}}, ""},
		{[]string{"JSON"}, []Output{{Format: "json"}}, ""},
		{[]string{"table", "junit=" + dir + "/r.xml", "json+=" + dir + "/r.json"},
			[]Output{{Format: "table"}, {Format: "junit", Path: dir + "/r.xml"}, {Format: "json", Path: dir + "/r.json", Append: true}}, ""},
		{[]string{"json=-"}, []Output{{Format: "json"}}, ""},
		{[]string{"xml"}, nil, `-o xml: unknown output format "xml"; want table, json or junit, each alone or as FORMAT=FILE`},
		{[]string{"csv"}, nil, "-o csv: csv is written of loads only"},
		{[]string{"table", "json"}, nil, "-o table and -o json would both write to standard output; send one to a file: -o json=FILE"},
		{[]string{"json="}, nil, "-o json=: no file after ="},
		{[]string{"json=" + dir + "/a", "junit=" + dir + "/./a"}, nil, "name the same file"},
		{[]string{"json=" + dir + "/no/such/r.json"}, nil, "no folder " + dir + "/no/such"},
		{[]string{"json=" + dir}, nil, "is a folder"},
	} {
		got, err := Parse(tc.raw, formats)
		if tc.wantErr != "" {
			var fe *usage.FieldError
			if !errors.As(err, &fe) || !errors.Is(err, usage.Err) || !strings.Contains(fe.Say(func(string) string { return "-o" }), tc.wantErr) {
				t.Errorf("%q: error %v; want a usage error about Output saying %q", tc.raw, err, tc.wantErr)
			}
			continue
		}
		if err != nil || len(got) != len(tc.want) {
			t.Errorf("%q: %+v, %v; want %+v", tc.raw, got, err, tc.want)
			continue
		}
		for i := range got {
			if got[i] != tc.want[i] {
				t.Errorf("%q: output %d = %+v, want %+v", tc.raw, i, got[i], tc.want[i])
			}
		}
	}
}
