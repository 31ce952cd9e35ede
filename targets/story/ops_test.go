package story_test

import (
	"net/http"
	"strings"
	"testing"

	"github.com/racelab/racelab/targets/story"
)

// TestOpsTable checks each row of the stories' table against what its
// readers rely on (OpSpec.Check), and that Spec finds every row and
// nothing else.
func TestOpsTable(t *testing.T) {
	seen := map[story.Op]bool{}
	for _, s := range story.Ops().Specs() {
		if seen[s.Op] {
			t.Errorf("%s: two rows", s.Op)
		}
		seen[s.Op] = true
		if err := s.Check(); err != nil {
			t.Errorf("%s: %v", s.Op, err)
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
	if got, want := strings.Join(story.Ops().Words(), " "), "hit download checkout limit original"; got != want {
		t.Errorf("Words() = %q, want %q", got, want)
	}
	// Each call copies the table: a reader that changes its copy changes
	// nobody else's.
	story.Ops().Specs()[1].Refused[0] = 0
	if s, _ := story.OpDownload.Spec(); s.Refused[0] == 0 {
		t.Error("a change to one copy of the table showed in another")
	}
}

// seat is a row of a story's own, as a test would add it.
var seat = story.OpSpec{Op: "reserve", Method: http.MethodPost, Route: "/reserve/{show}", Key: "show",
	Field: "count", OK: "reserved", Read: "seats", ReadRoute: "/seats/{show}", ReadField: "taken",
	Refused: []int{http.StatusConflict}, Limit: "seats", DefaultLimit: 50,
	Words: story.Words{Request: "reserve", Requests: "reservations", Unit: "seat", Yes: "reserved", No: "refused",
		Stored: "seats taken", Example: "gala"}}

// TestTableWith: a row of a story's own joins a table that leaves the
// stories' own untouched, and a row that clashes with one already there,
// or that does not make sense, is refused with what is wrong.
func TestTableWith(t *testing.T) {
	table, err := story.Ops().With(seat)
	if err != nil {
		t.Fatal(err)
	}
	if got, ok := table.Spec("reserve"); !ok || got.ReadRoute != seat.ReadRoute {
		t.Errorf("Spec(reserve) = %v, %t; want the row added", got, ok)
	}
	if _, ok := story.Ops().Spec("reserve"); ok {
		t.Error("With changed the stories' own table")
	}
	if n := len(table.Specs()); n != 6 {
		t.Errorf("%d rows, want 6", n)
	}
	if _, err := table.With(seat); err == nil || !strings.Contains(err.Error(), "a word of op reserve already") {
		t.Errorf("the same row twice: %v, want a clash", err)
	}
	change := func(f func(*story.OpSpec)) story.OpSpec {
		s := seat
		f(&s)
		return s
	}
	tests := []struct {
		name string
		spec story.OpSpec
		says string
	}{
		{"a read of another op's", change(func(s *story.OpSpec) { s.Read = "quota" }), `"quota" is a word of op download`},
		{"a route word of another op's", change(func(s *story.OpSpec) { s.ReadRoute = "/item/{show}" }), `"item" is a word of op checkout`},
		{"an op word that is a read", change(func(s *story.OpSpec) { s.Op, s.Route = "get", "/get/{show}" }), `"get" is a word of op hit`},
		{"a route not of its word", change(func(s *story.OpSpec) { s.Route = "/book/{show}" }), "want /reserve/ then {show}"},
		{"no key in the read", change(func(s *story.OpSpec) { s.ReadRoute = "/seats" }), "whose route has {show}"},
		{"refused without a word", change(func(s *story.OpSpec) { s.Words.No = "" }), "want both or neither"},
		{"a limit without a default", change(func(s *story.OpSpec) { s.DefaultLimit = 0 }), "want both or neither"},
		{"a lowercase method", change(func(s *story.OpSpec) { s.Method = "post" }), "want an HTTP method"},
		{"no words", change(func(s *story.OpSpec) { s.Words = story.Words{No: "refused"} }), "its words need"},
		{"an op that is not a word", change(func(s *story.OpSpec) { s.Op = "Reserve" }), "want a word"},
	}
	for _, tt := range tests {
		_, err := story.Ops().With(tt.spec)
		if err == nil || !strings.Contains(err.Error(), tt.says) {
			t.Errorf("%s: %v, want an error saying %q", tt.name, err, tt.says)
		}
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
		{seat, 3, true},
		{seat, 50, false},
	}
	for _, tt := range tests {
		if got := tt.spec.Carries(tt.limit); got != tt.want {
			t.Errorf("%s.Carries(%d) = %t, want %t", tt.spec.Op, tt.limit, got, tt.want)
		}
	}
}
