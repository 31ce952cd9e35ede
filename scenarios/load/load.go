package load

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"sync"
	"sync/atomic"
	"time"

	"github.com/racelab/racelab/internal/usage"
	"github.com/racelab/racelab/scenarios/engine"
	"github.com/racelab/racelab/scenarios/pace"
	"github.com/racelab/racelab/scenarios/results"
	"github.com/racelab/racelab/targets"
	"github.com/racelab/racelab/targets/clock"
	"github.com/racelab/racelab/targets/story"
)

// Defaults of a LoadPlan, in one place.
const (
	// DefaultLoadDuration is how long a load runs when neither a duration
	// nor a request count is given.
	DefaultLoadDuration = 10 * time.Second
	// DefaultConcurrency is the closed model's workers, as hey's -c.
	DefaultConcurrency = 50
	// DefaultMaxInFlight caps the open model's requests in flight: past
	// it, arrivals wait (and count as late) rather than piling up
	// goroutines and sockets without bound.
	DefaultMaxInFlight = 1000
	// DefaultLoadKeys is how many fresh keys a load spreads over.
	DefaultLoadKeys = 100
	// MaxLoadKeys bounds the keys: memory and the read-back grow with them.
	MaxLoadKeys = 1_000_000
	// MaxConcurrency bounds the closed model's workers.
	MaxConcurrency = 100_000
	// DefaultSamples is how many requests a load keeps one by one when
	// they are asked for (-o csv) without a number; MaxSamples bounds it:
	// each costs about a hundred bytes, in memory and in a saved result.
	DefaultSamples = 100_000
	MaxSamples     = 1_000_000
	// MaxLoadRequests bounds a count of requests: a billion is hours at
	// the fastest rate racelab paces, and far past any useful load.
	MaxLoadRequests = 1_000_000_000
	// MaxLoadDuration bounds how long a load may be asked to send, a
	// count of requests at its last rate included.
	MaxLoadDuration = 7 * 24 * time.Hour

	// prepareCap bounds the connections a target readies before a load:
	// a database's own limit (PostgreSQL's 100) must not fail the start,
	// and the rest open on demand.
	prepareCap = 64
	// readBackWorkers read the keys back after a load, in parallel.
	readBackWorkers = 16
)

// LoadPlan says what load to put on which targets. Zero fields take the
// package defaults.
type LoadPlan struct {
	Scenario *engine.Scenario
	// Targeting is the targets (the scenario's line-up when none are
	// given), each given the same load, one after the other; how they are
	// opened; each request's time limit; and what each must do.
	engine.Targeting

	// Schedule, when set, is the open model's arrivals; otherwise the
	// load is closed, with Concurrency workers.
	Schedule    *pace.Schedule
	Concurrency int
	// Duration bounds a closed load (an open one lasts its schedule);
	// Requests, when set, sends exactly that many instead, in either
	// model (an open schedule then holds its last rate until they are
	// all sent).
	Duration time.Duration
	Requests int64
	// MaxInFlight caps the open model's requests in flight.
	MaxInFlight int
	// Samples is how many requests each target keeps one by one
	// (LoadTarget.Samples): a uniform sample of them past it; 0 keeps none.
	Samples int
	// Keys is how many fresh keys the requests spread over, KeyDist how.
	Keys    int
	KeyDist results.KeyDist
	// Seed picks the keys, and the arrivals of a Poisson schedule.
	Seed int64
	// Thresholds are checked on every target after its load.
	Thresholds []results.Threshold
	// Watch, when set, is called as each target's load starts with a
	// function that reads its progress, and returns a function called
	// when it ends (the progress bar).
	Watch func(target string, plan LoadProgress, now func() LoadProgress) (done func())
	// Sharding, when set, plays one shard's share of the load (its share
	// of the rate, the workers or the requests) from the agreed start,
	// and leaves the read-back to the merge (LoadShard).
	Sharding *engine.Sharding
	// phase delays a shard's start past the agreed instant, so that the
	// shards' evenly spaced arrivals interleave rather than coincide.
	phase time.Duration
}

// LoadProgress is a load so far, for a progress bar.
type LoadProgress struct {
	Elapsed, Total time.Duration
	// Sent of Requests, when the load is a count of requests.
	Sent, Requests int64
	Answered       int64
	Errors         int64
	// LastSecond is the answers in the last whole second; P99 is over
	// every answer so far.
	LastSecond int64
	P99        time.Duration
}

// The models a load sends by (results.LoadResult.Model).
const (
	// Open: requests arrive on a schedule whatever the answers (wrk2,
	// vegeta, k6's arrival-rate executors); latency counts from each
	// request's intended instant, so a stalled server shows.
	Open results.LoadModel = "open"
	// Closed: C workers each send the next request when the last one is
	// answered (hey, wrk); a stalled server slows the senders down.
	Closed results.LoadModel = "closed"
)

// Model is the plan's model.
func (p *LoadPlan) Model() results.LoadModel {
	if p.Schedule != nil {
		return Open
	}
	return Closed
}

// Wants says, for each field of a LoadPlan a value can be wrong for, what
// a right one is, as engine.Wants does for a Plan.
var Wants = usage.Wants{
	"Requests":    fmt.Sprintf("1 to %d", MaxLoadRequests),
	"Duration":    fmt.Sprintf("a positive duration such as 30s, at most %s", MaxLoadDuration),
	"Concurrency": fmt.Sprintf("1 to %d", MaxConcurrency),
	"MaxInFlight": fmt.Sprintf("1 to %d", MaxConcurrency),
	"Keys":        fmt.Sprintf("1 to %d", MaxLoadKeys),
	"Samples":     fmt.Sprintf("0 to %d", MaxSamples),
	"Timeout":     engine.Wants["Timeout"],
}

// Validate checks the plan's own fields without running anything (Load
// then checks its targets as a run does). Each error is a
// *usage.FieldError naming the field at fault.
func (p *LoadPlan) Validate() []error {
	if p.Scenario == nil {
		return []error{usage.Fieldf("Scenario", "no scenario")}
	}
	var errs []error
	usage.Within(&errs, Wants, "Requests", p.Requests, 0, MaxLoadRequests)
	usage.Within(&errs, Wants, "Duration", p.Duration, 0, MaxLoadDuration)
	usage.Within(&errs, Wants, "Concurrency", p.Concurrency, 0, MaxConcurrency)
	usage.Within(&errs, Wants, "MaxInFlight", p.MaxInFlight, 0, MaxConcurrency)
	usage.Within(&errs, Wants, "Keys", p.Keys, 0, MaxLoadKeys)
	usage.Within(&errs, Wants, "Samples", p.Samples, 0, MaxSamples)
	usage.NotBelow(&errs, Wants, "Timeout", p.Timeout, 0)
	if p.Sharding != nil {
		if err := engine.Splittable(p.Scenario); err != nil {
			errs = append(errs, err)
		} else if m := p.Scenario.Settings; m != nil && m.Race != nil {
			// A load's key is judged by the file's rule on every answer
			// it got, and a load's part keeps only counts.
			errs = append(errs, usage.Fieldf("Shard", "%s is a race file: its rule judges every answer a key got, which a sharded load's parts do not keep; "+
				"run it sharded (racelab run FILE {}), or load it without {}", m.Race.Path))
		}
	}
	if s := p.Schedule; s != nil {
		switch {
		case s.Duration() <= 0 && p.Requests == 0:
			errs = append(errs, usage.Fieldf("Duration", "an open load needs a duration or {Requests}"))
		case p.Requests > 0 && lastRate(*s) <= 0:
			errs = append(errs, usage.Fieldf("Requests", "{} %d needs a last rate above 0 to send them all", p.Requests))
		case s.Duration() == math.MaxInt64:
			errs = append(errs, usage.Fieldf("Stages", "{} add up past the longest duration racelab counts (about 292 years); want at most %s in all", MaxLoadDuration))
		case s.Duration() > MaxLoadDuration:
			errs = append(errs, usage.Fieldf("Stages", "{} last %s; want at most %s in all", s.Duration(), MaxLoadDuration))
		case p.Requests > 0 && float64(p.Requests)/float64(lastRate(*s)) > MaxLoadDuration.Seconds():
			errs = append(errs, usage.Fieldf("Requests", "{} %d at %s would take longer than %s; want fewer, or a higher rate",
				p.Requests, lastRate(*s), MaxLoadDuration))
		case s.Expected() == 0 && p.Requests == 0:
			errs = append(errs, usage.Fieldf("Schedule", "the schedule sends no request in %s; raise the rate or the duration", s.Duration()))
		}
	}
	return errs
}

func lastRate(s pace.Schedule) pace.Rate {
	if n := len(s.Stages); n > 0 {
		return s.Stages[n-1].Target
	}
	return s.Start
}

// Load puts the plan's load on each target in turn, then reads every key
// it sent a request back and judges the story's rule on each, as Run
// judges a trial. The error is a usage error; a target that fails is
// recorded in its LoadTarget and the load goes on. When ctx is cancelled,
// Load returns what it has, marked Interrupted.
func Load(ctx context.Context, p LoadPlan) (*results.LoadResult, error) {
	if errs := p.Validate(); len(errs) > 0 {
		return nil, errs[0]
	}
	plan := engine.Plan{Scenario: p.Scenario, Catalog: p.Catalog, Targets: p.Targets, Expect: p.Expect, ExpectOf: p.ExpectOf}
	rs, err := plan.Resolve()
	if err != nil {
		return nil, err
	}
	sc := p.Scenario
	p.Keys = cmp.Or(p.Keys, DefaultLoadKeys)
	p.Timeout = cmp.Or(p.Timeout, engine.DefaultTimeout)
	p.MaxInFlight = cmp.Or(p.MaxInFlight, DefaultMaxInFlight)
	if p.Schedule == nil {
		p.Concurrency = cmp.Or(p.Concurrency, DefaultConcurrency)
		if p.Requests == 0 {
			p.Duration = cmp.Or(p.Duration, DefaultLoadDuration)
		}
	} else {
		p.Duration = p.Schedule.Duration()
	}
	res := &results.LoadResult{
		Schema:      results.LoadSchemaVersion,
		RunID:       results.NewRunID(),
		Scenario:    sc.Name,
		Rule:        sc.Rule,
		Model:       p.Model(),
		Concurrency: p.Concurrency,
		Duration:    p.Duration,
		Requests:    p.Requests,
		Keys:        p.Keys,
		KeyDist:     p.KeyDist.String(),
		Timeout:     p.Timeout,
		Seed:        p.Seed,
		Uncounted:   sc.Settings.Uncounted(),
	}
	if s := p.Schedule; s != nil {
		res.Schedule = &results.LoadSchedule{Start: float64(s.Start), Spacing: string(s.Spacing)}
		for _, st := range s.Stages {
			res.Schedule.Stages = append(res.Schedule.Stages, results.LoadStage{Duration: st.Duration, Rate: float64(st.Target)})
		}
		res.MaxInFlight = p.MaxInFlight
	}
	for _, t := range p.Thresholds {
		res.Thresholds = append(res.Thresholds, t.Expr)
	}
	// Loads run on the real clock: throughput and latency are the point,
	// and a simulated store's delays are then real waits.
	opts := append([]targets.Option{targets.WithSeed(p.Seed), targets.WithVirtualTime(false)}, p.Options...)
	opened, openErr, err := engine.OpenAll(ctx, rs, opts)
	if err != nil {
		return nil, err
	}
	defer engine.CloseAll(opened)
	runID := engine.NewRunID()
	run := &p // what this process sends: the whole load, or a shard's share
	if sh := p.Sharding; sh != nil {
		if run, err = p.share(rs); err != nil {
			return nil, err
		}
		runID = sh.RunID
	}
	for ti, r := range rs {
		if ctx.Err() != nil {
			break
		}
		lt := results.LoadTarget{Name: r.Name, Target: r.Spec.Name(), Spec: r.Raw, Guarantee: r.Entry.Guarantee}
		if r.Spec.URL != nil {
			lt.Spec = lt.Target
		}
		lt.Expect, lt.Strict = engine.ExpectationOf(r.Entry, r.Expect)
		if openErr[ti] != nil {
			lt.Error = openErr[ti].Error()
		} else {
			lr := loadRun{plan: run, sc: sc, target: opened[ti], label: lt.Target,
				key: func(k int) string { return KeyName(sc, runID, ti, k) }}
			if err := engine.PlayThenClose(&opened[ti], func() error { return lr.run(ctx, &lt) }); err != nil {
				lt.Error = err.Error()
			}
		}
		res.Targets = append(res.Targets, lt)
	}
	res.Interrupted = ctx.Err() != nil
	labels := res.Labels()
	for i := range res.Targets {
		t := &res.Targets[i]
		if t.Error != "" || res.Interrupted || p.Sharding != nil {
			continue
		}
		for _, th := range p.Thresholds {
			t.Thresholds = append(t.Thresholds, th.Check(t, labels[i]))
		}
	}
	return res, nil
}

// KeyName is the name of key k of a load's target ti (numbered among the
// load's targets from 0) in the run runID: the load's own and fresh, and
// the same in the load and in the merge that reads a sharded load's keys
// back.
func KeyName(sc *engine.Scenario, runID string, ti, k int) string {
	return fmt.Sprintf("%s-load-%s-%d-%d", sc.KeyPrefix, runID, ti, k)
}

// loadRun is the load on one opened target.
type loadRun struct {
	plan   *LoadPlan
	sc     *engine.Scenario
	target *targets.Target
	label  string
	key    func(k int) string

	pl     engine.Player
	meter  *meter
	counts []keyTotal
	sent   atomic.Int64
	late   atomic.Int64
	drop   atomic.Int64
	seq    atomic.Int64 // request numbers, for the stories that use one (the buyer)
	// lastSend is when the last request went, in nanoseconds from the start.
	lastSend atomic.Int64
	start    time.Time
}

// keyTotal is what one key's requests were told. Its methods are safe for
// concurrent use.
type keyTotal struct {
	allowed, refused, errors atomic.Int64
	// name is the key's name once a request has made it: a load names the
	// same keys over and over, and a name made once is one allocation and
	// one format less a request.
	name atomic.Pointer[string]
}

// Add sums one answer into the key's total, as Tally.Add sums a trial:
// anything neither allowed nor refused is an error.
func (c *keyTotal) Add(o results.Outcome) {
	switch o {
	case results.Allowed:
		c.allowed.Add(1)
	case results.Refused:
		c.refused.Add(1)
	default:
		c.errors.Add(1)
	}
}

// run sends the load, reads the keys back and holds them to the rule, into lt.
func (r *loadRun) run(ctx context.Context, lt *results.LoadTarget) error {
	p := r.plan
	prep := min(cmp.Or(p.Concurrency, p.MaxInFlight), prepareCap)
	if err := r.target.Prepare(ctx, prep); err != nil {
		return &engine.TargetError{Stage: fmt.Sprintf("prepare %d connections", prep), Err: err}
	}
	if wu, ok := targets.WarmUpOf(r.target); ok {
		lt.WarmUp = &results.WarmUp{Connections: wu.Asked, Warmed: wu.Warmed, Took: wu.Took}
		if wu.Stopped != nil {
			lt.WarmUp.Stopped = wu.Stopped.Error()
		}
	}
	pl, ok := r.sc.Bind(r.target.Store)
	if !ok {
		return &engine.TargetError{Stage: fmt.Sprintf("cannot play %s (it has no %s)", r.sc.Name, r.sc.Needs)}
	}
	r.pl = pl
	r.counts = make([]keyTotal, p.Keys)
	if pl.Prelude != nil {
		// Each key is readied once, before the load, as a run readies
		// each trial's (a race file's setup requests): the load then
		// races on keys that exist, and the prelude's requests stay out
		// of its figures.
		err := eachKey(ctx, p.Keys, func(ctx context.Context, k int) error {
			rctx, cancel := context.WithTimeout(ctx, p.Timeout)
			defer cancel()
			if err := pl.Prelude(rctx, r.key(k), func(d time.Duration) error { return (clock.Real{}).Sleep(rctx, d) }); err != nil {
				return &engine.TargetError{Stage: "ready " + r.key(k), Err: err}
			}
			return nil
		})
		if err != nil || ctx.Err() != nil {
			return err
		}
	}
	if sh := p.Sharding; sh != nil && !sh.StartAt.IsZero() {
		engine.WaitUntil(ctx, sh.StartAt.Add(p.phase))
	}
	start := time.Now()
	r.start = start
	r.meter = newMeter(start)
	r.meter.max, r.meter.rng = p.Samples, rand.New(rand.NewPCG(uint64(p.Seed), 7))
	if p.Watch != nil {
		total := p.Duration
		done := p.Watch(r.label, LoadProgress{Total: total, Requests: p.Requests}, func() LoadProgress {
			answered, errs, p99, last := r.meter.snapshot()
			return LoadProgress{Elapsed: time.Since(start), Total: total, Sent: r.sent.Load(), Requests: p.Requests,
				Answered: answered, Errors: errs, P99: p99, LastSecond: last}
		})
		defer done()
	}
	if p.Schedule != nil {
		r.open(ctx, start)
	} else {
		r.closed(ctx, start)
	}
	end := time.Now()
	lt.Elapsed = end.Sub(start)
	lt.Sending = time.Duration(r.lastSend.Load())
	lt.Latency, lt.Histogram, lt.Buckets, lt.Series, lt.ErrorKinds = r.meter.finish(end)
	lt.StatusCodes = r.meter.statuses
	lt.Samples = r.meter.sampled()
	lt.Sent, lt.Late, lt.Dropped = r.sent.Load(), r.late.Load(), r.drop.Load()
	lt.Answered, lt.Errors = r.meter.answered, r.meter.errors
	for i := range r.counts {
		lt.Allowed += r.counts[i].allowed.Load()
		lt.Refused += r.counts[i].refused.Load()
	}
	if ctx.Err() != nil {
		return nil // an interrupted load proves nothing: no read-back
	}
	if p.Sharding != nil {
		lt.KeyCounts = keyCountsOf(r.counts)
		return nil // the merge reads the keys back, once every shard is done
	}
	return r.readBack(ctx, lt)
}

// picker draws keys: uniform, or Zipf-hot on the first ones.
type picker struct {
	rng  *rand.Rand
	zipf *rand.Zipf
	n    int
}

func newPicker(seed int64, stream uint64, n int, d results.KeyDist) *picker {
	rng := rand.New(rand.NewPCG(uint64(seed), stream))
	pk := &picker{rng: rng, n: n}
	if d.Zipf > 1 && n > 1 {
		pk.zipf = rand.NewZipf(rng, d.Zipf, 1, uint64(n-1))
	}
	return pk
}

func (pk *picker) next() int {
	if pk.zipf != nil {
		return int(pk.zipf.Uint64())
	}
	return pk.rng.IntN(pk.n)
}

// one sends one request on key k and records it; latency counts from
// intended, which is when it was meant to be sent.
func (r *loadRun) one(ctx context.Context, k int, intended time.Time) {
	i := int(r.seq.Add(1) - 1)
	r.noteSend(time.Since(r.start))
	var status int // the HTTP status, when the target is a service
	rctx, cancel := context.WithTimeout(story.WithStatus(ctx, &status), r.plan.Timeout)
	a := r.pl.Do(rctx, r.keyName(k), i)
	cancel()
	now := time.Now()
	if ctx.Err() != nil && a.Outcome == results.Errored {
		return // cut short by the interrupt: neither an answer nor a failure
	}
	r.counts[k].Add(a.Outcome)
	s := results.LoadSample{At: intended.Sub(r.start), Key: k, Outcome: a.Outcome, Status: status}
	if a.Outcome != results.Allowed && a.Outcome != results.Refused {
		if a.Err == nil {
			a.Err = errors.New("failed without an error")
		}
		s.Error = errorKind(a.Err)
	}
	if a.Err == nil {
		s.Latency = now.Sub(intended)
	}
	r.meter.Add(s, now, a.Err)
}

// keyName is r.key(k), made once.
func (r *loadRun) keyName(k int) string {
	if name := r.counts[k].name.Load(); name != nil {
		return *name
	}
	name := r.key(k)
	r.counts[k].name.Store(&name)
	return name
}

// noteSend keeps the latest instant a request was sent.
func (r *loadRun) noteSend(at time.Duration) {
	for {
		last := r.lastSend.Load()
		if int64(at) <= last || r.lastSend.CompareAndSwap(last, int64(at)) {
			return
		}
	}
}

// closed runs Concurrency workers until the duration is over or the
// requests are all sent. A worker never starts a request past the end,
// and never cuts one short at the end: an answer cut off would be a
// failure racelab made up.
func (r *loadRun) closed(ctx context.Context, start time.Time) {
	p := r.plan
	deadline := start.Add(p.Duration)
	var wg sync.WaitGroup
	for w := range p.Concurrency {
		pk := newPicker(p.Seed, uint64(w)+1, p.Keys, p.KeyDist)
		wg.Go(func() {
			for ctx.Err() == nil {
				if p.Requests > 0 {
					if r.sent.Add(1) > p.Requests {
						r.sent.Add(-1)
						return
					}
				} else {
					if !time.Now().Before(deadline) {
						return
					}
					r.sent.Add(1)
				}
				sent := time.Now()
				r.one(ctx, pk.next(), sent)
			}
		})
	}
	wg.Wait()
}

// open sends the schedule's arrivals, each when it is due, through at
// most MaxInFlight requests in flight. An arrival that finds no room
// waits for one and counts as late when it goes more than LateAfter
// behind; one that would go more than the timeout behind is not sent at
// all (it would have timed out anyway) and counts as an error, so the
// load ends within a timeout of its schedule even against a stalled
// server.
func (r *loadRun) open(ctx context.Context, start time.Time) {
	p := r.plan
	sched := *p.Schedule
	if p.Requests > 0 {
		// Hold the last rate for as long as the count needs, and then some.
		rate := float64(lastRate(sched))
		hold := time.Duration(float64(p.Requests)/rate*float64(time.Second)) + time.Second
		sched.Stages = append(sched.Stages, pace.Stage{Duration: hold, Target: lastRate(sched)})
		if sched.Duration() == hold {
			sched.Start = lastRate(sched)
		}
	}
	sched.Seed = uint64(p.Seed)
	slots := make(chan struct{}, p.MaxInFlight)
	pk := newPicker(p.Seed, 0, p.Keys, p.KeyDist)
	var wg sync.WaitGroup
	timer := time.NewTimer(time.Hour)
	defer timer.Stop()
	var n int64
	for at := range sched.Arrivals() {
		if ctx.Err() != nil || (p.Requests > 0 && n >= p.Requests) {
			break
		}
		n++
		k := pk.next() // drawn for every arrival, sent or not: the keys are the seed's
		intended := start.Add(at)
		if wait := time.Until(intended); wait > 0 {
			timer.Reset(wait)
			select {
			case <-timer.C:
			case <-ctx.Done():
				continue
			}
		}
		select {
		case slots <- struct{}{}:
		default:
			// No room: wait for a slot, but not past the point where the
			// request could no longer be answered within its timeout.
			giveUp := time.NewTimer(time.Until(intended.Add(p.Timeout)))
			select {
			case slots <- struct{}{}:
				giveUp.Stop()
			case <-giveUp.C:
				r.late.Add(1)
				r.drop.Add(1)
				// Never sent: the store saw nothing, so the key's counts
				// do not change; the load's failures do.
				r.meter.Add(results.LoadSample{At: at, Key: k, Outcome: results.Errored, Error: KindDropped},
					time.Now(), errDropped{p.MaxInFlight, p.Timeout})
				continue
			case <-ctx.Done():
				giveUp.Stop()
				continue
			}
		}
		if time.Since(intended) > results.LateAfter {
			r.late.Add(1)
		}
		r.sent.Add(1)
		wg.Go(func() {
			defer func() { <-slots }()
			r.one(ctx, k, intended)
		})
	}
	wg.Wait()
}

// errDropped is an arrival that found every slot taken for longer than
// the timeout.
type errDropped struct {
	max     int
	timeout time.Duration
}

// Error says what happened in the load's words; what to change is the
// command line's to say, with its own flags (Advice).
func (e errDropped) Error() string {
	return fmt.Sprintf("not sent: all %d in-flight slots stayed taken for the %s timeout", e.max, e.timeout)
}

// Advice is what a finished load says to change in its plan, as field
// errors that a command line says with its flags: an open load whose
// arrivals found every in-flight slot taken for a whole timeout.
func Advice(res *results.LoadResult) []*usage.FieldError {
	var out []*usage.FieldError
	labels := res.Labels()
	for i, t := range res.Targets {
		if t.Dropped > 0 {
			out = append(out, usage.Fieldf("MaxInFlight", "%s: %s found all %d in-flight slots taken for the %s timeout and went unsent; raise {} or lower {Schedule}",
				labels[i], results.Plural(t.Dropped, "arrival"), res.MaxInFlight, res.Timeout))
		}
	}
	return out
}

// readBack reads every key that was sent a request back and holds it to
// the story's own rule, one key as one trial: the same rule, the same
// words, the same verdict as a run.
func (r *loadRun) readBack(ctx context.Context, lt *results.LoadTarget) error {
	kr := KeyReadback{Scenario: r.sc, Player: r.pl, Store: r.target.Store, Label: r.label, Keys: r.plan.Keys, Timeout: r.plan.Timeout, Key: r.key,
		Count: func(k int) (int64, int64, int64) {
			c := &r.counts[k]
			return c.allowed.Load(), c.refused.Load(), c.errors.Load()
		}}
	return kr.Run(ctx, lt)
}

// KeyReadback reads a load's keys back and holds each to the story's rule:
// a load's own keys, or the sums of a sharded load's parts
// (shards.VerifyLoad).
type KeyReadback struct {
	Scenario *engine.Scenario
	Player   engine.Player
	Store    any
	Label    string
	Keys     int
	Timeout  time.Duration
	Key      func(k int) string
	// Count is what key k's requests were told.
	Count func(k int) (allowed, refused, errors int64)
}

// Run reads every key that was sent a request back and judges each by the
// story's rule as one trial, summed into lt.Keys. A story that keeps what
// a trial read back for its rule (a race file: Player.Readback) has each
// key judged on its own readback, with the key's own counts and answers.
func (kr KeyReadback) Run(ctx context.Context, lt *results.LoadTarget) error {
	// Only the keys that were sent a request are read back: the keys are
	// the load's own and fresh, so one never asked holds nothing, and a
	// load of 100 requests over a million keys reads 100 at most.
	var sent []int
	for k := range kr.Keys {
		if a, rf, e := kr.Count(k); a+rf+e > 0 {
			sent = append(sent, k)
		}
	}
	counted := make([]int64, len(sent))
	readErr := make([]error, len(sent))
	_ = eachKey(ctx, len(sent), func(ctx context.Context, i int) error {
		rctx, cancel := context.WithTimeout(ctx, kr.Timeout)
		counted[i], readErr[i] = kr.Player.Read(rctx, kr.Key(sent[i]))
		cancel()
		return nil
	})
	if ctx.Err() != nil {
		return nil
	}
	var tally results.Tally
	worstBroken := false
	for i, k := range sent {
		if readErr[i] != nil {
			return &engine.TargetError{Stage: "read back " + kr.Key(k), Err: readErr[i]}
		}
		a, rf, e := kr.Count(k)
		t := results.Trial{Index: k, Key: kr.Key(k), Allowed: int(a), Refused: int(rf), Errors: int(e), Counted: counted[i]}
		if kr.Player.Readback != nil {
			t.Readback = kr.Player.Readback(t.Key) // taken for every key: the player forgets it
		}
		kr.Scenario.Judge(&t, kr.Label)
		// A broken key is worse than any that held, whatever it lost: a
		// race file's rule breaks with nothing counted lost or over.
		// Measured against the worst key so far, not the tally's worst
		// trial: that one may be a key that held with figures astray.
		w := &lt.WorstKey
		worse := tally.Trials == 0 || t.Broken && !worstBroken ||
			t.Broken == worstBroken && (t.Severity > w.Severity || t.Severity == w.Severity && t.Over+t.Lost > w.Over+w.Lost)
		tally.Add(&t)
		if worse {
			worstBroken = t.Broken
			lt.WorstKey = results.KeyAccount{Key: t.Key, Allowed: int64(t.Allowed), Refused: int64(t.Refused),
				Errors: int64(t.Errors), Counted: t.Counted, Lost: t.Lost, Over: t.Over, Why: kr.Scenario.Account(&t, kr.Label), Severity: t.Severity}
		}
		_ = targets.Done(ctx, kr.Store, t.Key)
	}
	lt.Keys = tally
	lt.Counted = tally.CountedSum
	return nil
}

// eachKey calls f for keys 0 to n-1 from readBackWorkers goroutines, each
// key once, and returns the first error of a key (the lowest-numbered);
// the keys after a failure or a cancelled ctx are not started.
func eachKey(ctx context.Context, n int, f func(ctx context.Context, k int) error) error {
	errs := make([]error, n)
	var next atomic.Int64
	var failed atomic.Bool
	var wg sync.WaitGroup
	for range min(readBackWorkers, n) {
		wg.Go(func() {
			for {
				k := int(next.Add(1) - 1)
				if k >= n || ctx.Err() != nil || failed.Load() {
					return
				}
				if errs[k] = f(ctx, k); errs[k] != nil {
					failed.Store(true)
				}
			}
		})
	}
	wg.Wait()
	for _, err := range errs {
		if err != nil {
			return err
		}
	}
	return nil
}

// keyCountsOf lists the keys that were sent a request, in order.
func keyCountsOf(counts []keyTotal) []results.KeyCount {
	var out []results.KeyCount
	for k := range counts {
		c := results.KeyCount{Key: k, Allowed: counts[k].allowed.Load(), Refused: counts[k].refused.Load(), Errors: counts[k].errors.Load()}
		if c.Allowed+c.Refused+c.Errors > 0 {
			out = append(out, c)
		}
	}
	return out
}

// partOf is shard index's part of total split over of shards, as evenly
// as possible: the parts add up to total exactly.
func partOf(total int64, index, of int) int64 {
	return (int64(index)+1)*total/int64(of) - int64(index)*total/int64(of)
}

// share is the load this shard sends: its part of the workers, of the
// requests, or of every rate of the schedule, from its own seed (so that
// shards pick different keys and Poisson gaps). The result keeps the
// whole plan's figures; only the sending is shared.
func (p *LoadPlan) share(rs []engine.Resolved) (*LoadPlan, error) {
	sh := p.Sharding
	switch {
	case len(rs) != 1:
		return nil, usage.Fieldf("Targets", "a sharded load takes exactly one target ({Targets}); shard one load per target")
	case !engine.Shareable(rs[0].Spec, rs[0].Entry):
		return nil, engine.ErrNotShareable(rs[0].Spec.Name())
	case sh.Index < 0 || sh.Of < 1 || sh.Index >= sh.Of:
		return nil, usage.Fieldf("Shard", "shard %d of %d; want 0 to %d", sh.Index, sh.Of, sh.Of-1)
	case p.Requests > 0 && p.Requests < int64(sh.Of):
		return nil, usage.Fieldf("Requests", "%d shards cannot share {} %d; give each shard at least one", sh.Of, p.Requests)
	case p.Schedule == nil && p.Concurrency < sh.Of:
		return nil, usage.Fieldf("Concurrency", "%d shards cannot share {} %d; give each shard at least one worker", sh.Of, p.Concurrency)
	}
	if err := engine.CheckRunID(sh.RunID); err != nil {
		return nil, err
	}
	q := *p
	q.Seed = p.Seed + int64(sh.Index)*1_000_003
	if p.Requests > 0 {
		q.Requests = partOf(p.Requests, sh.Index, sh.Of)
	}
	if p.Schedule == nil {
		q.Concurrency = int(partOf(int64(p.Concurrency), sh.Index, sh.Of))
		return &q, nil
	}
	of := pace.Rate(sh.Of)
	s := *p.Schedule
	s.Start /= of
	s.Stages = make([]pace.Stage, len(p.Schedule.Stages))
	for i, st := range p.Schedule.Stages {
		s.Stages[i] = pace.Stage{Duration: st.Duration, Target: st.Target / of}
	}
	q.Schedule = &s
	q.MaxInFlight = max(1, int(partOf(int64(p.MaxInFlight), sh.Index, sh.Of)))
	if s.Spacing == pace.Even {
		// Shard i starts i arrivals of the whole rate late, so that the
		// shards' even arrivals fall between each other's, as one
		// process's would, rather than N at a time.
		first := p.Schedule.Start
		if first <= 0 && len(p.Schedule.Stages) > 0 {
			first = p.Schedule.Stages[0].Target
		}
		if first > 0 {
			q.phase = time.Duration(float64(sh.Index) / float64(first) * float64(time.Second))
		}
	}
	return &q, nil
}
