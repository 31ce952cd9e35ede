package engine

import (
	"cmp"
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"regexp"
	"slices"
	"strings"
	"sync/atomic"
	"time"

	"github.com/racelab/racelab/internal/usage"
	"github.com/racelab/racelab/scenarios/results"
	"github.com/racelab/racelab/targets"
	"github.com/racelab/racelab/targets/clock"
)

// Defaults of a Plan, in one place.
const (
	// DefaultTrials is how many bursts a target gets when a plan says none.
	DefaultTrials = 1
	// DefaultTimeout bounds each request, so that one stuck request can
	// never hold a burst (or CI) forever.
	DefaultTimeout = 10 * time.Second
	// MaxRequests bounds N: racelab fires bursts, not floods.
	MaxRequests = 10000
	// DefaultGap is the pause between two requests of a sequential run:
	// a visitor clicking through a gallery, a few seconds per image.
	DefaultGap = 3 * time.Second
)

// Override overrides what targets are expected to do (--expect): the
// words the user types, where Expectation is what a target was expected
// to do.
type Override string

// The overrides.
const (
	OverrideAuto Override = ""     // each target's catalog entry decides
	OverrideRace Override = "race" // every target must show the race
	OverrideHold Override = "hold" // every target must keep the rule
	// OverrideBreaks expects the race as of a naive store: breaking is
	// as expected, holding only worth a note. It is how a run says that
	// a service of the user's own, which racelab cannot look up in its
	// catalog, is the naive one (-t naive=http://… --expect naive=breaks).
	OverrideBreaks Override = "breaks"
)

// ParseOverride reads an expectation as the user types it: auto, hold
// (or holds), race, or breaks.
func ParseOverride(s string) (Override, error) {
	switch strings.ToLower(strings.TrimSpace(s)) {
	case "auto":
		return OverrideAuto, nil
	case "hold", "holds":
		return OverrideHold, nil
	case "race":
		return OverrideRace, nil
	case "breaks", "break":
		return OverrideBreaks, nil
	}
	return "", usage.Fieldf("Expect", "{} %q; want auto, hold, breaks or race", s)
}

// Plan says what to run. Zero fields take the scenario's or package defaults.
type Plan struct {
	Scenario *Scenario
	// Catalog is where the targets are looked up; nil means
	// targets.Builtin().
	Catalog *targets.Catalog
	// Targets are target specs; empty means the scenario's line-up.
	Targets []string
	// Requests is N, the requests per burst.
	Requests int
	// Trials is the number of bursts per target, each on fresh state.
	Trials int
	// Timeout bounds each request.
	Timeout time.Duration
	// Seed decides the simulated stores' random choices.
	Seed int64
	// Expect overrides the targets' expectations; ExpectOf overrides one
	// target's, by the name given it (NAME=SPEC) or its spec as written.
	Expect   Override
	ExpectOf map[string]Override
	// Options are passed to every target as it is opened.
	Options []targets.Option
	// OnTrial, when set, is called after every trial from the goroutine
	// that called Run, for progress display.
	OnTrial func(target string, done, total int)
	// OnWait, when set, is told before the first trial of a sequential
	// run how long its gaps will keep it waiting on the real clock, and
	// on which targets: minutes of nothing on the screen otherwise
	// (virtual time skips the gaps).
	OnWait func(targets []string, wait time.Duration)
	// Sequential fires a trial's requests one after another, Gap apart
	// (DefaultGap when zero), instead of all at once: the stale-read half
	// of a story. N then defaults to the scenario's SequentialRequests.
	Sequential bool
	Gap        time.Duration
	// AcrossMidnight lets a sequential trial in virtual time run across
	// UTC midnight. By default a trial that would is started at the next
	// midnight instead, since daily quotas start afresh there; explain's
	// replay of that reset asks for the crossing.
	AcrossMidnight bool
	// Trace records each request's store operations (Request.Steps), for
	// timelines.
	Trace bool
	// RealClock runs the simulated stores on the real clock. By default
	// they run in virtual time (targets.WithVirtualTime), where a trial is
	// a deterministic discrete-event run: same seed, same result.
	RealClock bool
	// Evidence asks for a bound on the rate of breaking and sets up the
	// history checks (confidence.go).
	Evidence
	// Keep says how many trials keep their per-request detail; the rest
	// are only summed (tally.go), so memory does not grow with --trials.
	Keep results.Keep
	// KeyChars is what the fresh keys are made of; empty means KeyASCII.
	KeyChars results.KeyChars
	// Background, when set, is load put on each target through all of its
	// trials (racelab run --background; load.Runner): it is
	// started once the target is prepared, with the target's label, the
	// target bound to the story, and the key of the trial in progress
	// ("" between trials), and the stop it returns is called after the
	// last trial. It needs the real clock: virtual time has no rate.
	Background func(ctx context.Context, label string, t *targets.Target, p Player, trialKey func() string) (stop func())
}

// Targeting is what every plan that fires at targets shares, a run's, a
// load's (load.LoadPlan) and a verifier's read-back (shards.VerifyPlan):
// where the targets are, how they are opened, each request's time limit,
// and what each target must do. The command line sets it from one set of
// flags. The load's and the verifier's plans embed it; a run's Plan has
// the same fields of its own, which its many literals name, and takes
// them from a Targeting with Aim.
type Targeting struct {
	// Catalog is where the targets are looked up; nil means
	// targets.Builtin().
	Catalog *targets.Catalog
	// Targets are target specs; empty means the plan's own (a story's
	// line-up, the specs a sharded run's parts recorded).
	Targets []string
	// Options are passed to every target as it is opened.
	Options []targets.Option
	// Timeout bounds each request.
	Timeout time.Duration
	// Expect overrides the targets' expectations; ExpectOf overrides one
	// target's, by the name given it (NAME=SPEC) or its spec as written.
	Expect   Override
	ExpectOf map[string]Override
}

// Aim sets the plan's targets, their settings and expectations from t.
func (p *Plan) Aim(t Targeting) {
	p.Catalog, p.Targets, p.Options, p.Timeout, p.Expect, p.ExpectOf = t.Catalog, t.Targets, t.Options, t.Timeout, t.Expect, t.ExpectOf
}

// Resolved is a target spec checked against the catalog before any runs.
type Resolved struct {
	Name   string // the name the user gave it (NAME=SPEC), or ""
	Raw    string // the spec as written, without the name
	Spec   targets.Spec
	Entry  targets.Entry
	Expect Override
}

// targetName is what a name given to a target may be: short, and unlike
// any spec, so that NAME=SPEC cannot be mistaken for a spec's parameters.
var targetName = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9._-]*$`)

// Options are opts for opening r: with the name the user gave it last,
// after any WithHTTP, whose Config would drop it.
func (r Resolved) Options(opts []targets.Option) []targets.Option {
	return append(slices.Clip(opts), targets.WithName(r.Name))
}

// SplitTarget splits a -t value, NAME=SPEC or SPEC, as a plan does.
func SplitTarget(raw string) (name, spec string) { return splitName(raw) }

// splitName splits NAME=SPEC. A spec's own "=" comes after its "?", and a
// URL's after its "://", so an "=" with only a plain word before it names
// the target; anything else is a spec with no name.
func splitName(raw string) (name, spec string) {
	if n, rest, ok := strings.Cut(raw, "="); ok && targetName.MatchString(n) {
		return n, rest
	}
	return "", raw
}

// Wants says, for each field of a Plan (and its Evidence) that a value
// can be wrong for, what a right one is: the words of every check, in one
// place, for the plan's own checks and for a caller that refuses a value
// before it reaches the plan (cmd: a count given as 0, which a Plan reads
// as "the default").
var Wants = usage.Wants{
	"Requests":       fmt.Sprintf("a whole number from 1 to %d", MaxRequests),
	"Trials":         "1 or more",
	"Gap":            "a positive duration such as 3s",
	"Timeout":        "a positive duration such as 5s",
	"Confidence":     "a level between 0% and 100%, such as 95% or 99%",
	"MaxRate":        "a rate between 0% and 100%, such as 1%; leave it out to run exactly {Trials}",
	"MaxTrials":      "1 or more",
	"HistoryTimeout": "a positive duration such as 2s",
	"Period":         "a positive duration such as 1s",
	"MaxSpread":      "a positive duration such as 250ms",
}

// Validate checks the plan without running anything: the counts, the
// evidence asked for, every target (it exists and can play the story) and
// every expectation's target. Each error is a *usage.FieldError naming
// the field at fault, or an unknown target's name; nil when the plan can
// run.
func (p *Plan) Validate() []error {
	_, errs := p.resolve()
	return errs
}

// Resolve is Validate, then the plan's targets as it will open them: the
// first error when there is one.
func (p *Plan) Resolve() ([]Resolved, error) {
	rs, errs := p.resolve()
	if len(errs) > 0 {
		return nil, errs[0]
	}
	return rs, nil
}

func (p *Plan) resolve() ([]Resolved, []error) {
	if p.Scenario == nil {
		return nil, []error{usage.Fieldf("Scenario", "no scenario")}
	}
	var errs []error
	usage.Within(&errs, Wants, "Requests", p.Requests, 0, MaxRequests)
	usage.NotBelow(&errs, Wants, "Trials", p.Trials, 0)
	usage.NotBelow(&errs, Wants, "Gap", p.Gap, 0)
	usage.NotBelow(&errs, Wants, "Timeout", p.Timeout, 0)
	if _, err := results.ParseKeyChars(string(p.KeyChars)); err != nil {
		errs = append(errs, err)
	}
	switch p.Expect {
	case OverrideAuto, OverrideRace, OverrideHold, OverrideBreaks:
	default:
		errs = append(errs, usage.Fieldf("Expect", "{} %q; want auto, hold, breaks or race", p.Expect))
	}
	errs = append(errs, p.Evidence.Validate(cmp.Or(p.Trials, DefaultTrials))...)
	if st := p.Scenario.Stream; st != nil && p.RealClock {
		if err := st.realTrialError(true); err != nil {
			errs = append(errs, err)
		}
	}
	rs, err := p.targets()
	if err != nil {
		errs = append(errs, err)
	}
	return rs, errs
}

// targets resolves the plan's targets and their expectations.
func (p *Plan) targets() ([]Resolved, error) {
	specs := p.Targets
	if len(specs) == 0 {
		specs = p.Scenario.Lineup
	}
	if len(specs) == 0 { // a race file's: only its user knows where it runs
		return nil, fmt.Errorf("%w: %s has no line-up of its own; give it its targets, such as http://127.0.0.1:8787", results.ErrUsage, p.Scenario.Name)
	}
	out := make([]Resolved, 0, len(specs))
	names := map[string]bool{}
	unnamed := map[string]bool{}
	for _, given := range specs {
		name, raw := splitName(given)
		if name == "" {
			// Two identical rows would say nothing one row does not.
			if unnamed[raw] {
				return nil, usage.Fieldf("Targets", "{} %s given twice; give each target once, or name the copies to run it twice (-t a=%s -t b=%s)", raw, raw, raw)
			}
			unnamed[raw] = true
		}
		if name != "" {
			if _, _, err := p.catalog().Lookup(name); err == nil {
				return nil, usage.Fieldf("Targets", "{} %s: %q is a target of its own; name it something else, such as %q", given, name, "my-"+name)
			}
			if names[name] {
				return nil, usage.Fieldf("Targets", "{} %s: two targets are named %q; give each its own name", given, name)
			}
			names[name] = true
		}
		spec, e, err := p.catalog().Lookup(raw)
		if err != nil {
			return nil, err
		}
		if !p.Scenario.Plays(e.Kind) {
			return nil, p.Scenario.CannotPlay(spec.Name())
		}
		out = append(out, Resolved{Name: name, Raw: raw, Spec: spec, Entry: e, Expect: p.Expect})
	}
	// One target's expectation, by its name or its spec as written.
	for key, ov := range p.ExpectOf {
		found := false
		for i := range out {
			if r := &out[i]; key == r.Name || r.Name == "" && (key == r.Raw || key == r.Spec.Name()) {
				r.Expect, found = ov, true
			}
		}
		if !found {
			var have []string
			for _, r := range out {
				have = append(have, cmp.Or(r.Name, r.Raw))
			}
			return nil, usage.Fieldf("Expect", "{} %s=%s: no target %q in this run (targets: %s)", key, cmp.Or(string(ov), "auto"), key, strings.Join(have, ", "))
		}
	}
	return out, nil
}

// Run plays the plan: for each target in turn, open it, fire the trials,
// close it. An error means the plan could not be run at all (a usage
// error); a target that fails is recorded in its TargetResult and the run
// goes on. When ctx is cancelled, Run returns what it has, marked
// Interrupted: the burst in flight is dropped, completed trials are kept.
// Run writes no files: a picture of a trial's history is WriteHistoryHTML's,
// asked of the result.
func Run(ctx context.Context, p Plan) (*results.Result, error) {
	rs, err := p.Resolve()
	if err != nil {
		return nil, err
	}
	sc := p.Scenario
	n := cmp.Or(p.Requests, sc.DefaultRequests)
	if sc.Stream != nil {
		n = int(sc.Stream.Schedule.Expected())
	}
	if p.Sequential {
		n = cmp.Or(p.Requests, sc.SequentialRequests, sc.DefaultRequests)
	}
	trials := p.Evidence.Planned(cmp.Or(p.Trials, DefaultTrials))
	timeout := cmp.Or(p.Timeout, DefaultTimeout)
	var gap time.Duration // zero: a burst
	if p.Sequential {
		gap = cmp.Or(p.Gap, DefaultGap)
	}
	res := &results.Result{
		Schema:     results.SchemaVersion,
		RunID:      results.NewRunID(),
		Scenario:   sc.Name,
		Rule:       sc.Rule,
		Requests:   n,
		Trials:     trials,
		Seed:       p.Seed,
		Confidence: p.Evidence.Level(),
		Sequential: p.Sequential,
		Gap:        gap,
		Settings:   sc.Settings,
		Figures:    sc.Figures,
	}
	if sc.Stream != nil {
		res.Stream = sc.Stream.Words
	}
	if sc.Soft != nil {
		res.Soft = sc.SoftRule
	}
	if p.KeyChars != results.KeyASCII {
		res.KeyChars = p.KeyChars
	}
	if p.MaxRate > 0 {
		res.MaxRate, res.MaxTrials = p.MaxRate, p.Evidence.maxTrials()
	}
	if !p.Sequential && sc.Stream == nil {
		res.MaxSpread = p.Evidence.SpreadBound()
	}
	// Open every target before the first burst, so that a mistyped store
	// parameter is a usage error before anything runs, not halfway through.
	opts := append([]targets.Option{targets.WithSeed(p.Seed), targets.WithVirtualTime(!p.RealClock), targets.WithVirtualServers(sc.Timed)}, p.Options...)
	opened, openErr, err := OpenAll(ctx, rs, opts)
	if err != nil {
		return nil, err
	}
	defer CloseAll(opened)
	if p.Background != nil {
		for i, t := range opened {
			if t == nil {
				continue
			}
			if err := RefuseBackground(rs[i].Spec.Name(), t); err != nil {
				return nil, err
			}
		}
	}
	if p.OnWait != nil && gap > 0 && n > 1 {
		var real []string
		for i, t := range opened {
			if t != nil && VirtualClock(t.Store) == nil {
				real = append(real, cmp.Or(rs[i].Name, rs[i].Spec.Name()))
			}
		}
		if len(real) > 0 {
			p.OnWait(real, time.Duration(len(real)*trials*(n-1))*gap)
		}
	}
	// A run id keeps keys fresh across runs, even with the same seed, so
	// that a real server never hands one run another run's state. Stores
	// in virtual time are new for every run, so there the id comes from
	// the seed and a replay is the same to the last byte.
	runID := NewRunID()
	replay := !slices.ContainsFunc(opened, func(t *targets.Target) bool { return t == nil || VirtualClock(t.Store) == nil || !InMemory(t.Store) })
	if replay {
		runID = fmt.Sprintf("s%d", p.Seed)
	}
	// Every line a trial writes names its target as the reports will:
	// by its full spec when two targets share a name.
	trs := make([]results.TargetResult, len(rs))
	for ti, r := range rs {
		trs[ti] = results.TargetResult{Name: r.Name, Target: r.Spec.Name(), Spec: r.Raw, Guarantee: r.Entry.Guarantee}
		if r.Spec.URL != nil {
			trs[ti].Spec = trs[ti].Target // a URL's password never reaches a report
		}
	}
	labels := results.Labels(trs)
	for ti, r := range rs {
		if ctx.Err() != nil {
			break
		}
		tr := trs[ti]
		tr.Expect, tr.Strict = ExpectationOf(r.Entry, r.Expect)
		if openErr[ti] != nil {
			tr.Error = openErr[ti].Error() // "open redis: …", as targets says it
		} else {
			f := Firing{n: n, timeout: timeout, gap: gap, trace: p.Trace, virtual: VirtualClock(opened[ti].Store), realIO: !InMemory(opened[ti].Store),
				Stream: sc.Stream, seed: p.Seed, acrossMidnight: p.AcrossMidnight}
			tr.Clock = results.ClockReal
			if f.virtual != nil {
				tr.Clock = results.ClockVirtual
			}
			rec := results.NewRecorder(&tr, p.Keep)
			run := targetRun{sc: sc, target: opened[ti], label: labels[ti], Firing: f, trials: trials, onTrial: p.OnTrial, ev: p.Evidence, background: p.Background,
				key: func(trial int) string {
					return p.KeyChars.Key(sc.KeyPrefix, fmt.Sprintf("%s-%d-%d", runID, ti, trial))
				}}
			if err := PlayThenClose(&opened[ti], func() error { return run.play(ctx, rec) }); err != nil {
				tr.Error = err.Error()
			}
			rec.Finish(p.Evidence.Level(), p.MaxRate)
		}
		if tr.Bound == nil {
			b := new(results.Tally).Bound(p.Evidence.Level(), p.MaxRate)
			tr.Bound = &b
		}
		res.Targets = append(res.Targets, tr)
	}
	res.Interrupted = ctx.Err() != nil
	if replay {
		res.RunID = results.ReplayID(res) // the same seed, the same bytes
	}
	return res, nil
}

func (p *Plan) catalog() *targets.Catalog {
	if p.Catalog == nil {
		return targets.Builtin()
	}
	return p.Catalog
}

// OpenAll opens every target before anything runs, so that a mistyped
// store parameter is a usage error up front, not halfway through: the
// error is that one; any other failure to open is the target's own, in
// openErr, and the run goes on without it. Close the targets with
// closeAll.
func OpenAll(ctx context.Context, rs []Resolved, opts []targets.Option) (opened []*targets.Target, openErr []error, err error) {
	opened = make([]*targets.Target, len(rs))
	openErr = make([]error, len(rs))
	for i, r := range rs {
		opened[i], openErr[i] = targets.OpenEntry(ctx, r.Spec, r.Entry, r.Options(opts)...)
		if errors.Is(openErr[i], targets.ErrBadSpec) {
			CloseAll(opened)
			return nil, nil, openErr[i]
		}
	}
	return opened, openErr, nil
}

// PlayThenClose plays on the opened target *t, then closes it and marks it
// closed; the error is play's, or else the close's.
func PlayThenClose(t **targets.Target, play func() error) error {
	err := play()
	if cerr := (*t).Close(); cerr != nil && err == nil {
		err = &TargetError{Stage: "close", Err: cerr}
	}
	*t = nil
	return err
}

func CloseAll(ts []*targets.Target) {
	for _, t := range ts {
		if t != nil {
			_ = t.Close()
		}
	}
}

func ExpectationOf(e targets.Entry, override Override) (results.Expectation, bool) {
	switch override {
	case OverrideRace:
		return results.ExpectBreak, true
	case OverrideHold:
		return results.ExpectHold, true
	case OverrideBreaks:
		return results.ExpectBreak, false
	}
	if e.Holds {
		return results.ExpectHold, true
	}
	return results.ExpectBreak, false
}

// VirtualClock is the virtual clock store runs on, nil for the real clock.
func VirtualClock(store any) *clock.Virtual {
	if c, ok := store.(targets.Clocked); ok {
		v, _ := c.Clock().(*clock.Virtual)
		return v
	}
	return nil
}

// InMemory says store is a simulated one, held in memory and new for
// every run: a real store keeps what a run wrote, even in virtual time.
func InMemory(store any) bool {
	_, ok := store.(targets.Forgetter)
	return ok
}

// TargetError is why racelab could not go on with a target: the stage it
// failed at and the cause, said in one way for every stage. It names no
// target: the reports put the target's label before it.
type TargetError struct {
	// Stage is what racelab was doing: "prepare 10 requests", "read back
	// slug-…", "close".
	Stage string
	// Err is the cause; nil when the stage says it all.
	Err error
}

func (e *TargetError) Error() string {
	if e.Err == nil {
		return e.Stage
	}
	return e.Stage + ": " + e.Err.Error()
}

func (e *TargetError) Unwrap() error { return e.Err }

// targetRun is the trials of one opened target.
type targetRun struct {
	sc     *Scenario
	target *targets.Target
	// label names the target in what its trials say (Labels).
	label   string
	Firing  Firing
	trials  int
	key     func(trial int) string
	onTrial func(target string, done, total int)
	ev      Evidence
	// background is Plan.Background.
	background func(ctx context.Context, label string, t *targets.Target, p Player, trialKey func() string) (stop func())
}

// play plays the trials into rec. The error, a *TargetError, is why the
// target could not go on; the trials before it are kept. A cancelled run
// returns no error: it proves nothing either way, and says so itself.
func (r targetRun) play(ctx context.Context, rec *results.Recorder) error {
	sc, t, f, tr := r.sc, r.target, r.Firing, rec.Target()
	n, timeout := f.n, f.timeout
	if err := t.Prepare(ctx, n); err != nil {
		return &TargetError{Stage: fmt.Sprintf("prepare %d requests", n), Err: err}
	}
	if f.virtual != nil {
		// Trial after trial of short participants: keep their goroutines
		// and the stacks they grew (clock.Virtual.Reuse).
		defer f.virtual.Reuse()()
	}
	retrier, _ := t.Store.(targets.Retrier)
	pl, ok := sc.bind(t.Store)
	if !ok { // resolve checked the entry's Kind; the store disagrees with it
		return &TargetError{Stage: fmt.Sprintf("cannot play %s (it has no %s)", sc.Name, sc.Needs)}
	}
	if pl.Sized != nil {
		pl.Sized(n)
	}
	if f.Stream != nil && f.virtual == nil {
		if err := f.Stream.realTrialError(false); err != nil {
			return &TargetError{Stage: "play " + sc.Name, Err: err}
		}
	}
	var batch BatchReader
	if sc.Batch != nil {
		batch = sc.Batch(t.Store)
	}
	// trialKey is the key of the trial in progress, for a background load
	// that reads it; "" between trials, so that no such read is in flight
	// when the store forgets the key.
	var trialKey atomic.Pointer[string]
	if r.background != nil {
		stop := r.background(ctx, r.label, t, pl, func() string {
			if k := trialKey.Load(); k != nil {
				return *k
			}
			return ""
		})
		defer stop()
	}
	var batchKeys []BatchKey
	defer func() {
		// After the last burst, on what the service holds then: the
		// single reads were made right after each burst.
		if ctx.Err() == nil {
			rctx, cancel := context.WithTimeout(ctx, timeout)
			tr.Batch = CheckBatch(rctx, batch, batchKeys)
			cancel()
		}
	}()
	for i := 0; r.ev.another(rec, r.trials); i++ {
		k := r.key(i)
		var before int64
		if retrier != nil {
			before = retrier.Retries()
		}
		do := func(ctx context.Context, j int) Answer { return pl.Do(ctx, k, j) }
		if pl.Prelude != nil && f.Stream == nil { // a stream's prelude waits for its start
			if err := pl.Prelude(ctx, k, func(d time.Duration) error { return (clock.Real{}).Sleep(ctx, d) }); err != nil {
				if ctx.Err() != nil {
					return nil
				}
				return &TargetError{Stage: "ready " + k, Err: err}
			}
		}
		if f.gap == 0 && f.Stream == nil {
			staged, err := StageBurst(ctx, pl, t.Store, k, 0, n)
			if err != nil {
				if ctx.Err() != nil {
					return nil
				}
				return &TargetError{Stage: fmt.Sprintf("stage %d requests", n), Err: err}
			}
			do = staged
		}
		if ts, ok := t.Store.(targets.TrialStarter); ok {
			ts.StartTrial()
		}
		trialKey.Store(&k)
		var reqs []results.Request
		var arrivals []time.Time
		var err error
		if f.Stream != nil {
			var prelude func(context.Context, func(time.Duration) error) error
			if pl.Prelude != nil {
				prelude = func(ctx context.Context, sleep func(time.Duration) error) error { return pl.Prelude(ctx, k, sleep) }
			}
			reqs, err = f.fireStream(ctx, f.Stream.arrivals(f.seed, i), prelude, do)
		} else {
			reqs, arrivals, err = f.fire(ctx, do)
		}
		if ctx.Err() != nil {
			return nil // the burst was cut short: it proves nothing either way
		}
		if err != nil {
			return &TargetError{Stage: "fire the burst", Err: err}
		}
		trial := results.Trial{Index: i, Key: k, Requests: reqs, ReleaseSpread: ReleaseSpread(reqs), ArrivalSpread: ArrivalSpread(arrivals)}
		trial.Count()
		// Only a burst aims at one instant: a sequence's or a stream's
		// requests are spread on purpose.
		trial.NotSimultaneous = f.gap == 0 && f.Stream == nil && r.ev.Scattered(trial.ReleaseSpread)
		if len(reqs) > 0 && trial.Errors == len(reqs) {
			return &TargetError{Stage: "every request failed; first: " + reqs[0].Error}
		}
		rctx, cancel := f.bounded(ctx)
		counted, err := pl.ReadTrial(rctx, k, reqs)
		trial.Counted = counted
		cancel()
		if err != nil {
			if ctx.Err() != nil {
				return nil
			}
			return &TargetError{Stage: "read back " + k, Err: err}
		}
		if pl.Readback != nil {
			trial.Readback = pl.Readback(k)
		}
		if retrier != nil {
			trial.Retries = retrier.Retries() - before
		}
		if batch != nil && len(batchKeys) < maxBatchKeys {
			batchKeys = append(batchKeys, BatchKey{k, counted})
		}
		trialKey.Store(nil)
		sc.Decide(&trial, r.label)
		RecordHistory(sc, &trial, r.label, r.ev)
		rec.Add(trial)
		// Never used again: a simulated store's memory stays flat over
		// trials, a real store keeps nothing of a finished run.
		_ = targets.Done(ctx, t.Store, k)
		if r.onTrial != nil {
			r.onTrial(r.label, i+1, r.trials)
		}
	}
	return nil
}

// ArrivalSpread is the max minus the min of the server's arrival instants,
// zero when the server did not report them.
func ArrivalSpread(ts []time.Time) time.Duration {
	if len(ts) == 0 {
		return 0
	}
	lo, hi := ts[0], ts[0]
	for _, t := range ts[1:] {
		if t.Before(lo) {
			lo = t
		}
		if t.After(hi) {
			hi = t
		}
	}
	return hi.Sub(lo)
}

func ReleaseSpread(reqs []results.Request) time.Duration {
	if len(reqs) == 0 {
		return 0
	}
	lo, hi := reqs[0].Invoke, reqs[0].Invoke
	for _, r := range reqs[1:] {
		lo, hi = min(lo, r.Invoke), max(hi, r.Invoke)
	}
	return hi - lo
}

func NewRunID() string {
	var b [4]byte
	_, _ = rand.Read(b[:])
	return hex.EncodeToString(b[:])
}

// RefuseBackground says why a background load cannot run on t, which a
// run or a page calls name, or nil when it can: a store in virtual time
// has no rate to load it at.
func RefuseBackground(name string, t *targets.Target) error {
	if VirtualClock(t.Store) != nil {
		return usage.Fieldf("Background", "{} on %s: it runs in virtual time, which has no rate; run it on {RealClock}", name)
	}
	return nil
}
