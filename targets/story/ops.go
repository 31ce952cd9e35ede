package story

import "net/http"

// OpSpec is one row of the ops table: what every side that builds, serves
// or shows a story's request needs to know of it (the HTTP client and
// server, the classroom board, the history model), so that none of them
// keeps a switch over the ops of its own and a new op is one row here.
//
// The routes are the HTTP contract's (design.md §7): racelab serve answers
// them, and a mapping (--http-call) may move them elsewhere for a service
// with another API. They are declared here rather than in the contract's
// package because the board and the stories read them too, and this is
// the one package all of them import.
type OpSpec struct {
	// Op is the request's word. It is also the first word of its route
	// and the name of its call in an HTTP mapping (--http-call download=…).
	Op Op
	// Method and Route are the request: the route below a service's base
	// URL, with the key in the {Key} placeholder.
	Method, Route string
	// Key names the request's key: slug, visitor, item, caller or
	// subscriber.
	Key string
	// Read names the call that reads back what the store counted (get,
	// quota, item, window, originals), made with GET on ReadRoute. Where
	// ReadRoute's path is Route's (limit, original), the method tells the
	// read from the request.
	Read, ReadRoute string
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
}

// Ops is the ops table, in the order the stories were added. Each call
// builds it afresh, so a caller may keep or change what it gets.
func Ops() []OpSpec {
	return []OpSpec{
		{Op: OpHit, Method: http.MethodPost, Route: "/hit/{slug}", Key: "slug",
			Read: "get", ReadRoute: "/get/{slug}"},
		{Op: OpDownload, Method: http.MethodPost, Route: "/download/{visitor}", Key: "visitor",
			Read: "quota", ReadRoute: "/quota/{visitor}",
			Refused: []int{http.StatusTooManyRequests}, Limit: "limit", DefaultLimit: DailyLimit},
		{Op: OpCheckout, Method: http.MethodPost, Route: "/checkout/{item}", Key: "item",
			Read: "item", ReadRoute: "/item/{item}",
			Refused: []int{http.StatusConflict}, Limit: "stock", DefaultLimit: Stock},
		{Op: OpLimit, Method: http.MethodPost, Route: "/limit/{caller}", Key: "caller",
			Read: "window", ReadRoute: "/limit/{caller}?window={window}",
			Refused: []int{http.StatusTooManyRequests}, Limit: "limit", DefaultLimit: WindowLimit},
		// A refused original is 403 without a paid plan (as the server
		// reads it) and 429 at the daily limit.
		{Op: OpOriginal, Method: http.MethodPost, Route: "/original/{subscriber}", Key: "subscriber",
			Read: "originals", ReadRoute: "/original/{subscriber}",
			Refused: []int{http.StatusForbidden, http.StatusTooManyRequests}, Limit: "limit", DefaultLimit: DailyLimit},
	}
}

// Spec is op's row of the ops table; ok is false for a word that names no
// request.
func (op Op) Spec() (spec OpSpec, ok bool) {
	for _, s := range Ops() {
		if s.Op == op {
			return s, true
		}
	}
	return OpSpec{}, false
}

// Carries says whether a request made for a story whose limit is limit
// must say it: the request has a limit and the story's is not the
// contract's. A limit below 1 is none of the story's: the contract's
// stands.
func (s OpSpec) Carries(limit int64) bool {
	return s.Limit != "" && limit > 0 && limit != s.DefaultLimit
}
