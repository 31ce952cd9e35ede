package scenarios

import (
	"slices"
	"time"
)

// SchemaVersion names the shape of a serialized Result. Bump it whenever a
// field changes meaning or goes away; adding a field keeps it.
const SchemaVersion = "racelab/result/v1"

// Outcome is what one request was told.
type Outcome string

// The outcomes of a request.
const (
	Allowed Outcome = "allowed" // a hit counted, a download granted, a checkout opened
	Refused Outcome = "refused" // a download over the limit, a checkout of a taken item
	Failed  Outcome = "error"   // the target failed: timeout, refused connection, bad answer
)

// Expectation is what a target is expected to do with the hard rule.
type Expectation string

// The expectations.
const (
	ExpectHold  Expectation = "holds"  // the rule must hold in every trial
	ExpectBreak Expectation = "breaks" // the race is expected to show
)

// Request is one request of a burst, as the engine saw it.
type Request struct {
	// Index is the request's slot in the burst, 0..N-1.
	Index int `json:"index"`
	// Invoke and Return are the instants the request started and got its
	// answer, measured on the monotonic clock from the barrier's release.
	Invoke time.Duration `json:"invoke_ns"`
	Return time.Duration `json:"return_ns"`
	// Outcome is what the request was told.
	Outcome Outcome `json:"outcome"`
	// Value is the number the store answered with: the new total of views,
	// the download count, or the claims on the item.
	Value int64 `json:"value"`
	// Error is the target's failure in words, when Outcome is Failed.
	Error string `json:"error,omitempty"`
	// Early says the answer came before the request was released (staged
	// targets only): the burst was not synchronized.
	Early bool `json:"early,omitempty"`
}

// Trial is one burst on fresh state and its judgement.
type Trial struct {
	// Index counts trials from 0 within one target.
	Index int `json:"index"`
	// Key is the fresh slug, visitor or item the trial used.
	Key string `json:"key"`
	// Requests has exactly one entry per request of the burst.
	Requests []Request `json:"requests"`
	// Allowed, Refused and Errors count the outcomes.
	Allowed int `json:"allowed"`
	Refused int `json:"refused"`
	Errors  int `json:"errors"`
	// Counted is what the store holds after the burst.
	Counted int64 `json:"counted"`
	// Lost is how many allowed requests the store failed to count.
	Lost int64 `json:"lost"`
	// Over is how far the allowed requests went past the story's limit
	// (the download limit, or the item's stock of one).
	Over int64 `json:"over"`
	// Retries is how many times the strategy retried within the trial
	// (optimistic strategies only).
	Retries int64 `json:"retries,omitempty"`
	// Broken says the hard rule did not hold; Why says how, in plain words.
	Broken bool   `json:"broken"`
	Why    string `json:"why,omitempty"`
	// ReleaseSpread is the max minus the min of the instants the requests
	// actually started: how tightly the burst was released.
	ReleaseSpread time.Duration `json:"release_spread_ns"`
	// ArrivalSpread is the same spread as the server saw the requests
	// arrive, when the server reports arrivals (racelab serve does).
	ArrivalSpread time.Duration `json:"arrival_spread_ns,omitempty"`
	// Unsynchronized says some answer came before its request was
	// released: the trial is reported but cannot count as proof.
	Unsynchronized bool `json:"unsynchronized,omitempty"`
}

// TargetResult is every trial of one scenario against one target.
type TargetResult struct {
	// Target is the target's name as the user gave it (no parameters).
	Target string `json:"target"`
	// Spec is the full spec, parameters included.
	Spec string `json:"spec"`
	// Guarantee says in a few words what the target's strategy guarantees.
	Guarantee string `json:"guarantee"`
	// Expect is what the target was expected to do; Strict says whether
	// falling short of it fails the run (a naive store that happens not to
	// race in a trial is only worth a note unless a race was demanded).
	Expect Expectation `json:"expect"`
	Strict bool        `json:"strict"`
	// Trials holds the completed trials, in order.
	Trials []Trial `json:"trials"`
	// Error is set when racelab could not run the target at all (it could
	// not be opened, or the store could not be read back).
	Error string `json:"error,omitempty"`
}

// Broken counts the trials in which the rule broke.
func (t *TargetResult) Broken() int {
	n := 0
	for i := range t.Trials {
		if t.Trials[i].Broken {
			n++
		}
	}
	return n
}

// Verdict is "holds" when the rule held in every trial, "broken" otherwise,
// and "error" when the target could not be run.
func (t *TargetResult) Verdict() string {
	switch {
	case t.Error != "":
		return "error"
	case len(t.Trials) == 0:
		return "no trials"
	case t.Broken() > 0:
		return "broken"
	default:
		return "holds"
	}
}

// Failed reports whether the target let the run down: it could not be run,
// or it fell short of a strict expectation.
func (t *TargetResult) Failed() bool {
	switch {
	case t.Error != "":
		return false // reported as a racelab failure, not a verdict
	case !t.Strict || len(t.Trials) == 0:
		return false
	case t.Expect == ExpectHold:
		return t.Broken() > 0
	default:
		return t.Broken() == 0
	}
}

// Totals sums the outcomes over every trial.
func (t *TargetResult) Totals() (requests, allowed, refused, errors int, counted, lost, over int64) {
	for _, tr := range t.Trials {
		requests += len(tr.Requests)
		allowed += tr.Allowed
		refused += tr.Refused
		errors += tr.Errors
		counted += tr.Counted
		lost += tr.Lost
		over += tr.Over
	}
	return
}

// CountedDistribution is the minimum, median and maximum of Counted over the
// trials; ok is false when there are none.
func (t *TargetResult) CountedDistribution() (lo, median, hi int64, ok bool) {
	if len(t.Trials) == 0 {
		return 0, 0, 0, false
	}
	c := make([]int64, len(t.Trials))
	for i, tr := range t.Trials {
		c[i] = tr.Counted
	}
	slices.Sort(c)
	return c[0], c[len(c)/2], c[len(c)-1], true
}

// MaxReleaseSpread is the widest release spread of any trial.
func (t *TargetResult) MaxReleaseSpread() time.Duration {
	var m time.Duration
	for _, tr := range t.Trials {
		m = max(m, tr.ReleaseSpread)
	}
	return m
}

// Result is one run of a scenario against its targets.
type Result struct {
	// Schema is SchemaVersion, so saved results say what they are.
	Schema string `json:"schema"`
	// Scenario is the story's name; Rule its hard rule in words.
	Scenario string `json:"scenario"`
	Rule     string `json:"rule"`
	// Requests is N, the requests per burst; Trials the trials asked for.
	Requests int `json:"requests"`
	Trials   int `json:"trials"`
	// Seed decides every random choice of the simulated stores.
	Seed int64 `json:"seed"`
	// Interrupted says the run was cancelled and the result is partial.
	Interrupted bool `json:"interrupted,omitempty"`
	// Targets holds one result per target, in the order asked for.
	Targets []TargetResult `json:"targets"`
}

// Failed reports whether any target fell short of a strict expectation.
func (r *Result) Failed() bool {
	for i := range r.Targets {
		if r.Targets[i].Failed() {
			return true
		}
	}
	return false
}

// Errored reports whether racelab could not run some target.
func (r *Result) Errored() bool {
	for i := range r.Targets {
		if r.Targets[i].Error != "" {
			return true
		}
	}
	return false
}
