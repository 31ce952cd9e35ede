package results

import (
	"cmp"
	"fmt"
	"slices"
	"strings"
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
	Errored Outcome = "error"   // the target failed: timeout, refused connection, bad answer
)

// Clock is the time a target's trials ran in.
type Clock string

// The clocks.
const (
	// ClockVirtual: a simulated store in virtual time; its instants are the
	// simulation's, and a release spread of 0 is exact.
	ClockVirtual Clock = "virtual"
	// ClockReal: the real clock; instants are measured.
	ClockReal Clock = "real"
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
	// Answer says in the story's words what the request was told: "3
	// views", "granted, count 5", "409, taken" (see AnswerWords).
	Answer string `json:"answer,omitempty"`
	// Error is the target's failure in words, when Outcome is Errored.
	Error string `json:"error,omitempty"`
	// Early says the answer came before the request was released (staged
	// targets only): the burst was not synchronized.
	Early bool `json:"early,omitempty"`
	// Figures are the story's own figures of the request, by name: the
	// window a rate limiter counted it in (see figures.go).
	Figures map[string]int64 `json:"figures,omitempty"`
	// Steps are the store operations the request made, when the run was
	// traced (Plan.Trace) and the store records them (kv, actor).
	Steps []Step `json:"steps,omitempty"`
}

// Step is one store operation a request made: what it read, what it wrote,
// when its write landed.
type Step struct {
	// At is the instant, relative to the release, on the store's clock.
	At time.Duration `json:"at_ns"`
	// Op is the operation: read, write, write-lands, fetch or refuse.
	Op    string `json:"op"`
	Key   string `json:"key,omitempty"`
	Value string `json:"value,omitempty"`
	Note  string `json:"note,omitempty"`
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
	// Damage says in the story's words how far the trial strayed ("4
	// oversold", "9 hits lost"), empty when it did not.
	Damage string `json:"damage,omitempty"`
	// Broken says the hard rule did not hold; Why says how, in plain words.
	Broken bool   `json:"broken"`
	Why    string `json:"why,omitempty"`
	// Severity ranks a race file's broken trials (its severity:, by
	// default counted - allowed or 1): the worst trial is the highest.
	Severity float64 `json:"severity,omitempty"`
	// SoftBroken says the story's soft rule did not hold either (stories
	// with one: Result.Soft says it in words).
	SoftBroken bool `json:"soft_broken,omitempty"`
	// Figures are the story's own figures of the trial, by name: how many
	// requests each window admitted, how long after a cancel the last
	// original was granted (see figures.go and SetFigure).
	Figures map[string][]int64 `json:"figures,omitempty"`
	// ReleaseSpread is the max minus the min of the instants the requests
	// actually started: how tightly the burst was released.
	ReleaseSpread time.Duration `json:"release_spread_ns"`
	// ArrivalSpread is the same spread as the server saw the requests
	// arrive, when the server reports arrivals (racelab serve does).
	ArrivalSpread time.Duration `json:"arrival_spread_ns,omitempty"`
	// Unsynchronized says some answer came before its request was
	// released: the trial is reported but cannot count as proof.
	Unsynchronized bool `json:"unsynchronized,omitempty"`
	// NotSimultaneous says the burst's release spread was wider than the
	// bound the run allowed (Result.MaxSpread): requests released seconds
	// apart do not race, so the trial cannot prove that a store holds.
	NotSimultaneous bool `json:"not_simultaneous,omitempty"`
	// History is the verdict of the linearizability check of the trial's
	// requests and the read that followed them (see checkHistory); empty
	// when the history was not checked. A history that is not
	// linearizable breaks the trial. HistoryWhy says why it is not, or
	// how the check ran out.
	History    HistoryVerdict `json:"history,omitempty"`
	HistoryWhy string         `json:"history_why,omitempty"`
	// Readback is what a race file's rule judges besides the counts (its
	// answers and the bodies read back), kept so that a saved trial is
	// judged again by the same rule; nil for the built-in stories.
	Readback *Readback `json:"readback,omitempty"`
}

// Count sets Allowed, Refused, Errors and Unsynchronized from the trial's
// requests.
func (t *Trial) Count() {
	t.Allowed, t.Refused, t.Errors, t.Unsynchronized = 0, 0, 0, false
	for _, r := range t.Requests {
		t.Unsynchronized = t.Unsynchronized || r.Early
		switch r.Outcome {
		case Allowed:
			t.Allowed++
		case Refused:
			t.Refused++
		default:
			t.Errors++
		}
	}
}

// Inconclusive reports whether the trial proves nothing either way: it did
// not break, but some request failed or answered outside the contract
// (whether it took effect is unknown), an answer came before the release,
// the history check ran out of time, or a race file's rule could not be
// judged on what was read back. A trial whose counts prove a break is
// broken whatever else went wrong: errors never hide a proven break.
func (t *Trial) Inconclusive() bool {
	return !t.Broken && (t.Errors > 0 || t.Unsynchronized || t.NotSimultaneous || t.History == HistoryUnknown || t.Readback.Failed())
}

// SoftInconclusive reports whether the trial proves nothing about the
// story's soft rule: it did not break it, and something that makes a hard
// verdict inconclusive happened, even if the hard rule's counts proved a
// break (a request that failed may have taken effect and pushed the trial
// over the soft rule too).
func (t *Trial) SoftInconclusive() bool {
	return !t.SoftBroken && (t.Errors > 0 || t.Unsynchronized || t.NotSimultaneous || t.History == HistoryUnknown)
}

// HistoryVerdict is what the linearizability check of one trial found.
type HistoryVerdict string

// The history verdicts.
const (
	// Linearizable: some one-at-a-time order of the requests, each placed
	// between its invoke and return instants, explains every answer and
	// the count read back.
	Linearizable HistoryVerdict = "linearizable"
	// NotLinearizable: no such order exists; the store let requests
	// overlap in a way an atomic store cannot.
	NotLinearizable HistoryVerdict = "not linearizable"
	// HistoryUnknown: the check ran out of time before deciding.
	HistoryUnknown HistoryVerdict = "unknown"
)

// Bound is what a target's trials prove about the probability that one
// burst breaks the rule: with Level confidence it is at most Upper. Only
// conclusive trials count (Trials of them, Broken of which broke); the
// Inconclusive ones are left out.
type Bound struct {
	// Level is the confidence level, such as 0.95.
	Level float64 `json:"level"`
	// Trials and Broken count the conclusive trials and those that broke;
	// Inconclusive the trials left out.
	Trials       int `json:"trials"`
	Broken       int `json:"broken"`
	Inconclusive int `json:"inconclusive,omitempty"`
	// Upper is the exact one-sided (Clopper–Pearson) upper bound on the
	// probability of breaking.
	Upper float64 `json:"upper"`
	// MaxRate is the bound the run was asked to prove (--max-rate), 0 if
	// none was asked.
	MaxRate float64 `json:"max_rate,omitempty"`
}

// Met reports whether the bound proves what was asked: no counted trial
// broke, and Upper is at most MaxRate. When nothing was asked it is true.
func (b Bound) Met() bool {
	return b.MaxRate <= 0 || b.Broken == 0 && b.Trials > 0 && b.Upper <= b.MaxRate
}

// TargetResult is every trial of one scenario against one target.
type TargetResult struct {
	// Name is what the user named the target (-t NAME=SPEC), shown
	// instead of its store or URL wherever the target is named.
	Name string `json:"name,omitempty"`
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
	// Clock is "virtual" for a simulated store run in virtual time (its
	// instants are the simulation's, and a release spread of 0 is exact),
	// "real" otherwise.
	Clock Clock `json:"clock,omitempty"`
	// Trials holds the completed trials in order, or, when Tally is set,
	// a sample of them: the first ones, then the first broken, the first
	// inconclusive and the worst (see Keep).
	Trials []Trial `json:"trials"`
	// Tally sums every trial run when Trials is only a sample; nil when
	// Trials holds them all (Summary computes it then).
	Tally *Tally `json:"tally,omitempty"`
	// Error is set when racelab could not run the target at all (it could
	// not be opened, or the store could not be read back).
	Error string `json:"error,omitempty"`
	// Bound is what the trials prove about the rate of breaking; Run sets
	// it, and Evidence computes it for results that lack it.
	Bound *Bound `json:"bound,omitempty"`
	// Batch is what reading the trials' keys in batches found, for a
	// story and a store with a batch read (ten-hits-one-view over HTTP);
	// nil when there was none.
	Batch *BatchCheck `json:"batch,omitempty"`
}

// Label is how the target is named on its own: the name the user gave
// it, or its store (or URL).
func (t *TargetResult) Label() string {
	if t.Name != "" {
		return t.Name
	}
	return t.Target
}

// Summary is what every trial of the target came to: the recorded Tally,
// or one summed from Trials.
func (t *TargetResult) Summary() Tally {
	if t.Tally != nil {
		return *t.Tally
	}
	return TallyOf(t.Trials)
}

// Evidence is the target's bound on the rate of breaking: the one
// recorded, or else one computed from the trials at DefaultConfidence
// (results saved before bounds were recorded, or built by hand).
func (t *TargetResult) Evidence() Bound {
	if t.Bound != nil {
		return *t.Bound
	}
	s := t.Summary()
	return s.Bound(DefaultConfidence, 0)
}

// Proven reports whether the target met the bound asked of it; true when
// none was asked.
func (t *TargetResult) Proven() bool { return t.Evidence().Met() }

// Broken counts the trials in which the rule broke.
func (t *TargetResult) Broken() int { s := t.Summary(); return s.Broken }

// Inconclusive reports whether the target's trials give no verdict: none
// broke, and none proved anything or too many proved nothing (more than
// MaxInconclusive of them).
func (t *TargetResult) Inconclusive() bool {
	s := t.Summary()
	return t.Error == "" && s.Broken == 0 && s.TooInconclusive()
}

// Verdict is "holds" when the rule held in every trial, "broken" when it
// broke in some, "inconclusive" when too many trials proved nothing,
// "unproven" when it held but not often enough for the bound asked, and
// "error" when the target could not be run.
func (t *TargetResult) Verdict() string {
	s := t.Summary()
	switch {
	case t.Error != "":
		return "error"
	case s.Trials == 0:
		return "no trials"
	case s.Broken > 0:
		return "broken"
	case s.TooInconclusive():
		return "inconclusive"
	case !t.Proven():
		return "unproven" // held, but not in enough conclusive trials
	default:
		return "holds"
	}
}

// Failed reports whether the target fell short of a strict expectation
// with conclusive proof: it broke a rule it had to keep (or held, or was
// not proven, where a bound was asked), or it never showed a race it had
// to show. A target that could not be run, or whose trials were too
// inconclusive for a verdict, has not failed the rule: Shortfalls reports
// it as racelab unable to do its job.
func (t *TargetResult) Failed() bool {
	s := t.Summary()
	switch {
	case t.Error != "" || !t.Strict || s.Trials == 0:
		return false
	case t.Expect == ExpectHold && s.Broken > 0:
		return true
	case s.TooInconclusive():
		return false
	case t.Expect == ExpectHold:
		// With --max-rate, holding is not enough: it must be proven.
		return !t.Proven()
	default:
		return s.Broken == 0
	}
}

// CountedDistribution is the minimum, median and maximum of Counted over the
// trials; ok is false when there are none.
func (t *TargetResult) CountedDistribution() (lo, median, hi int64, ok bool) {
	s := t.Summary()
	if s.Trials == 0 {
		return 0, 0, 0, false
	}
	return s.CountedMin, s.CountedMedian(), s.CountedMax, true
}

// Result is one run of a scenario against its targets.
type Result struct {
	// Schema is SchemaVersion, so saved results say what they are.
	Schema string `json:"schema"`
	// RunID is the run's own id (NewRunID); RunIDs, in a result merged
	// from others (Merge), theirs. Both are empty in results saved
	// before runs had ids. Distinct refuses results that share one.
	RunID  string   `json:"run_id,omitempty"`
	RunIDs []string `json:"run_ids,omitempty"`
	// Scenario is the story's name; Rule its hard rule in words.
	Scenario string `json:"scenario"`
	Rule     string `json:"rule"`
	// Requests is N, the requests per burst; Trials the trials asked for.
	Requests int `json:"requests"`
	Trials   int `json:"trials"`
	// Seed decides every random choice of the simulated stores. Seeds
	// lists every seed when the result merges several runs (see Merge).
	Seed  int64   `json:"seed"`
	Seeds []int64 `json:"seeds,omitempty"`
	// Confidence is the level of every target's Bound. MaxRate and
	// MaxTrials are set when the run was adaptive (Evidence.MaxRate).
	Confidence float64 `json:"confidence,omitempty"`
	MaxRate    float64 `json:"max_rate,omitempty"`
	MaxTrials  int     `json:"max_trials,omitempty"`
	// Script, when set, describes a trial that is a scripted story rather
	// than a burst (the payment part of five-checkouts).
	Script string `json:"script,omitempty"`
	// Settings are the story's own settings (--stock, --limit, --rate, …),
	// when the story has any or they differ from its defaults.
	Settings *Settings `json:"settings,omitempty"`
	// Stream, when set, says the trials were streams of arrivals rather
	// than bursts: "Poisson arrivals at 20/s for 1m0s"; Requests is then
	// the arrivals expected per trial, and each trial has its own count.
	Stream string `json:"stream,omitempty"`
	// Soft is the story's soft rule in words, when it has one: judged
	// beside the hard rule, never instead of it.
	Soft string `json:"soft,omitempty"`
	// Figures say how a report says the story's own trial figures, when
	// it has any.
	Figures []Figure `json:"figures,omitempty"`
	// Sequential says the requests of a trial were fired one after another,
	// Gap apart, rather than all at once.
	Sequential bool          `json:"sequential,omitempty"`
	Gap        time.Duration `json:"gap_ns,omitempty"`
	// KeyChars is what the keys were made of (--key-chars); empty for
	// plain ASCII.
	KeyChars KeyChars `json:"key_chars,omitempty"`
	// MaxSpread is the widest release spread a burst could have and still
	// prove anything (engine.Evidence.MaxSpread); a trial past it is
	// NotSimultaneous. Zero in results of sequential or stream runs, and
	// in results saved before it was recorded.
	MaxSpread time.Duration `json:"max_spread_ns,omitempty"`
	// Interrupted says the run was cancelled and the result is partial.
	Interrupted bool `json:"interrupted,omitempty"`
	// Targets holds one result per target, in the order asked for.
	Targets []TargetResult `json:"targets"`
	// Sharded says the run was played by several shards and merged
	// (VerifyRun); nil for a run played by one process.
	Sharded *ShardOrigin `json:"sharded,omitempty"`
}

// ShortfallKind says how a target let a run down, in the order a reader
// wants to know: a broken rule first, then what could not be judged.
type ShortfallKind int

// The kinds of shortfall.
const (
	// RuleShortfall: the target fell short of a strict expectation with
	// proof (Failed): exit 3.
	RuleShortfall ShortfallKind = iota
	// ErrorShortfall: racelab could not run the target: exit 1.
	ErrorShortfall
	// InconclusiveShortfall: a target with a strict expectation ran, but
	// too few of its trials proved anything for a verdict: exit 1.
	InconclusiveShortfall
	// ThresholdShortfall: a load missed a threshold it was given
	// (--threshold 'p99<250ms'): exit 3, like a rule.
	ThresholdShortfall
)

// Shortfall is one target that let the run down, and why, in one line.
type Shortfall struct {
	Kind   ShortfallKind
	Target string // the target's label: its name, or its spec when two share a name
	Why    string
}

// Shortfalls lists every target that let the run down, rule breaks first:
// the one verdict behind the exit code, the table's capitals, JUnit's
// failures and Markdown's outcome line.
func (r *Result) Shortfalls() []Shortfall {
	var rule, other []Shortfall
	labels := Labels(r.Targets)
	for i := range r.Targets {
		t := &r.Targets[i]
		s := t.Summary()
		switch {
		case t.Error != "":
			other = append(other, Shortfall{ErrorShortfall, labels[i], prefixed(labels[i], t.Error)})
		case t.Failed():
			rule = append(rule, Shortfall{RuleShortfall, labels[i], ruleWhy(t, labels[i], &s)})
		case t.Strict && t.Inconclusive():
			other = append(other, Shortfall{InconclusiveShortfall, labels[i], s.InconclusiveWhy(labels[i])})
		}
		// Whatever the bursts proved, a batch read that answers other
		// totals than the single reads is a finding of its own.
		if t.Batch.Found() {
			rule = append(rule, Shortfall{RuleShortfall, labels[i], t.Batch.Why(labels[i])})
		}
	}
	return append(rule, other...)
}

// ruleWhy says in one line how a target fell short of its expectation.
func ruleWhy(t *TargetResult, label string, s *Tally) string {
	switch {
	case s.Broken > 0 && s.FirstWhy != "":
		return prefixed(label, s.FirstWhy)
	case s.Broken > 0:
		return label + ": the rule broke"
	case t.Expect == ExpectBreak:
		return fmt.Sprintf("%s: the race did not show in %d trials", label, s.Trials)
	default:
		b := t.Evidence()
		return fmt.Sprintf("%s: held in %d conclusive trials, not enough to prove a rate below %s", label, b.Trials, Percent(b.MaxRate))
	}
}

// InconclusiveWhy says why the trials of the target labelled label gave no
// verdict.
func (s *Tally) InconclusiveWhy(label string) string {
	why := fmt.Sprintf("%s: inconclusive: %d of %d trials proved nothing", label, s.Inconclusive, s.Trials)
	if len(s.Causes) > 0 {
		why += ": " + strings.Join(s.Causes.Lines(), "; ")
	} else if s.FirstError != "" {
		why += fmt.Sprintf(" (%d failed requests; first: %s)", s.Errors.Sum, s.FirstError)
	} else if s.HistoryUnknown > 0 {
		// In words, not a flag: results lies below the command line,
		// and the report's note on the history names the setting.
		why += " (the history check ran out of time; give it more time)"
	} else if s.Unsynchronized > 0 {
		why += " (answers came before the release)"
	} else if s.NotSimultaneous > 0 {
		// Two figures are enough to say how far from one instant it was.
		spread := s.MaxReleaseSpread.Round(time.Millisecond)
		if spread >= time.Second {
			spread = spread.Round(100 * time.Millisecond)
		}
		why += fmt.Sprintf(" (burst not simultaneous (spread %s))", spread)
	}
	return why + fmt.Sprintf("; a verdict needs at most %s of them", Percent(MaxInconclusive))
}

// Labels names each target for a report: its name, or its full spec when
// two targets share a name (kv and kv?cache-ttl=30s).
func Labels(ts []TargetResult) []string {
	seen := make(map[string]int, len(ts))
	for _, t := range ts {
		seen[t.Label()]++
	}
	l := make([]string, len(ts))
	for i, t := range ts {
		l[i] = t.Label()
		if t.Name == "" && seen[t.Target] > 1 && t.Spec != "" {
			l[i] = t.Spec
		}
	}
	return l
}

// prefixed puts "label: " before text unless the text already names it, as
// the engine's own messages do ("kv: read back slug-…: …").
func prefixed(label, text string) string {
	if strings.HasPrefix(text, label+": ") {
		return text
	}
	return label + ": " + text
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

// Merge combines results, such as one run made on several machines, into
// as few as it can, so that they read as one report:
//
//   - results of the same scenario at the same N become one. A target
//     that appears in several of them (the same spec and expectation) gets
//     their trials one after the other, renumbered; the others are added
//     in order of first appearance. Its bound is recomputed over all its
//     trials, at the level of the first result;
//   - results of different scenarios, or of one scenario at a different
//     N, stay apart, each in the place of its first appearance: a figure
//     of 10 requests and one of 50 do not add up.
//
// The merged result records every seed, is interrupted if any part was,
// and asks for the trials of its most-trialled target. A single result is
// returned as it is; Merge never changes its arguments.
func Merge(rs []*Result) []*Result {
	type group struct{ parts []*Result }
	var order []string
	groups := map[string]*group{}
	for _, r := range rs {
		if r == nil {
			continue
		}
		k := fmt.Sprintf("%s\x00%d", r.Scenario, r.Requests)
		g, ok := groups[k]
		if !ok {
			g = &group{}
			groups[k] = g
			order = append(order, k)
		}
		g.parts = append(g.parts, r)
	}
	out := make([]*Result, 0, len(order))
	for _, k := range order {
		g := groups[k]
		if len(g.parts) == 1 {
			out = append(out, g.parts[0])
			continue
		}
		out = append(out, mergeParts(g.parts))
	}
	return out
}

// mergeParts merges results of one scenario at one N.
func mergeParts(parts []*Result) *Result {
	first := parts[0]
	m := &Result{
		Schema:   SchemaVersion,
		Scenario: first.Scenario,
		Rule:     first.Rule,
		Requests: first.Requests,
		Seed:     first.Seed,
	}
	for _, r := range parts {
		m.RunIDs = mergedIDs(m.RunIDs, runIDs(r.RunID, r.RunIDs))
	}
	type slot struct {
		tr      *TargetResult
		tally   Tally
		sampled bool
		asked   int
		level   float64
		maxRate float64
	}
	var order []string
	slots := map[string]*slot{}
	for _, r := range parts {
		m.Interrupted = m.Interrupted || r.Interrupted
		m.Confidence = cmp.Or(m.Confidence, r.Confidence)
		m.MaxRate = cmp.Or(m.MaxRate, r.MaxRate)
		m.MaxTrials = max(m.MaxTrials, r.MaxTrials)
		m.Rule = cmp.Or(m.Rule, r.Rule)
		if m.Figures == nil {
			m.Figures = r.Figures
		}
		for _, s := range append([]int64{r.Seed}, r.Seeds...) {
			if !slices.Contains(m.Seeds, s) {
				m.Seeds = append(m.Seeds, s)
			}
		}
		// The i-th target of a spec in one result meets the i-th of the
		// same spec in the others, so that `-t kv -t kv` stays two rows.
		seen := map[string]int{}
		for i := range r.Targets {
			t := &r.Targets[i]
			base := t.Name + "\x00" + t.Spec + "\x00" + string(t.Expect)
			k := fmt.Sprintf("%s\x00%d", base, seen[base])
			seen[base]++
			s, ok := slots[k]
			if !ok {
				c := *t
				c.Trials, c.Bound, c.Tally, c.Error = nil, nil, nil, ""
				s = &slot{tr: &c, level: cmp.Or(r.Confidence, DefaultConfidence), maxRate: r.MaxRate}
				if t.Bound != nil {
					s.level, s.maxRate = t.Bound.Level, t.Bound.MaxRate
				}
				slots[k] = s
				order = append(order, k)
			}
			s.asked += r.Trials
			s.tr.Strict = s.tr.Strict || t.Strict
			if t.Error != "" && !strings.Contains(s.tr.Error, t.Error) {
				s.tr.Error = strings.TrimPrefix(s.tr.Error+"; "+t.Error, "; ")
			}
			// Trials are renumbered after the ones already merged, so
			// that a sample's gaps stay where they were.
			offset := s.tally.Trials
			for _, trial := range t.Trials {
				trial.Index += offset
				s.tr.Trials = append(s.tr.Trials, trial)
			}
			part := t.Summary()
			s.tally.Merge(&part)
			s.sampled = s.sampled || t.Tally != nil
		}
	}
	if len(m.Seeds) < 2 {
		m.Seeds = nil // one seed is said by Seed alone
	}
	for _, k := range order {
		s := slots[k]
		if s.sampled {
			s.tr.Tally = &s.tally
		}
		b := s.tally.Bound(s.level, s.maxRate)
		s.tr.Bound = &b
		m.Trials = max(m.Trials, s.asked)
		m.Targets = append(m.Targets, *s.tr)
	}
	return m
}

// SetDamage records how far the trial strayed in its story's words, as
// say puts them from its Over and Lost ("4 oversold", "9 hits lost"), or,
// where say is nil or says nothing, as "7 over, 11 lost"; "" when the
// trial did not stray.
func (t *Trial) SetDamage(say func(over, lost int64) string) {
	t.Damage = ""
	if say != nil {
		t.Damage = say(t.Over, t.Lost)
	}
	if t.Damage == "" {
		t.Damage = defaultDamage(t.Over, t.Lost)
	}
}

// defaultDamage is a trial's damage when its story says none: "7 over, 11
// lost", "" when it did not stray.
var defaultDamage = OverLost("%d over", "%d lost")

// OverLost is a story's damage words (Trial.SetDamage) that say the over
// and the lost counts each in a phrase of their own, the count in its %d,
// joined by a comma; a count of 0 is left out.
func OverLost(overWords, lostWords string) func(over, lost int64) string {
	return func(over, lost int64) string {
		var parts []string
		if over > 0 {
			parts = append(parts, fmt.Sprintf(overWords, over))
		}
		if lost > 0 {
			parts = append(parts, fmt.Sprintf(lostWords, lost))
		}
		return strings.Join(parts, ", ")
	}
}

// AnswerWords says what the request was told: in its story's words when
// the result recorded them, else as its outcome and value ("allowed 3"),
// and "error" when it failed.
func (r Request) AnswerWords() string {
	switch {
	case r.Outcome == Errored:
		return "error"
	case r.Answer != "":
		return r.Answer
	}
	return fmt.Sprintf("%s %d", r.Outcome, r.Value)
}
