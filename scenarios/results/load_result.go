package results

import (
	"fmt"
	"slices"
	"strings"
	"time"
)

// LoadSchemaVersion names the shape of a serialized LoadResult. A load's
// result is not a run's: it has no trials, and its figures are rates and
// latencies, so it has a schema of its own. Bump it whenever a field
// changes meaning or goes away; adding a field keeps it.
const LoadSchemaVersion = "racelab/load/v1"

// LoadResult is a load on one or more targets and its verdicts.
type LoadResult struct {
	Schema string `json:"schema"`
	// RunID and RunIDs are as a Result's: the load's own id, and in a
	// listing of several loads (MergeLoads), theirs.
	RunID    string    `json:"run_id,omitempty"`
	RunIDs   []string  `json:"run_ids,omitempty"`
	Scenario string    `json:"scenario"`
	Rule     string    `json:"rule"`
	Model    LoadModel `json:"model"`
	// Schedule is the open model's arrivals; Concurrency the closed
	// model's workers.
	Schedule    *LoadSchedule `json:"schedule,omitempty"`
	Concurrency int           `json:"concurrency,omitempty"`
	MaxInFlight int           `json:"max_in_flight,omitempty"`
	// Duration is how long the load was asked to last; Requests how many
	// requests it was asked to send (0: as many as the duration allows).
	Duration time.Duration `json:"duration_ns"`
	Requests int64         `json:"requests,omitempty"`
	Keys     int           `json:"keys"`
	KeyDist  string        `json:"key_dist"`
	Timeout  time.Duration `json:"timeout_ns"`
	Seed     int64         `json:"seed"`
	// Thresholds are the conditions asked, as written; each target has
	// its own judgement of them.
	Thresholds []string `json:"thresholds,omitempty"`
	// Uncounted says the load played a race file that declares no
	// counted:, so its counts (counted, lost, over) mean nothing and a
	// report shows none; the rule still judges each key.
	Uncounted   bool         `json:"uncounted,omitempty"`
	Targets     []LoadTarget `json:"targets"`
	Interrupted bool         `json:"interrupted,omitempty"`
	// Sharded says the load was played by several shards and merged
	// (VerifyLoad); nil for a load played by one process.
	Sharded *ShardOrigin `json:"sharded,omitempty"`
}

// LoadSchedule is an open load's arrivals: from Start (per second),
// through each stage's ramp.
type LoadSchedule struct {
	Start   float64     `json:"start_rate"`
	Stages  []LoadStage `json:"stages"`
	Spacing string      `json:"spacing"`
}

// LoadStage ramps to Rate (per second) over Duration.
type LoadStage struct {
	Duration time.Duration `json:"duration_ns"`
	Rate     float64       `json:"rate"`
}

// LoadTarget is what one target did under the load.
type LoadTarget struct {
	// Name is what the user named the target (-t NAME=SPEC), as in a
	// TargetResult.
	Name      string      `json:"name,omitempty"`
	Target    string      `json:"target"`
	Spec      string      `json:"spec"`
	Guarantee string      `json:"guarantee,omitempty"`
	Expect    Expectation `json:"expect"`
	Strict    bool        `json:"strict"`
	// Error is why the target could not be loaded or read back.
	Error string `json:"error,omitempty"`

	// Elapsed is from the start to the last answer; Sending from the
	// start to the last request sent, the span the sent rate is over.
	Elapsed time.Duration `json:"elapsed_ns"`
	Sending time.Duration `json:"sending_ns"`
	// Sent counts the requests sent; Answered those answered within the
	// contract; Allowed and Refused what they were told; Errors the
	// failures, arrivals dropped included.
	Sent     int64 `json:"sent"`
	Answered int64 `json:"answered"`
	Allowed  int64 `json:"allowed"`
	Refused  int64 `json:"refused"`
	Errors   int64 `json:"errors"`
	// Late counts the open model's arrivals sent more than LateAfter
	// behind their instant; Dropped those never sent (see loadRun.open).
	Late    int64 `json:"late,omitempty"`
	Dropped int64 `json:"dropped,omitempty"`
	// ErrorKinds sorts the failures, most common first.
	ErrorKinds []ErrorCount `json:"error_kinds,omitempty"`
	// StatusCodes counts a service's answers by HTTP status, failures
	// with a status included (a 503); requests that got no HTTP answer
	// are the rest of Sent. Empty for a store that is not a service.
	StatusCodes map[int]int64 `json:"status_codes,omitempty"`
	// WarmUp is how a service's connections were opened before the
	// load; nil for a store that is not a service.
	WarmUp *WarmUp `json:"warm_up,omitempty"`
	// Latency is over the answered requests, from each one's intended
	// instant in the open model (so waiting to be sent counts), from
	// its sending in the closed one.
	Latency Latency `json:"latency"`
	// Histogram is the whole latency histogram in HdrHistogram's
	// compressed base64 form (microseconds); Buckets the same folded
	// into doubling bars, for drawing.
	Histogram string   `json:"histogram,omitempty"`
	Buckets   []Bucket `json:"buckets,omitempty"`
	// Series is the load second by second.
	Series []Second `json:"series,omitempty"`
	// Samples are requests one by one, in the order they were due: every
	// request, or a uniform sample of them past the number the load was
	// asked to keep (none unless asked), for plotting each request as
	// vegeta and k6 users do.
	Samples []LoadSample `json:"samples,omitempty"`

	// Counted sums what the store holds over every key; Keys judges each
	// key that was sent a request as a trial of the story's rule, with
	// the story's own Judge; WorstKey is the key furthest from the rule.
	Counted  int64      `json:"counted"`
	Keys     Tally      `json:"keys"`
	WorstKey KeyAccount `json:"worst_key"`
	// Thresholds is each asked threshold checked on this target.
	Thresholds []thresholdResult `json:"thresholds,omitempty"`
	// KeyCounts is, in one shard's part of a sharded load, what each key's
	// requests were told (keys never sent a request left out), for the
	// merge to sum per key before it judges; empty otherwise.
	KeyCounts []KeyCount `json:"key_counts,omitempty"`
}

// LoadSample is one request of a load, as the load's meter sums it and
// as LoadTarget.Samples keeps it.
type LoadSample struct {
	// At is when the request was due, from the start of the load; Latency
	// from then to its answer, 0 for a request that failed.
	At      time.Duration `json:"at_ns"`
	Latency time.Duration `json:"latency_ns,omitempty"`
	// Key numbers the request's key among the load's, from 0.
	Key     int     `json:"key"`
	Outcome Outcome `json:"outcome"`
	// Status is the HTTP status answered, 0 for none; Error the kind of
	// failure of a failed request.
	Status int    `json:"status,omitempty"`
	Error  string `json:"error,omitempty"`
}

// KeyAccount is one key's figures and what they came to.
type KeyAccount struct {
	Key     string `json:"key"`
	Allowed int64  `json:"allowed"`
	Refused int64  `json:"refused"`
	Errors  int64  `json:"errors"`
	Counted int64  `json:"counted"`
	Lost    int64  `json:"lost"`
	Over    int64  `json:"over"`
	Why     string `json:"why"`
	// Severity is a race file's broken key's (Trial.Severity).
	Severity float64 `json:"severity,omitempty"`
}

// Throughput is answers a second over the load.
func (t *LoadTarget) Throughput() float64 {
	if t.Elapsed <= 0 {
		return 0
	}
	return float64(t.Answered) / t.Elapsed.Seconds()
}

// SentRate is requests sent a second: the rate the open model achieved.
func (t *LoadTarget) SentRate() float64 {
	span := t.Sending
	if span <= 0 {
		span = t.Elapsed
	}
	if span <= 0 {
		return 0
	}
	return float64(t.Sent) / span.Seconds()
}

// rule is the target seen as a run's TargetResult, one key a trial, so
// that a load's verdict is decided by the very code that decides a run's.
func (t *LoadTarget) rule() *TargetResult {
	tally := t.Keys
	b := tally.Bound(DefaultConfidence, 0)
	return &TargetResult{Name: t.Name, Target: t.Target, Spec: t.Spec, Expect: t.Expect, Strict: t.Strict, Error: t.Error, Tally: &tally, Bound: &b}
}

// Verdict is the rule's verdict over the keys, as TargetResult.Verdict
// says it of trials: holds, broken, inconclusive, error, or "no keys".
func (t *LoadTarget) Verdict() string {
	v := t.rule().Verdict()
	if v == "no trials" {
		return "no keys"
	}
	return v
}

// ThresholdsMissed counts the thresholds the target did not meet.
func (t *LoadTarget) ThresholdsMissed() int {
	n := 0
	for _, r := range t.Thresholds {
		if !r.Passed {
			n++
		}
	}
	return n
}

// Labels names each target for a report, as Labels does for a run.
func (r *LoadResult) Labels() []string {
	trs := make([]TargetResult, len(r.Targets))
	for i, t := range r.Targets {
		trs[i] = TargetResult{Name: t.Name, Target: t.Target, Spec: t.Spec}
	}
	return Labels(trs)
}

// Shortfalls lists every target that let the load down, as
// Result.Shortfalls does for a run: rule breaks and missed thresholds
// first (exit 3), then targets that could not be loaded or judged (exit 1).
func (r *LoadResult) Shortfalls() []Shortfall {
	var rule, other []Shortfall
	labels := r.Labels()
	for i := range r.Targets {
		t := &r.Targets[i]
		tr := t.rule()
		s := t.Keys
		switch {
		case t.Error != "":
			other = append(other, Shortfall{ErrorShortfall, labels[i], prefixed(labels[i], t.Error)})
			continue
		case tr.Failed():
			rule = append(rule, Shortfall{RuleShortfall, labels[i], loadRuleWhy(t, labels[i])})
		case t.Strict && tr.Inconclusive():
			why := fmt.Sprintf(" (%d failed requests; first: %s)", t.Errors, firstErrorOf(t))
			if len(s.Causes) > 0 { // a race file's keys say why
				why = ": " + strings.Join(s.Causes.Lines(), "; ")
			}
			other = append(other, Shortfall{InconclusiveShortfall, labels[i], fmt.Sprintf(
				"%s: inconclusive: %d of %d keys proved nothing%s; a verdict needs at most %s of them",
				labels[i], s.Inconclusive, s.Trials, why, Percent(MaxInconclusive))})
		}
		for _, th := range t.Thresholds {
			if !th.Passed {
				rule = append(rule, Shortfall{ThresholdShortfall, labels[i], th.Why})
			}
		}
	}
	return append(rule, other...)
}

func firstErrorOf(t *LoadTarget) string {
	if len(t.ErrorKinds) > 0 {
		return t.ErrorKinds[0].First
	}
	return t.Keys.FirstError
}

// loadRuleWhy says in one line how a target's load fell short of its
// expectation.
func loadRuleWhy(t *LoadTarget, label string) string {
	s := t.Keys
	switch {
	case s.Broken > 0:
		return fmt.Sprintf("%s: the rule broke on %d of %d keys (%d lost, %d over); worst: %s",
			label, s.Broken, s.Trials, s.Lost, s.Over, t.WorstKey.Why)
	case t.Expect == ExpectBreak:
		return fmt.Sprintf("%s: the race did not show on any of %d keys", label, s.Trials)
	default:
		return label + ": the rule was not shown to hold"
	}
}

// Failed reports whether any target fell short of a strict expectation
// or missed a threshold.
func (r *LoadResult) Failed() bool {
	return slices.ContainsFunc(r.Shortfalls(), func(s Shortfall) bool {
		return s.Kind == RuleShortfall || s.Kind == ThresholdShortfall
	})
}

// MergeLoads puts saved load results together for one report: loads of
// the same scenario, model, key count and thresholds become one result whose targets
// are listed in order; a target found in two of them keeps both, each
// named by its spec. Loads that differ are kept apart.
func MergeLoads(rs []*LoadResult) []*LoadResult {
	var out []*LoadResult
	for _, r := range rs {
		if r == nil {
			continue
		}
		// Loads with other thresholds stay apart: each target is judged
		// on its load's list, and a merged list would not be theirs.
		i := slices.IndexFunc(out, func(o *LoadResult) bool {
			return o.Scenario == r.Scenario && o.Model == r.Model && o.Keys == r.Keys && slices.Equal(o.Thresholds, r.Thresholds)
		})
		if i < 0 {
			c := *r
			c.Targets = slices.Clone(r.Targets)
			out = append(out, &c)
			continue
		}
		m := out[i]
		m.RunID, m.RunIDs = "", mergedIDs(runIDs(m.RunID, m.RunIDs), runIDs(r.RunID, r.RunIDs))
		m.Targets = append(m.Targets, r.Targets...)
		m.Interrupted = m.Interrupted || r.Interrupted
	}
	return out
}

// Check refuses a saved load result whose figures contradict each
// other or its verdicts: answers that are not the allowed plus the
// refused, keys that lost updates yet did not break, a threshold marked
// met that its own figure misses. A damaged or edited file is then an
// error, never a pass in someone's CI.
func (r *LoadResult) Check() error {
	if r.Keys < 0 || r.Duration < 0 || r.Concurrency < 0 {
		return fmt.Errorf("a negative key count, duration or concurrency")
	}
	labels := r.Labels()
	for i := range r.Targets {
		t := &r.Targets[i]
		k := t.Keys
		bad := func(format string, args ...any) error {
			return fmt.Errorf("target %s: "+format, append([]any{labels[i]}, args...)...)
		}
		switch {
		case t.Sent < 0 || t.Answered < 0 || t.Allowed < 0 || t.Refused < 0 || t.Errors < 0 || t.Late < 0 || t.Dropped < 0:
			return bad("a negative count")
		case t.Allowed+t.Refused != t.Answered:
			return bad("%d allowed and %d refused, yet %d answered", t.Allowed, t.Refused, t.Answered)
		case t.Answered > t.Sent:
			return bad("%d answered of %d sent", t.Answered, t.Sent)
		case k.Trials < 0 || k.Broken < 0 || k.Inconclusive < 0 || k.Broken+k.Inconclusive > k.Trials:
			return bad("%d broken and %d inconclusive keys of %d", k.Broken, k.Inconclusive, k.Trials)
		case k.Lost < 0 || k.Over < 0:
			return bad("negative lost or over counts")
		case (k.Lost > 0 || k.Over > 0) && k.Broken == 0:
			return bad("%d lost and %d over, yet no key broke", k.Lost, k.Over)
		case k.Trials > 0 && k.Allowed.Sum != t.Allowed:
			return bad("the keys were allowed %d requests, the load %d", k.Allowed.Sum, t.Allowed)
		case t.Latency.Count != t.Answered:
			return bad("%d latencies for %d answers", t.Latency.Count, t.Answered)
		case statusSum(t.StatusCodes) < 0 || statusSum(t.StatusCodes) > t.Sent:
			return bad("%d answers by status code of %d sent", statusSum(t.StatusCodes), t.Sent)
		}
		if err := r.checkThresholdList(t); err != nil {
			return bad("%v", err)
		}
		for _, th := range t.Thresholds {
			parsed, err := ParseThreshold(th.Expr)
			if err != nil {
				return bad("threshold %q cannot be read", th.Expr)
			}
			if again := parsed.Check(t, labels[i]); again.Passed != th.Passed {
				return bad("threshold %s is marked passed=%t, but its figure says %t (%s)", th.Expr, th.Passed, again.Passed, again.Actual)
			}
		}
	}
	return nil
}

// statusSum counts the answers of every status; -1 when a count is
// negative, as none can be.
func statusSum(codes map[int]int64) int64 {
	var n int64
	for _, c := range codes {
		if c < 0 {
			return -1
		}
		n += c
	}
	return n
}

// WarmUp is how the connections to a service were opened before a load:
// how many were asked for, how many were warmed, in how long, and why it
// stopped short. Fewer warmed than asked is a figure, not an error: the
// rest opened as the load needed them.
type WarmUp struct {
	Connections int           `json:"connections"`
	Warmed      int           `json:"warmed"`
	Took        time.Duration `json:"took_ns"`
	Stopped     string        `json:"stopped,omitempty"`
}
