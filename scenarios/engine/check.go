package engine

import (
	"cmp"
	"errors"
	"fmt"
	"maps"
	"math"
	"slices"
	"time"

	"github.com/racelab/racelab/internal/usage"
	"github.com/racelab/racelab/scenarios/results"
	"github.com/racelab/racelab/targets"
)

// recheckBudget bounds the history checks of one Check call in all: honest
// histories check in microseconds, and a document crafted to make each of
// its thousand trials run to the timeout must not hold `racelab report`
// for an hour. Histories past the budget are not checked again: a stored
// "linearizable" is then no longer proof and reads as unknown.
const recheckBudget = 10 * time.Second

// ErrInconsistent is wrapped by every error of Check: a saved result whose
// figures do not follow from its own request data.
var ErrInconsistent = errors.New("inconsistent result")

// Check makes a result read from outside (a saved file, another machine)
// trustworthy before anything is judged from it: it refuses values out of
// range, recomputes every kept trial's counts and verdict from its
// requests and what was counted (re-running the history check, bounded by
// historyTimeout), and checks the bound and, for a sampled result, the
// tally against them. The error wraps ErrInconsistent and names the first
// field that is wrong; a forged "broken": false is refused, never
// rendered as "holds".
//
// What a sample leaves out cannot be recomputed: a result saved without
// --keep-all is checked for agreeing with its sample, not proven whole.
//
// find looks the result's story up with the settings it ran with, so
// that its rule, model and judgement follow them.
func CheckWith(r *results.Result, find Finder, historyTimeout time.Duration) error {
	bad := func(field, format string, args ...any) error {
		return fmt.Errorf("%w: %s: %s", ErrInconsistent, field, fmt.Sprintf(format, args...))
	}
	deadline := time.Now().Add(recheckBudget)
	sc, err := find(r.Scenario, r.Settings)
	var unknown *targets.UnknownNameError
	switch {
	case errors.As(err, &unknown):
		return bad("scenario", "%q is not a story this racelab knows (%v)", r.Scenario, unknown.Known)
	case errors.Is(err, results.ErrCannotJudge):
		return err
	case err != nil:
		return bad("settings", "%v", err)
	case r.Requests < 1 || r.Requests > MaxRequests:
		return bad("requests", "%d; want 1 to %d", r.Requests, MaxRequests)
	case r.Trials < 0:
		return bad("trials", "%d is negative", r.Trials)
	case r.Confidence != 0 && !(r.Confidence > 0 && r.Confidence < 1):
		return bad("confidence", "%g; want a level between 0 and 1", r.Confidence)
	case !(r.MaxRate >= 0 && r.MaxRate < 1):
		return bad("max_rate", "%g; want a rate between 0 and 1", r.MaxRate)
	case r.MaxTrials < 0:
		return bad("max_trials", "%d is negative", r.MaxTrials)
	case r.MaxSpread < 0:
		return bad("max_spread_ns", "%d is negative", r.MaxSpread)
	case len(r.Targets) == 0:
		return bad("targets", "none; a result has one per target run")
	}
	if r.Figures == nil {
		// Saved before results declared their figures: the story says
		// them as it did then.
		r.Figures = sc.Figures
	}
	labels := results.Labels(r.Targets)
	for i := range r.Targets {
		t := &r.Targets[i]
		where := fmt.Sprintf("targets[%d]", i)
		switch {
		case t.Target == "":
			return bad(where+".target", "empty")
		case t.Expect != results.ExpectHold && t.Expect != results.ExpectBreak:
			return bad(where+".expect", "%q; want %q or %q", t.Expect, results.ExpectHold, results.ExpectBreak)
		case t.Expect == results.ExpectHold && !t.Strict:
			// Every run makes a target expected to hold strict; a result
			// saying otherwise would let a break pass.
			return bad(where+".strict", "false for a target expected to hold")
		case t.Clock != "" && t.Clock != results.ClockVirtual && t.Clock != results.ClockReal:
			return bad(where+".clock", "%q; want virtual or real", t.Clock)
		}
		last := -1
		for j := range t.Trials {
			tr := &t.Trials[j]
			at := fmt.Sprintf("%s.trials[%d]", where, j)
			if tr.Index <= last {
				return bad(at+".index", "%d after %d; trials are kept in the order they ran", tr.Index, last)
			}
			last = tr.Index
			if err := recheckTrial(sc, r.Requests, tr, labels[i], r.MaxSpread, min(historyTimeout, time.Until(deadline))); err != nil {
				return bad(at+"."+err.field, "%s", err.msg)
			}
		}
		if t.Tally != nil {
			if err := checkTally(t, r.Requests, sc != nil && sc.Stream != nil); err != nil {
				return bad(where+".tally."+err.field, "%s", err.msg)
			}
		}
		if t.Bound != nil {
			b := *t.Bound
			if !(b.Level > 0 && b.Level < 1) || !(b.MaxRate >= 0 && b.MaxRate < 1) {
				return bad(where+".bound", "level %g, max rate %g; want both between 0 and 1", b.Level, b.MaxRate)
			}
			s := t.Summary()
			want := s.Bound(b.Level, b.MaxRate)
			if b.Trials != want.Trials || b.Broken != want.Broken || b.Inconclusive != want.Inconclusive || math.Abs(b.Upper-want.Upper) > 1e-9 {
				return bad(where+".bound", "%d of %d trials broke, bound %g; the trials say %d of %d, bound %g",
					b.Broken, b.Trials, b.Upper, want.Broken, want.Trials, want.Upper)
			}
		}
	}
	if err := checkTrialCount(r); err != nil {
		return bad(err.field, "%s", err.msg)
	}
	return nil
}

// checkTrialCount refuses a result whose "trials", the count its heading
// states, its targets' trials do not bear out ("1000 trials per target"
// over targets that ran 5). A run gives every target the trials asked
// unless it was cut short (interrupted, or the target failed) or it was
// adaptive (--max-rate: from none to MaxTrials); a merge (Merge) asks
// the trials of its most-trialled target.
func checkTrialCount(r *results.Result) *fieldError {
	merged := len(r.RunIDs) > 0 || len(r.Seeds) > 0
	adaptive := r.MaxRate > 0
	most, failed := 0, false
	for i := range r.Targets {
		t := &r.Targets[i]
		n := t.Summary().Trials
		most, failed = max(most, n), failed || t.Error != ""
		at := fmt.Sprintf("targets[%d]", i)
		switch {
		case adaptive && !merged && n > max(r.Trials, r.MaxTrials):
			return &fieldError{at + ".trials", fmt.Sprintf("%d trials; the result allows at most %d", n, max(r.Trials, r.MaxTrials))}
		case !adaptive && n > r.Trials:
			return &fieldError{"trials", fmt.Sprintf("%d, but %s ran %d", r.Trials, at, n)}
		case !adaptive && !merged && !r.Interrupted && t.Error == "" && n != r.Trials:
			return &fieldError{"trials", fmt.Sprintf("%d, but %s ran %d and was neither interrupted nor failed", r.Trials, at, n)}
		}
	}
	if !adaptive && merged && !r.Interrupted && !failed && most != r.Trials {
		return &fieldError{"trials", fmt.Sprintf("%d, but the most-trialled target of this merge ran %d", r.Trials, most)}
	}
	return nil
}

// CheckOutcome refuses an outcome racelab never records for the story: one
// that is not allowed, refused or error, or a refusal of a request that
// cannot be refused (CanRefuse). Documents from outside are checked with
// it, so that an edited "refused" cannot hide a lost update.
func (sc *Scenario) CheckOutcome(o results.Outcome) error {
	switch {
	case o != results.Allowed && o != results.Refused && o != results.Errored:
		return fmt.Errorf("%q; want allowed, refused or error", o)
	case o == results.Refused && !sc.CanRefuse():
		return fmt.Errorf("refused; a %s request of %s is counted or fails, never refused", sc.Op, sc.Name)
	}
	return nil
}

// fieldError names the field of a trial or tally that is wrong.
type fieldError struct{ field, msg string }

// recheckTrial recomputes a trial's counts and verdict from its requests.
func recheckTrial(sc *Scenario, n int, t *results.Trial, target string, maxSpread, historyTimeout time.Duration) *fieldError {
	if len(t.Requests) != n && sc.Stream == nil { // a stream's arrivals vary by trial
		return &fieldError{"requests", fmt.Sprintf("%d requests; the result says %d per burst", len(t.Requests), n)}
	}
	for k, r := range t.Requests {
		if r.Index != k {
			return &fieldError{fmt.Sprintf("requests[%d].index", k), fmt.Sprintf("%d; want %d", r.Index, k)}
		}
		if err := sc.CheckOutcome(r.Outcome); err != nil {
			return &fieldError{fmt.Sprintf("requests[%d].outcome", k), err.Error()}
		}
	}
	c := *t
	c.Count()
	for _, f := range []struct {
		name      string
		got, want int
	}{{"allowed", t.Allowed, c.Allowed}, {"refused", t.Refused, c.Refused}, {"errors", t.Errors, c.Errors}} {
		if f.got != f.want {
			return &fieldError{f.name, fmt.Sprintf("%d; its requests say %d", f.got, f.want)}
		}
	}
	if t.Unsynchronized != c.Unsynchronized {
		return &fieldError{"unsynchronized", fmt.Sprintf("%v; its requests say %v", t.Unsynchronized, c.Unsynchronized)}
	}
	if maxSpread > 0 { // recorded since results bound the spread
		if spread := ReleaseSpread(t.Requests); t.ReleaseSpread != spread {
			return &fieldError{"release_spread_ns", fmt.Sprintf("%d; its requests were released over %d", t.ReleaseSpread, spread)}
		}
		if want := t.ReleaseSpread > maxSpread; t.NotSimultaneous != want {
			return &fieldError{"not_simultaneous", fmt.Sprintf("%v; a spread of %s against a bound of %s says %v", t.NotSimultaneous, t.ReleaseSpread, maxSpread, want)}
		}
	}
	c.Broken, c.Why, c.Lost, c.Over, c.SoftBroken, c.Figures = false, "", 0, 0, false, nil
	c.Severity = 0 // a race file's rank of a broken trial, which names the worst
	if sc.Scripted {
		sc.Judge(&c, target)
	} else {
		sc.Decide(&c, target)
		switch {
		case t.History == "":
		case historyTimeout > 0:
			RecordHistory(sc, &c, target, Evidence{HistoryTimeout: historyTimeout})
		case t.History == results.NotLinearizable:
			// Out of budget: a stored break is taken at its word, since
			// it only makes the verdict worse.
			c.Broken = true
		default:
			c.History = results.HistoryUnknown
		}
	}
	switch {
	case c.Broken != t.Broken:
		return &fieldError{"broken", fmt.Sprintf("%v; its requests and count (%d) say %v", t.Broken, t.Counted, c.Broken)}
	case c.Lost != t.Lost || c.Over != t.Over:
		return &fieldError{"lost", fmt.Sprintf("%d lost, %d over; its requests and count say %d, %d", t.Lost, t.Over, c.Lost, c.Over)}
	case c.Severity != t.Severity:
		return &fieldError{"severity", fmt.Sprintf("%v; its answers and readback say %v", t.Severity, c.Severity)}
	case c.SoftBroken != t.SoftBroken:
		return &fieldError{"soft_broken", fmt.Sprintf("%v; its requests say %v", t.SoftBroken, c.SoftBroken)}
	}
	if name, ok := otherFigure(t.Figures, c.Figures); ok {
		return &fieldError{"figures." + name, fmt.Sprintf("%v; its requests say %v", t.Figures[name], c.Figures[name])}
	}
	// A stored "unknown" stays: the run's check ran out of time, and the
	// recheck has shown it hid no break (Broken agrees). A stored verdict
	// that the recheck cannot settle again proves nothing any more.
	switch {
	case t.History == "" || t.History == results.HistoryUnknown || c.History == t.History:
	case c.History == results.HistoryUnknown:
		t.History, t.HistoryWhy = c.History, c.HistoryWhy
	default:
		return &fieldError{"history", fmt.Sprintf("%q; checked again: %q", t.History, c.History)}
	}
	return nil
}

// checkTally checks a sampled target's tally against itself and its
// sample: every count of the sample must be within the tally's.
func checkTally(t *results.TargetResult, n int, stream bool) *fieldError {
	s := t.Tally
	sample := results.TallyOf(t.Trials)
	kept := 0
	for _, c := range s.Counted {
		kept += c
	}
	switch {
	case s.Trials < len(t.Trials):
		return &fieldError{"trials", fmt.Sprintf("%d, fewer than the %d trials kept", s.Trials, len(t.Trials))}
	case len(t.Trials) > 0 && t.Trials[len(t.Trials)-1].Index >= s.Trials:
		return &fieldError{"trials", fmt.Sprintf("%d, but a kept trial is numbered %d", s.Trials, t.Trials[len(t.Trials)-1].Index)}
	case s.Broken < sample.Broken || s.Broken > s.Trials:
		return &fieldError{"broken", fmt.Sprintf("%d; the kept trials alone show %d broken", s.Broken, sample.Broken)}
	case s.Broken > 0 && sample.Broken == 0:
		// A sample always keeps a run's first broken trial (Recorder.Add):
		// a break claimed beyond the sample must show in it.
		return &fieldError{"broken", fmt.Sprintf("%d, yet no kept trial broke; a sample keeps the first broken trial", s.Broken)}
	case s.Inconclusive < sample.Inconclusive || s.Broken+s.Inconclusive > s.Trials:
		return &fieldError{"inconclusive", fmt.Sprintf("%d; the kept trials alone show %d", s.Inconclusive, sample.Inconclusive)}
	case s.Inconclusive > 0 && sample.Inconclusive == 0:
		return &fieldError{"inconclusive", fmt.Sprintf("%d, yet no kept trial is inconclusive; a sample keeps the first inconclusive trial", s.Inconclusive)}
	case !stream && (s.Requests.Min != n || s.Requests.Max != n || s.Requests.Sum != int64(n)*int64(s.Trials)):
		return &fieldError{"requests", fmt.Sprintf("%+v; want %d in each of %d trials", s.Requests, n, s.Trials)}
	case s.Allowed.Sum+s.Refused.Sum+s.Errors.Sum != s.Requests.Sum:
		return &fieldError{"allowed", "allowed, refused and errors do not add up to the requests"}
	case s.Errors.Sum < sample.Errors.Sum || s.Allowed.Sum < sample.Allowed.Sum || s.Refused.Sum < sample.Refused.Sum:
		return &fieldError{"errors", "fewer than the kept trials alone show"}
	case kept+s.CountedOther != s.Trials:
		return &fieldError{"counted", fmt.Sprintf("counts for %d trials; want %d", kept+s.CountedOther, s.Trials)}
	case s.Lost < sample.Lost || s.Over < sample.Over:
		return &fieldError{"lost", "less than the kept trials alone show"}
	case s.Errored < sample.Errored || s.Unsynchronized < sample.Unsynchronized || s.HistoryUnknown < sample.HistoryUnknown || s.NotSimultaneous < sample.NotSimultaneous:
		return &fieldError{"errored", "fewer than the kept trials alone show"}
	}
	return nil
}

// otherFigure names the first figure, by name, whose values differ between
// two trials' figures; ok is false when none does.
func otherFigure(a, b map[string][]int64) (name string, ok bool) {
	names := slices.Collect(maps.Keys(a))
	for n := range b {
		if _, in := a[n]; !in {
			names = append(names, n)
		}
	}
	slices.Sort(names) // the first by name, whatever the maps' order
	for _, n := range names {
		if !slices.Equal(a[n], b[n]) {
			return n, true
		}
	}
	return "", false
}

// Reexpect sets every target of saved results to what the verifier
// expects of it (all, or one[NAME or SPEC] for one target, as a run's
// Plan.Expect and Plan.ExpectOf), never what the document claims: a
// saved "expect": "breaks", "strict": false would otherwise turn a
// broken rule into "broken (expected)". Without an override, a target is
// expected to hold unless the catalog knows it as naive. A target the
// catalog does not know, or a one key no target has, is an error.
func Reexpect(cat *targets.Catalog, all Override, one map[string]Override, rs []*results.Result, ls []*results.LoadResult) error {
	return reexpect(cat, &all, one, rs, ls)
}

// KeepExpect is Reexpect for a reader who keeps what the documents say
// they expected (`racelab report` without --expect for every target):
// only the targets one names are set again, the others keep their saved
// expectation. The documents' signatures, when a key is given, are what
// make a saved expectation trustworthy.
func KeepExpect(cat *targets.Catalog, one map[string]Override, rs []*results.Result, ls []*results.LoadResult) error {
	return reexpect(cat, nil, one, rs, ls)
}

// reexpect is Reexpect, keeping a target's saved expectation when all is
// nil and one does not name it.
func reexpect(cat *targets.Catalog, all *Override, one map[string]Override, rs []*results.Result, ls []*results.LoadResult) error {
	if cat == nil {
		cat = targets.Builtin()
	}
	used := map[string]bool{}
	set := func(name, spec string, e *results.Expectation, strict *bool) error {
		parsed, entry, err := cat.Lookup(spec)
		if err != nil {
			return fmt.Errorf("%w: target %q: %v", ErrInconsistent, spec, err) // %v: the document is wrong (exit 1), not the command line
		}
		ov := all
		for _, key := range []string{name, spec, parsed.Name()} {
			if o, ok := one[key]; ok && key != "" {
				ov, used[key] = &o, true
				break
			}
		}
		if ov != nil {
			*e, *strict = ExpectationOf(entry, *ov)
		}
		return nil
	}
	for _, r := range rs {
		for i := range r.Targets {
			t := &r.Targets[i]
			if err := set(t.Name, t.Spec, &t.Expect, &t.Strict); err != nil {
				return err
			}
		}
	}
	for _, l := range ls {
		for i := range l.Targets {
			t := &l.Targets[i]
			if err := set(t.Name, t.Spec, &t.Expect, &t.Strict); err != nil {
				return err
			}
		}
	}
	for key, ov := range one {
		if !used[key] {
			return usage.Fieldf("Expect", "{} %s=%s: no target %q in these results", key, cmp.Or(string(ov), "auto"), key)
		}
	}
	return nil
}
