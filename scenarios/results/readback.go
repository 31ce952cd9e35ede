package results

import "encoding/json"

// Readback is what a race file (package racefile) left for its rule after
// one trial: every answer of the burst as the rule sees it, and the JSON
// each readback request answered, by its name. A saved result keeps it,
// so that `racelab verify` judges the trial again by the same rule rather
// than taking its verdict on trust.
type Readback struct {
	// Answers has one entry per request of the burst, by index.
	Answers []RaceAnswer `json:"answers"`
	// Bodies are the readback answers' JSON bodies by their names (as:).
	Bodies map[string]json.RawMessage `json:"bodies,omitempty"`
	// Error says why the rule could not be judged (a readback that failed
	// or answered no JSON, a field the rule reads that is missing): the
	// trial then proves nothing either way.
	Error string `json:"error,omitempty"`
	// Cause is why the trial proved nothing, in words that leave out the
	// trial's own key and values ("readback GET /accounts/…: 404 Not
	// Found, text/html"), so that trials failing alike count together;
	// set also for a trial whose errored requests left the rule
	// undecided, whose Error is empty.
	Cause string `json:"cause,omitempty"`
}

// RaceAnswer is one answer of a race file's burst.
type RaceAnswer struct {
	// Kind names the burst entry the request came from.
	Kind string `json:"kind"`
	// Status is the HTTP status, 0 when no answer came.
	Status int `json:"status"`
	// Body is the answer's body as text; Headers its headers, one value
	// each (the first).
	Body    string            `json:"body,omitempty"`
	Headers map[string]string `json:"headers,omitempty"`
}

// Failed reports whether reading back, or evaluating the rule on what was
// read, failed (Error): the trial then proves nothing either way. False
// for a trial without a readback.
func (r *Readback) Failed() bool { return r != nil && r.Error != "" }

// RaceFile names the race file a run played: its path as given and the
// SHA-256 of its content, so that a saved result is judged again only by
// the file it ran with.
type RaceFile struct {
	Path   string `json:"path"`
	SHA256 string `json:"sha256"`
	// Uncounted says the file declares no counted:: a report shows no
	// count.
	Uncounted bool `json:"uncounted,omitempty"`
	// Rel is the file's path relative to the folder of the result file
	// that records it, so that the two can move together: a saved result
	// is judged again from anywhere.
	Rel string `json:"rel,omitempty"`
	// Env holds the values of the file's env: variables the run read,
	// but for those marked secret (Secret), which a result never records.
	Env    map[string]string `json:"env,omitempty"`
	Secret []string          `json:"secret,omitempty"`
}
