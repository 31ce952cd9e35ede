package scenarios

import "testing"

// TestScenariosAreComplete checks that every story carries what the
// commands print: a title, a story, a rule, the fix, a line-up and a way to
// tell a trial in words.
func TestScenariosAreComplete(t *testing.T) {
	for _, sc := range All() {
		if sc.Title == "" || sc.Story == "" || sc.Rule == "" || sc.Fix == "" || len(sc.Lineup) == 0 ||
			sc.DefaultRequests < 1 || sc.bind == nil || sc.model.step == nil || sc.Judge == nil || sc.Tell == nil || sc.Op == "" || sc.Needs == "" {
			t.Errorf("%s is missing a part: %+v", sc.Name, sc)
		}
	}
}
