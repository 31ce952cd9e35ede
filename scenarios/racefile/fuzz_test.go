package racefile_test

import (
	"errors"
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
