package story

import (
	"errors"
	"fmt"
	"net/http"
	"slices"
	"strings"
)

// OpSpec is one row of the ops table: what every side that builds, serves
// or shows a story's request needs to know of it (the HTTP client and
// server, the classroom board, the history model), so that none of them
// keeps a switch over the ops of its own and a new op is one row.
//
// The routes and fields are the HTTP contract's (package httpapi lists
// them): racelab serve answers them, and an HTTP mapping may move them
// elsewhere for a service with another API. They are declared here rather
// than in the contract's package because the board and the stories read
// them too, and this is the one package all of them import.
type OpSpec struct {
	// Op is the request's word. It is also the first word of its route
	// and the name of its call in an HTTP mapping (download=…).
	Op Op
	// Method and Route are the request: the route below a service's base
	// URL, with the key in the {Key} placeholder.
	Method, Route string
	// Key names the request's key: slug, visitor, item, caller or
	// subscriber.
	Key string
	// Field is the JSON field of the request's answer that holds the
	// count the store answered with ("" for an answer that says only yes
	// or no, a checkout's); OK is the JSON boolean that agrees with the
	// status ("" for a request that is always counted, a hit's).
	Field, OK string
	// Read names the call that reads back what the store counted (get,
	// quota, item, window, originals), made with GET on ReadRoute, whose
	// answer holds the count in ReadField and echoes the key in Key. Where
	// ReadRoute's path is Route's (limit, original), the method tells the
	// read from the request.
	Read, ReadRoute, ReadField string
	// Refused lists the statuses that mean the store refused the request
	// (over the limit, already taken); it is empty for a request that is
	// always counted (a hit).
	Refused []int
	// Limit names the query parameter that carries the story's limit,
	// "" for a request that has none: limit for a quota or a rate limit,
	// stock for a checkout. DefaultLimit is the contract's: a request
	// without the parameter means it, so that a service written before
	// limits travelled keeps working, and a client sends the parameter
	// only when the story's limit differs (see Carries).
	Limit        string
	DefaultLimit int64
	// Words say the op as the history checks and the board say it.
	Words Words
}

// Words are an op's words, for whoever shows its requests to a person.
type Words struct {
	// Request names one request in a history ("hit: 3 views"), Requests
	// several on the board ("no hits yet").
	Request, Requests string
	// Unit is one of what the store counts: "view", "claim".
	Unit string
	// Yes and No say what a request was told: "granted" and "refused",
	// "reserved" and "409, taken". A request that is always counted (a
	// hit) has neither: its answer is the total, in Units.
	Yes, No string
	// Stored heads the board's column of what the store holds: "views",
	// "this window".
	Stored string
	// Example is a key to try on the board's curl lines.
	Example string
}

// builtin is the stories' own rows, in the order the stories were added.
func builtin() []OpSpec {
	return []OpSpec{
		{Op: OpHit, Method: http.MethodPost, Route: "/hit/{slug}", Key: "slug", Field: "views",
			Read: "get", ReadRoute: "/get/{slug}", ReadField: "views",
			Words: Words{Request: "hit", Requests: "hits", Unit: "view", Stored: "views", Example: "hello"}},
		{Op: OpDownload, Method: http.MethodPost, Route: "/download/{visitor}", Key: "visitor", Field: "count", OK: "allowed",
			Read: "quota", ReadRoute: "/quota/{visitor}", ReadField: "count",
			Refused: []int{http.StatusTooManyRequests}, Limit: "limit", DefaultLimit: DailyLimit,
			Words: Words{Request: "download", Requests: "downloads", Unit: "download", Yes: "granted", No: "refused", Stored: "count", Example: "ada"}},
		{Op: OpCheckout, Method: http.MethodPost, Route: "/checkout/{item}", Key: "item", OK: "reserved",
			Read: "item", ReadRoute: "/item/{item}", ReadField: "claims",
			Refused: []int{http.StatusConflict}, Limit: "stock", DefaultLimit: Stock,
			Words: Words{Request: "checkout", Requests: "checkouts", Unit: "claim", Yes: "reserved", No: "409, taken", Stored: "claims", Example: "painting"}},
		{Op: OpLimit, Method: http.MethodPost, Route: "/limit/{caller}", Key: "caller", Field: "count", OK: "allowed",
			Read: "window", ReadRoute: "/limit/{caller}?window={window}", ReadField: "count",
			Refused: []int{http.StatusTooManyRequests}, Limit: "limit", DefaultLimit: WindowLimit,
			Words: Words{Request: "request", Requests: "requests", Unit: "request", Yes: "granted", No: "refused", Stored: "this window", Example: "bot"}},
		// A refused original is 403 without a paid plan (as the server
		// reads it) and 429 at the daily limit.
		{Op: OpOriginal, Method: http.MethodPost, Route: "/original/{subscriber}", Key: "subscriber", Field: "count", OK: "granted",
			Read: "originals", ReadRoute: "/original/{subscriber}", ReadField: "count",
			Refused: []int{http.StatusForbidden, http.StatusTooManyRequests}, Limit: "limit", DefaultLimit: DailyLimit,
			Words: Words{Request: "original", Requests: "originals", Unit: "original", Yes: "granted", No: "refused", Stored: "today", Example: "grace"}},
	}
}

// builtinRows are read by every Table that adds no row, and never handed
// out: Specs and Spec copy what they give.
var builtinRows = builtin()

// Table is an ops table: every op a side builds, serves or shows, each
// once. Ops is the stories' own; With adds an op of a story's own, such
// as a test's, so that a new op travels as a value handed to whoever
// reads it (the HTTP client's Config, the server's options, the board's
// Config) rather than through a registry that tests would have to
// change. The zero Table is Ops.
type Table struct {
	specs []OpSpec // nil: builtinRows
}

// Ops is the stories' ops table.
func Ops() Table { return Table{} }

// rows are the table's rows, not to be changed.
func (t Table) rows() []OpSpec {
	if t.specs == nil {
		return builtinRows
	}
	return t.specs
}

// Specs lists the table's rows in order, a copy the caller may keep or
// change.
func (t Table) Specs() []OpSpec {
	out := slices.Clone(t.rows())
	for i := range out {
		out[i].Refused = slices.Clone(out[i].Refused)
	}
	return out
}

// Spec is op's row, a copy; ok is false for a word that names no op of
// the table. It copies that row alone: the client and the server read it
// on every request.
func (t Table) Spec(op Op) (spec OpSpec, ok bool) {
	for _, s := range t.rows() {
		if s.Op == op {
			s.Refused = slices.Clone(s.Refused)
			return s, true
		}
	}
	return OpSpec{}, false
}

// Words lists the table's op words, for a message naming what is known.
func (t Table) Words() []string {
	specs := t.Specs()
	words := make([]string, len(specs))
	for i, s := range specs {
		words[i] = string(s.Op)
	}
	return words
}

// With is the table with more rows after its own. A row that does not
// make sense (see OpSpec.Check), or one of whose words (its op, its read,
// the first word of either route) another row has already, is an error
// naming it: two rows for one word would leave each reader to pick one.
func (t Table) With(more ...OpSpec) (Table, error) {
	specs := t.Specs()
	owner := map[string]Op{}
	for _, s := range specs {
		for _, w := range s.words() {
			owner[w] = s.Op
		}
	}
	for _, s := range more {
		s.Refused = slices.Clone(s.Refused)
		if err := s.Check(); err != nil {
			return t, err
		}
		for _, w := range s.words() {
			if o, taken := owner[w]; taken {
				return t, fmt.Errorf("op %s: %q is a word of op %s already", s.Op, w, o)
			}
		}
		for _, w := range s.words() {
			owner[w] = s.Op
		}
		specs = append(specs, s)
	}
	return Table{specs: specs}, nil
}

// words are the names a row takes: its op's and its read's calls, and the
// first words of their routes, where a server tells them apart.
func (s OpSpec) words() []string {
	return []string{string(s.Op), s.Read, firstWord(s.Route), firstWord(s.ReadRoute)}
}

// Check says what is wrong with the row, or nil: the op's word opens its
// route, both routes carry the key's placeholder, a request that can be
// refused says so with a status and a word, and a limit has a default of
// at least one.
func (s OpSpec) Check() error {
	ph := "{" + s.Key + "}"
	switch {
	case !isWord(string(s.Op)):
		return fmt.Errorf("op %q: want a word of lowercase letters and -", s.Op)
	case s.Key == "" || !isWord(s.Key):
		return fmt.Errorf("op %s: key %q: want a word of lowercase letters and -, such as slug", s.Op, s.Key)
	case s.Method == "" || strings.ToUpper(s.Method) != s.Method:
		return fmt.Errorf("op %s: method %q: want an HTTP method such as POST", s.Op, s.Method)
	case !strings.HasPrefix(s.Route, "/"+string(s.Op)+"/") || !strings.Contains(s.Route, ph):
		return fmt.Errorf("op %s: route %q: want /%s/ then %s", s.Op, s.Route, s.Op, ph)
	case !isWord(s.Read) || !strings.HasPrefix(s.ReadRoute, "/") || !strings.Contains(s.ReadRoute, ph):
		return fmt.Errorf("op %s: read %q on %q: want a named read whose route has %s", s.Op, s.Read, s.ReadRoute, ph)
	case s.ReadField == "":
		return fmt.Errorf("op %s: no field of the read holds the count", s.Op)
	case (len(s.Refused) == 0) != (s.Words.No == ""):
		return fmt.Errorf("op %s: refused by %v in the words %q: want both or neither", s.Op, s.Refused, s.Words.No)
	case (s.Limit == "") != (s.DefaultLimit == 0) || s.DefaultLimit < 0:
		return fmt.Errorf("op %s: limit %q with default %d: want both or neither, the default at least 1", s.Op, s.Limit, s.DefaultLimit)
	case s.Words.Request == "" || s.Words.Requests == "" || s.Words.Unit == "" || s.Words.Stored == "" || s.Words.Example == "":
		return errors.New("op " + string(s.Op) + ": its words need a request, requests, a unit, what is stored and an example key")
	}
	return nil
}

// firstWord is the first segment of a route: "hit" of /hit/{slug}.
func firstWord(route string) string {
	w, _, _ := strings.Cut(strings.TrimPrefix(route, "/"), "/")
	return w
}

// isWord says whether s is lowercase letters and inner hyphens.
func isWord(s string) bool {
	if s == "" || s[0] == '-' || s[len(s)-1] == '-' {
		return false
	}
	for _, c := range s {
		if !(c >= 'a' && c <= 'z' || c == '-') {
			return false
		}
	}
	return true
}

// Spec is op's row of the stories' ops table; ok is false for a word that
// names none of their requests.
func (op Op) Spec() (spec OpSpec, ok bool) { return Ops().Spec(op) }

// Carries says whether a request made for a story whose limit is limit
// must say it: the request has a limit and the story's is not the
// contract's. A limit below 1 is none of the story's: the contract's
// stands.
func (s OpSpec) Carries(limit int64) bool {
	return s.Limit != "" && limit > 0 && limit != s.DefaultLimit
}
