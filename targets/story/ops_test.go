package story_test

import (
	"strings"
	"testing"

	"github.com/racelab/racelab/targets/story"
)

// TestOpsTable checks each row of the ops table against what its readers
// rely on: the op's word opens its route, both routes carry the key's
// placeholder, a request with a limit has a default of at least one, and
// Spec finds every row and nothing else.
func TestOpsTable(t *testing.T) {
	seen := map[story.Op]bool{}
	for _, s := range story.Ops() {
		if seen[s.Op] {
			t.Errorf("%s: two rows", s.Op)
		}
		seen[s.Op] = true
		ph := "{" + s.Key + "}"
		if !strings.HasPrefix(s.Route, "/"+string(s.Op)+"/") || !strings.Contains(s.Route, ph) {
			t.Errorf("%s: route %q, want /%s/ then %s", s.Op, s.Route, s.Op, ph)
		}
		if !strings.Contains(s.ReadRoute, ph) || s.Read == "" {
			t.Errorf("%s: read %q on %q, want a named read with %s", s.Op, s.Read, s.ReadRoute, ph)
		}
		if s.Method == "" {
			t.Errorf("%s: no method", s.Op)
		}
		if (s.Limit == "") != (s.DefaultLimit == 0) || s.DefaultLimit < 0 {
			t.Errorf("%s: limit %q with default %d, want both or neither", s.Op, s.Limit, s.DefaultLimit)
		}
		if got, ok := s.Op.Spec(); !ok || got.Route != s.Route {
			t.Errorf("%s.Spec() = %v, %t; want its row", s.Op, got, ok)
		}
	}
	if len(seen) != 5 {
		t.Errorf("%d ops, want the five stories' requests", len(seen))
	}
	if _, ok := story.Op("refund").Spec(); ok {
		t.Error(`Op("refund").Spec() found a row`)
	}
	// Each call builds the table afresh: a reader that changes its copy
	// changes nobody else's.
	story.Ops()[1].Refused[0] = 0
	if s, _ := story.OpDownload.Spec(); s.Refused[0] == 0 {
		t.Error("a change to one copy of the table showed in another")
	}
}

// TestCarries: a request says the story's limit only when it differs from
// the contract's, at the edges of the contract's limit and of zero.
func TestCarries(t *testing.T) {
	download, _ := story.OpDownload.Spec()
	checkout, _ := story.OpCheckout.Spec()
	hit, _ := story.OpHit.Spec()
	tests := []struct {
		spec  story.OpSpec
		limit int64
		want  bool
	}{
		{download, story.DailyLimit - 1, true},
		{download, story.DailyLimit, false},
		{download, story.DailyLimit + 1, true},
		{download, 1, true},
		{download, 0, false}, // no limit of the story's: the contract's stands
		{download, -1, false},
		{checkout, story.Stock, false},
		{checkout, story.Stock + 1, true},
		{hit, 3, false}, // a hit has no limit to say
	}
	for _, tt := range tests {
		if got := tt.spec.Carries(tt.limit); got != tt.want {
			t.Errorf("%s.Carries(%d) = %t, want %t", tt.spec.Op, tt.limit, got, tt.want)
		}
	}
}
