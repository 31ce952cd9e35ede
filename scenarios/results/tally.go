package results

import (
	"maps"
	"slices"
	"time"
)

// Defaults of what a run keeps of its trials, in one place. A run's memory
// is bounded by these, not by the number of trials: every trial is summed
// into its target's Tally as it finishes, and only a sample keeps its
// per-request detail.
const (
	// DefaultKeepTrials is how many trials of each target keep their
	// per-request detail (the first ones run), unless Plan.KeepAll.
	DefaultKeepTrials = 1000
	// DefaultKeepRequests caps the requests those trials may hold in all,
	// so that a sample of bursts of 10,000 stays as small as one of 10.
	DefaultKeepRequests = 100_000
	// MaxInconclusive is the largest share of a target's trials that may
	// be inconclusive for the others to give a verdict. Above it, too much
	// of the run proved nothing, and a target that had to keep (or to
	// break) the rule gets no verdict: the run exits 1.
	MaxInconclusive = 0.10
	// maxCountedValues bounds the distinct counts a Tally keeps apart; a
	// service answering wild counts cannot grow it further. Trials past it
	// still count in CountedMin, CountedMax and the sums.
	maxCountedValues = 4096
	// maxArrivalSpreads bounds the arrival spreads a Tally keeps for their
	// median: the first ones measured.
	maxArrivalSpreads = 100_000
)

// Span is a per-trial figure over a target's trials: its smallest and
// largest value and its sum.
type Span struct {
	Min int   `json:"min"`
	Max int   `json:"max"`
	Sum int64 `json:"sum"`
}

func (s *Span) add(v, n int) {
	if n == 0 {
		s.Min, s.Max = v, v
	}
	s.Min, s.Max, s.Sum = min(s.Min, v), max(s.Max, v), s.Sum+int64(v)
}

// worstTrial names the trial that strayed furthest from the rule (the most
// over plus lost; of a race file's, the broken one of highest severity),
// the first of equals.
type worstTrial struct {
	Index int   `json:"index"`
	Over  int64 `json:"over"`
	Lost  int64 `json:"lost"`
	// Damage is the trial's damage in its story's words (Trial.Damage).
	Damage string `json:"damage,omitempty"`
	// Ranked says a race file's broken trial, ranked by its Severity,
	// whose account Why the summary quotes.
	Ranked   bool    `json:"ranked,omitempty"`
	Severity float64 `json:"severity,omitempty"`
	Why      string  `json:"why,omitempty"`
}

// Words says the worst trial's damage: in its story's words when the
// result recorded them, else as SetDamage does without them.
func (w worstTrial) Words() string {
	if w.Damage != "" {
		return w.Damage
	}
	return defaultDamage(w.Over, w.Lost)
}

// Tally is what every trial of one target came to, summed as the trials
// finish: everything a report says that does not need each request. Run
// records it in TargetResult.Tally when Trials keeps only a sample;
// TargetResult.Summary computes it from Trials otherwise.
type Tally struct {
	// Trials counts the trials; Broken those that broke the rule;
	// Inconclusive those that proved nothing (see Trial.Inconclusive);
	// Unsynchronized those answered before their release.
	// Errored counts the trials that did not break and had a failed
	// request: one cause of inconclusive trials.
	Trials         int `json:"trials"`
	Broken         int `json:"broken"`
	Inconclusive   int `json:"inconclusive"`
	Unsynchronized int `json:"unsynchronized,omitempty"`
	Errored        int `json:"errored,omitempty"`
	// NotSimultaneous counts the trials whose burst was spread wider than
	// the run allowed (Trial.NotSimultaneous).
	NotSimultaneous int `json:"not_simultaneous,omitempty"`
	// Requests, Allowed, Refused and Errors are per-trial counts.
	Requests Span `json:"requests"`
	Allowed  Span `json:"allowed"`
	Refused  Span `json:"refused"`
	Errors   Span `json:"errors"`
	// CountedMin and CountedMax bound what the store counted; Counted
	// maps each count to the trials that read it back (at most 4096
	// distinct counts; CountedOther says how many trials fell beyond).
	CountedMin   int64        `json:"counted_min"`
	CountedMax   int64        `json:"counted_max"`
	CountedSum   int64        `json:"counted_sum"`
	Counted      Distribution `json:"counted"`
	CountedOther int          `json:"counted_other,omitempty"`
	// Lost and Over are summed over the trials; Worst is the trial that
	// strayed furthest.
	Lost  int64      `json:"lost"`
	Over  int64      `json:"over"`
	Worst worstTrial `json:"worst"`
	// Retries sums the strategy's retries.
	Retries int64 `json:"retries,omitempty"`
	// HistoryChecked, NotLinearizable and HistoryUnknown count the
	// history checks and what they found.
	HistoryChecked  int `json:"history_checked,omitempty"`
	NotLinearizable int `json:"not_linearizable,omitempty"`
	HistoryUnknown  int `json:"history_unknown,omitempty"`
	// FirstWhy is the first broken trial's account; FirstError the first
	// failed request's error.
	FirstWhy string `json:"first_why,omitempty"`
	// FirstBroken numbers the first broken trial from 1 (0: none broke),
	// so that FirstWhy's figures can be told from a median's.
	FirstBroken int    `json:"first_broken,omitempty"`
	FirstError  string `json:"first_error,omitempty"`
	// MaxReleaseSpread is the widest release spread; ArrivalSpreads the
	// arrival spreads the server reported (the first 100,000 bursts).
	MaxReleaseSpread time.Duration   `json:"max_release_spread_ns"`
	ArrivalSpreads   []time.Duration `json:"arrival_spreads_ns,omitempty"`
	// BurstTime sums, over the trials, the time from the release to the
	// last answer.
	BurstTime time.Duration `json:"burst_time_ns"`
	// Causes say why the inconclusive trials of a race file proved
	// nothing: each distinct cause, how many, and one trial.
	Causes Causes `json:"causes,omitempty"`
	// SoftBroken counts the trials that broke the story's soft rule;
	// SoftInconclusive those that proved nothing about it (see
	// Trial.SoftInconclusive), counted for every story and shown only for
	// one with a soft rule.
	SoftBroken       int `json:"soft_broken,omitempty"`
	SoftInconclusive int `json:"soft_inconclusive,omitempty"`
	// Figures count, for each of the story's own trial figures, how often
	// each value came up: the first 100,000 distinct values of each.
	Figures map[string]Distribution `json:"figures,omitempty"`
}

// Add sums one judged trial into the tally.
func (s *Tally) Add(t *Trial) {
	n := s.Trials
	s.Trials++
	if t.Broken {
		s.Broken++
		if s.FirstWhy == "" {
			s.FirstWhy, s.FirstBroken = t.Why, t.Index+1
		}
	}
	if t.Inconclusive() {
		s.Inconclusive++
		s.Causes = s.Causes.add(t)
	}
	if t.Unsynchronized {
		s.Unsynchronized++
	}
	if t.NotSimultaneous {
		s.NotSimultaneous++
	}
	if !t.Broken && t.Errors > 0 {
		s.Errored++
	}
	s.Requests.add(len(t.Requests), n)
	s.Allowed.add(t.Allowed, n)
	s.Refused.add(t.Refused, n)
	s.Errors.add(t.Errors, n)
	if n == 0 {
		s.CountedMin, s.CountedMax = t.Counted, t.Counted
	}
	s.CountedMin, s.CountedMax, s.CountedSum = min(s.CountedMin, t.Counted), max(s.CountedMax, t.Counted), s.CountedSum+t.Counted
	if s.Counted == nil {
		s.Counted = Distribution{}
	}
	if !s.Counted.add(t.Counted, 1, maxCountedValues) {
		s.CountedOther++
	}
	s.Lost += t.Lost
	s.Over += t.Over
	if n == 0 || s.Worst.beatenBy(t) {
		s.Worst = worstOf(t)
	}
	s.Retries += t.Retries
	if t.History != "" {
		s.HistoryChecked++
		switch t.History {
		case NotLinearizable:
			s.NotLinearizable++
		case HistoryUnknown:
			s.HistoryUnknown++
		}
	}
	var last time.Duration
	for i := range t.Requests {
		r := &t.Requests[i]
		if r.Outcome == Errored && s.FirstError == "" {
			s.FirstError = r.Error
		}
		last = max(last, r.Return)
	}
	s.BurstTime += last
	s.MaxReleaseSpread = max(s.MaxReleaseSpread, t.ReleaseSpread)
	if t.ArrivalSpread > 0 && len(s.ArrivalSpreads) < maxArrivalSpreads {
		s.ArrivalSpreads = append(s.ArrivalSpreads, t.ArrivalSpread)
	}
	if t.SoftBroken {
		s.SoftBroken++
	}
	if t.SoftInconclusive() {
		s.SoftInconclusive++
	}
	s.Figures = addFigures(s.Figures, t.Figures)
}

// TallyOf sums trials into a Tally.
func TallyOf(trials []Trial) Tally {
	var s Tally
	for i := range trials {
		s.Add(&trials[i])
	}
	return s
}

// Conclusive counts the trials that prove something: those that broke,
// and those that held with every request answered inside the contract.
func (s *Tally) Conclusive() int { return s.Trials - s.Inconclusive }

// SoftTooInconclusive is TooInconclusive for the soft rule, asked of a
// target whose trials did not break it.
func (s *Tally) SoftTooInconclusive() bool {
	return s.Trials > 0 && (s.SoftInconclusive == s.Trials || float64(s.SoftInconclusive) > MaxInconclusive*float64(s.Trials))
}

// TooInconclusive reports whether too few trials proved anything for a
// verdict of holding (or of a race not showing): none at all, or more
// than MaxInconclusive of them inconclusive. A trial that broke is proof
// enough on its own, so this is only asked of targets that did not break.
func (s *Tally) TooInconclusive() bool {
	return s.Trials > 0 && (s.Conclusive() == 0 || float64(s.Inconclusive) > MaxInconclusive*float64(s.Trials))
}

// Bound is what the tally proves about the rate of breaking at level:
// only conclusive trials count.
func (s *Tally) Bound(level, maxRate float64) Bound {
	b := Bound{Level: level, MaxRate: maxRate, Trials: s.Conclusive(), Broken: s.Broken, Inconclusive: s.Inconclusive}
	b.Upper = upperBound(b.Broken, b.Trials, level)
	return b
}

// CountedMedian is the median count over the trials (of an even number,
// the upper of the two middle ones), from the distinct counts kept.
func (s *Tally) CountedMedian() int64 {
	if v, ok := s.Counted.Median(); ok {
		return v
	}
	return s.CountedMax
}

// Merge adds another target's tally to s, as if its trials had followed.
func (s *Tally) Merge(o *Tally) {
	if o.Trials == 0 {
		return
	}
	if s.Trials == 0 {
		c := *o
		c.Counted = maps.Clone(o.Counted)
		if c.Counted == nil {
			c.Counted = Distribution{}
		}
		c.ArrivalSpreads = slices.Clone(o.ArrivalSpreads)
		c.Figures = mergeFigures(nil, o.Figures)
		*s = c
		return
	}
	offset := s.Trials
	worst := o.Worst
	worst.Index += offset
	if s.Worst.below(worst) {
		s.Worst = worst
	}
	s.Causes = s.Causes.merge(o.Causes, offset)
	s.Trials += o.Trials
	s.Broken += o.Broken
	s.Inconclusive += o.Inconclusive
	s.Unsynchronized += o.Unsynchronized
	s.NotSimultaneous += o.NotSimultaneous
	s.Errored += o.Errored
	for _, p := range []struct{ a, b *Span }{{&s.Requests, &o.Requests}, {&s.Allowed, &o.Allowed}, {&s.Refused, &o.Refused}, {&s.Errors, &o.Errors}} {
		p.a.Min, p.a.Max, p.a.Sum = min(p.a.Min, p.b.Min), max(p.a.Max, p.b.Max), p.a.Sum+p.b.Sum
	}
	s.CountedMin, s.CountedMax, s.CountedSum = min(s.CountedMin, o.CountedMin), max(s.CountedMax, o.CountedMax), s.CountedSum+o.CountedSum
	if s.Counted == nil { // a saved tally may say null
		s.Counted = Distribution{}
	}
	for v, n := range o.Counted {
		if !s.Counted.add(v, n, maxCountedValues) {
			s.CountedOther += n
		}
	}
	s.CountedOther += o.CountedOther
	s.Lost += o.Lost
	s.Over += o.Over
	s.Retries += o.Retries
	s.HistoryChecked += o.HistoryChecked
	s.NotLinearizable += o.NotLinearizable
	s.HistoryUnknown += o.HistoryUnknown
	if s.FirstWhy == "" && o.FirstWhy != "" {
		s.FirstWhy, s.FirstBroken = o.FirstWhy, 0
		if o.FirstBroken > 0 { // a result saved before trials were named has none
			s.FirstBroken = o.FirstBroken + offset
		}
	}
	if s.FirstError == "" {
		s.FirstError = o.FirstError
	}
	s.MaxReleaseSpread = max(s.MaxReleaseSpread, o.MaxReleaseSpread)
	room := max(0, maxArrivalSpreads-len(s.ArrivalSpreads))
	s.ArrivalSpreads = append(s.ArrivalSpreads, o.ArrivalSpreads[:min(room, len(o.ArrivalSpreads))]...)
	s.BurstTime += o.BurstTime
	s.SoftBroken += o.SoftBroken
	s.SoftInconclusive += o.SoftInconclusive
	s.Figures = mergeFigures(s.Figures, o.Figures)
}

// Keep says how much per-request detail a run keeps; the zero value keeps
// the defaults. The first trials are kept, and, past the budget, the first
// broken one, the first inconclusive one and the worst one, so that a
// report can always show what went wrong.
type Keep struct {
	// All keeps every trial (--keep-all): memory then grows with them.
	All bool
	// Trials and Requests cap the sample; zero means DefaultKeepTrials
	// and DefaultKeepRequests.
	Trials   int
	Requests int
}

// Recorder records a target's judged trials: every one into the tally,
// the sample into tr.Trials.
type Recorder struct {
	tr    *TargetResult
	keep  Keep
	tally Tally
	// requests counts the requests the sample holds; dropped says some
	// trial was left out of it.
	requests int
	dropped  bool
	// worstAt is the position in tr.Trials of a trial kept past the
	// budget only because it was the worst, -1 if none.
	worstAt int
}

func NewRecorder(tr *TargetResult, keep Keep) *Recorder {
	if keep.Trials <= 0 {
		keep.Trials = DefaultKeepTrials
	}
	if keep.Requests <= 0 {
		keep.Requests = DefaultKeepRequests
	}
	return &Recorder{tr: tr, keep: keep, worstAt: -1}
}

// Add records one judged trial.
func (r *Recorder) Add(t Trial) {
	firstBroken := t.Broken && r.tally.Broken == 0
	firstInconclusive := t.Inconclusive() && r.tally.Inconclusive == 0
	worse := r.tally.Trials > 0 && r.tally.Worst.beatenBy(&t)
	r.tally.Add(&t)
	room := len(r.tr.Trials) < r.keep.Trials && r.requests+len(t.Requests) <= r.keep.Requests
	switch {
	case r.keep.All || room || len(r.tr.Trials) == 0:
	case firstBroken || firstInconclusive:
		if worse {
			r.worstAt = -1 // this one stays for its other role
		}
	case worse && r.worstAt >= 0:
		// The worst so far was kept for nothing else: the new worst
		// takes its place, at the end, where trials stay in order.
		old := r.tr.Trials[r.worstAt]
		r.tr.Trials = slices.Delete(r.tr.Trials, r.worstAt, r.worstAt+1)
		r.requests -= len(old.Requests)
		r.dropped = true
		r.worstAt = len(r.tr.Trials)
	case worse:
		r.worstAt = len(r.tr.Trials)
	default:
		r.dropped = true
		return
	}
	r.tr.Trials = append(r.tr.Trials, t)
	r.requests += len(t.Requests)
}

// Finish sets the target's tally, when the sample left trials out, and
// its bound.
func (r *Recorder) Finish(level, maxRate float64) {
	if r.dropped {
		tally := r.tally
		r.tr.Tally = &tally
	}
	b := r.tally.Bound(level, maxRate)
	r.tr.Bound = &b
}

// Tally is what the trials recorded so far came to.
func (r *Recorder) Tally() *Tally { return &r.tally }

// Target is the target result the recorder fills in.
func (r *Recorder) Target() *TargetResult { return r.tr }
