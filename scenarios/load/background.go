package load

import (
	"cmp"
	"context"
	"fmt"
	"io"
	"sync"
	"sync/atomic"
	"time"

	"github.com/racelab/racelab/internal/usage"
	"github.com/racelab/racelab/scenarios/engine"
	"github.com/racelab/racelab/scenarios/pace"
	"github.com/racelab/racelab/targets"
)

// Defaults of a Plan, in one place.
const (
	// DefaultKeys is how many keys of its own the load spreads over.
	DefaultKeys = 100
	// maxSpan is how long a background's schedule lasts if never stopped:
	// far past any run, since stop, not the schedule, ends it.
	maxSpan = 7 * 24 * time.Hour
	// maxOnKeyInFlight bounds the reads of the trial's key in flight, as
	// load's MaxInFlight bounds its own requests.
	maxOnKeyInFlight = 256
	// sharedName is what the load calls the shared store it is handed.
	sharedName = "background"
)

// Plan says what load runs beside the bursts.
type Plan struct {
	// Rate is the load's arrivals per second (open model).
	Rate pace.Rate
	// Keys is how many keys of its own the load spreads over; 0 means
	// DefaultKeys.
	Keys int
	// OnKey also reads the key of the trial in progress, at Rate.
	OnKey bool
	// Timeout bounds each request; 0 means engine.DefaultTimeout.
	Timeout time.Duration
	// Seed picks the load's keys.
	Seed int64
}

// Parse makes a plan of a rate as the user writes it ("200/s", "90/m"),
// the load's own keys and whether it reads the trials' keys too, checked:
// the error is the first *usage.FieldError.
func Parse(rate string, keys int, onKey bool) (Plan, error) {
	r, err := pace.ParseRate(rate)
	if err != nil {
		return Plan{}, usage.Fieldf("Background", "{} %q: want arrivals per second above 0, such as 200/s", rate)
	}
	p := Plan{Rate: r, Keys: keys, OnKey: onKey}
	if errs := p.Validate(); len(errs) > 0 {
		return Plan{}, errs[0]
	}
	return p, nil
}

// Validate checks the plan's own fields; each error is a
// *usage.FieldError naming the field at fault.
func (p Plan) Validate() []error {
	var errs []error
	if !(p.Rate > 0) {
		errs = append(errs, usage.Fieldf("Background", "{} %v: want a rate above 0, such as 200/s", p.Rate))
	}
	if p.Keys < 0 || p.Keys > MaxLoadKeys { // 0: DefaultKeys
		errs = append(errs, usage.Fieldf("BackgroundKeys", "{} %d: want 1 to %d", p.Keys, MaxLoadKeys))
	}
	return errs
}

// Summary is what one target's background load came to.
type Summary struct {
	// Target is the target's label, as the report names it.
	Target string `json:"target"`
	// Rate is the arrivals per second asked for; Keys the load's own keys.
	Rate  float64 `json:"rate"`
	Keys  int     `json:"keys"`
	OnKey bool    `json:"on_key,omitempty"`
	// Elapsed is how long the load ran; Sent, Answered and Errors count
	// its requests, as a load's do (results.LoadTarget).
	Elapsed  time.Duration `json:"elapsed_ns"`
	Sent     int64         `json:"sent"`
	Answered int64         `json:"answered"`
	Errors   int64         `json:"errors"`
	// P99 is over the answered requests, from each one's intended instant.
	P99 time.Duration `json:"p99_ns"`
	// KeyReads and KeyErrors count the reads of the trials' own keys
	// (OnKey).
	KeyReads  int64 `json:"key_reads,omitempty"`
	KeyErrors int64 `json:"key_errors,omitempty"`
	// Error is why the load could not run, if it could not.
	Error string `json:"error,omitempty"`
}

// Throughput is the answers per second.
func (s Summary) Throughput() float64 {
	if s.Elapsed <= 0 {
		return 0
	}
	return float64(s.Answered) / s.Elapsed.Seconds()
}

// Runner runs a Plan beside each target's trials: its Start is an
// engine.Plan's Background.
type Runner struct {
	plan Plan
	sc   *engine.Scenario
	mu   sync.Mutex
	sums []Summary
}

// New returns a Runner of p for the story sc.
func New(p Plan, sc *engine.Scenario) *Runner { return &Runner{plan: p, sc: sc} }

// Summaries are the targets' summaries so far, in the order they ran.
func (r *Runner) Summaries() []Summary {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]Summary(nil), r.sums...)
}

// Start starts the load on t, an opened target the trials use, and
// returns what stops it and records its Summary.
func (r *Runner) Start(ctx context.Context, label string, t *targets.Target, pl engine.Player, trialKey func() string) (stop func()) {
	p := r.plan
	ctx, cancel := context.WithCancel(ctx)
	// The trials' own store, handed to load as a shared entry: load
	// opens it without opening another, and leaves it open when done.
	shared := targets.NewCatalog(targets.Entry{Name: sharedName, Guarantee: t.Entry.Guarantee, Holds: t.Entry.Holds, Kind: t.Store, Shared: true,
		Open: func(context.Context, targets.Spec, targets.Options) (any, error) { return t.Store, nil }})
	sched := pace.Constant(p.Rate, maxSpan)
	sum := Summary{Target: label, Rate: float64(p.Rate), Keys: cmp.Or(p.Keys, DefaultKeys), OnKey: p.OnKey}
	var wg sync.WaitGroup
	// The first trial waits until the load is under way (readying a
	// store's connections for it can take longer than a few bursts):
	// until it is sending, and then until its first answer, so that the
	// bursts land on a store that is busy, however fast they are.
	sending, ended := make(chan struct{}), make(chan struct{})
	var once sync.Once
	started := func() { once.Do(func() { close(sending) }) }
	var progress func() LoadProgress // set before sending closes
	wg.Go(func() {
		defer close(ended)
		defer started() // a load that could not start holds no trial up
		res, err := Load(ctx, LoadPlan{Scenario: r.sc, Targeting: engine.Targeting{Catalog: shared, Targets: []string{sharedName}, Timeout: p.Timeout}, Schedule: &sched,
			Keys: sum.Keys, Seed: p.Seed,
			Watch: func(_ string, _ LoadProgress, now func() LoadProgress) func() {
				progress = now
				started()
				return func() {}
			}})
		switch {
		case err != nil:
			sum.Error = err.Error()
		case len(res.Targets) > 0:
			lt := res.Targets[0]
			sum.Elapsed, sum.Sent, sum.Answered, sum.Errors, sum.P99, sum.Error = lt.Elapsed, lt.Sent, lt.Answered, lt.Errors, lt.Latency.P99, lt.Error
		}
	})
	var reads, readErrs atomic.Int64
	if p.OnKey {
		wg.Go(func() { readKey(ctx, p, pl, trialKey, &reads, &readErrs) })
	}
	<-sending
	if progress != nil {
		firstAnswer(ctx, progress, ended)
	}
	return func() {
		cancel()
		wg.Wait()
		sum.KeyReads, sum.KeyErrors = reads.Load(), readErrs.Load()
		r.mu.Lock()
		r.sums = append(r.sums, sum)
		r.mu.Unlock()
	}
}

// firstAnswer returns once the load has had an answer or an error, or
// has ended, or ctx has. It looks every millisecond: load says its
// progress by being asked, as a progress bar asks it.
func firstAnswer(ctx context.Context, progress func() LoadProgress, ended <-chan struct{}) {
	tick := time.NewTicker(time.Millisecond)
	defer tick.Stop()
	for {
		if p := progress(); p.Answered+p.Errors > 0 {
			return
		}
		select {
		case <-tick.C:
		case <-ended:
			return
		case <-ctx.Done():
			return
		}
	}
}

// readKey reads the trial's key at the plan's rate while a trial is in
// progress, until ctx ends. A read cut short by the stop is not counted.
func readKey(ctx context.Context, p Plan, pl engine.Player, trialKey func() string, reads, errs *atomic.Int64) {
	timeout := cmp.Or(p.Timeout, engine.DefaultTimeout)
	slots := make(chan struct{}, maxOnKeyInFlight)
	var wg sync.WaitGroup
	defer wg.Wait()
	tick := time.NewTicker(time.Duration(float64(time.Second) / float64(p.Rate)))
	defer tick.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-tick.C:
		}
		k := trialKey()
		if k == "" {
			continue
		}
		select {
		case slots <- struct{}{}:
		default:
			continue // every slot taken: this arrival is skipped, as load drops one
		}
		wg.Go(func() {
			defer func() { <-slots }()
			rctx, cancel := context.WithTimeout(ctx, timeout)
			_, err := pl.Read(rctx, k)
			cancel()
			if ctx.Err() != nil {
				return
			}
			reads.Add(1)
			if err != nil {
				errs.Add(1)
			}
		})
	}
}

// Write says each summary in one line, under the report: the background's
// throughput, p99 and errors beside the verdict the table gave.
func Write(w io.Writer, sums []Summary) error {
	for _, s := range sums {
		line := fmt.Sprintf("background on %s: %v asked over %d keys, %.0f/s answered, p99 %v, %d errors of %d sent",
			s.Target, pace.Rate(s.Rate), s.Keys, s.Throughput(), s.P99.Round(time.Microsecond), s.Errors, s.Sent)
		if s.OnKey {
			line += fmt.Sprintf("; %d reads of the trials' keys, %d errors", s.KeyReads, s.KeyErrors)
		}
		if s.Error != "" {
			line += "; " + s.Error
		}
		if _, err := fmt.Fprintln(w, line); err != nil {
			return err
		}
	}
	return nil
}
