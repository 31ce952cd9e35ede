package engine

import (
	"context"
	"fmt"
	"time"

	"github.com/racelab/racelab/internal/usage"
	"github.com/racelab/racelab/scenarios/results"
	"github.com/racelab/racelab/targets"
	"github.com/racelab/racelab/targets/httpapi/burst"
	"github.com/racelab/racelab/targets/story"
)

// Answer is what one request was told by the store.
type Answer struct {
	Outcome results.Outcome
	Value   int64
	Err     error
	// Arrival and Early come from staged targets; see targets.Reply.
	Arrival time.Time
	Early   bool
	// Figures are the story's own figures of the request, by name (the
	// window a rate limiter counted it in): Request.Figures.
	Figures map[string]int64
}

// Scenario is one story with one hard rule, in five named parts: the
// Tale told, the Request its trials send, the Verdict that judges them,
// the Teaching `racelab explain` and `racelab run` add, and the Tuning of
// its own settings. Each part is embedded, so that sc.Name, sc.Op and
// sc.Judge read as before; a story's definition names the parts.
//
// It is a struct of functions rather than an interface so that a story
// reads top to bottom in one place; Define builds one typed on its story
// interface, so that a story is one file and the engine, the reports and
// the CLI never name it.
type Scenario struct {
	Tale
	Request
	Verdict
	Teaching
	Tuning
	// bind types store for the story once, when a target is opened: ok
	// is false when store does not implement the story's interface.
	bind Binder
}

// Tale is a story in words, and whom it is played against: the name users
// type, the story and its rules as a report tells them, and its cast.
type Tale struct {
	// Name is what users type: "ten-hits-one-view".
	Name string
	// Title is the story in one line.
	Title string
	// Story tells the story in a paragraph.
	Story string
	// Rule is the hard rule in words.
	Rule string
	// SoftRule, for a story that judges a soft rule beside the hard one
	// (Verdict.Soft), is the soft rule in words.
	SoftRule string
	// Fix says how the fixed targets keep the hard rule, for `racelab
	// explain`.
	Fix string
	// Needs says in words what a store must be to play the story: "a
	// view counter".
	Needs string
	// Lineup is the default targets, naive first.
	Lineup []string
	// KeyPrefix starts every fresh key ("slug", "visitor", "item").
	KeyPrefix string
}

// Request is what a story's trials send, and how: its op and limit, how
// many requests, and whether they come as a burst, a stream over time or
// a script.
type Request struct {
	// Op is the story's request as the ops table names it: its route on
	// the HTTP contract, its words on the board and in histories. The
	// request itself is the story's own function (Define's do), which
	// every target runs, a staged HTTP burst included.
	Op story.Op
	// Limit is the request's limit, if it has one: a quota's downloads,
	// an item's stock.
	Limit int64
	// DefaultRequests is the story's N.
	DefaultRequests int
	// SequentialRequests is the story's N when the requests go one after
	// another (zero: DefaultRequests).
	SequentialRequests int
	// Stream, when set, fires each trial as arrivals over time rather
	// than a burst.
	Stream *Stream
	// Timed says the story's time scale is minutes to hours: with
	// virtual time on, the real stores play it in virtual time too
	// (targets.WithVirtualServers).
	Timed bool
	// Scripted says the story's trials are scripted rather than bursts
	// (five-checkouts' payment part): a saved one is judged again by
	// Judge alone, with no history to check.
	Scripted bool
	// Unsplittable, when set, says why shards cannot split the story's
	// trials: a race file whose burst sends what its setup captured,
	// which only the shard that ran the setup knows.
	Unsplittable string
}

// Verdict is how a story judges a trial: its hard rule and its soft one,
// what a trial came to in the story's words, the figures it records, and
// the checks of a trial's history and of a store's batch read.
type Verdict struct {
	// Judge is the story's hard rule: it fills in Lost, Over, Broken and
	// Why from the trial's outcomes and Counted.
	Judge func(t *results.Trial, target string)
	// Soft, when set, is the story's soft rule: whether the trial broke
	// it (Trial.SoftBroken).
	Soft func(t *results.Trial) bool
	// Damage says in the story's words how far a trial strayed, from its
	// Over and Lost ("4 oversold", "9 hits lost"); nil, or "" for a trial
	// that strayed, leaves it to the default words (Trial.SetDamage).
	Damage func(over, lost int64) string
	// DamageOf, when set, says it from the whole trial instead (a race
	// file's damage: expression over what it read back).
	DamageOf func(t *results.Trial) string
	// Tell says in words what a trial that held came to, as Why does for
	// one that broke.
	Tell func(t *results.Trial, target string) string
	// Figures declare how a report says the story's own trial figures,
	// which its Judge sets (Trial.SetFigure).
	Figures []results.Figure
	// Model is the story's sequential specification, for history checks;
	// the zero Model checks none.
	Model Model
	// Batch is the story's batch read on a store, nil when the story or
	// the store has none; see CheckBatch.
	Batch func(store any) BatchReader
}

// Teaching is what a story adds to `racelab explain` and `racelab run`
// beyond its bursts: its own replays, its own runs, its exercise.
type Teaching struct {
	// Extras are the story's own replays in `racelab explain`, after the
	// race and the fix every story shows (see explain.go).
	Extras []Extra
	// Parts are the story's own runs besides its bursts, such as
	// five-checkouts' payment part, each with its flag (see Part).
	Parts []Part
	// Ending, when set, is the last section of `racelab explain`, after
	// how the fix works: a story's exercise worked through.
	Ending func(ctx context.Context, x *Explainer) (Ending, error)
}

// Tuning is a story's own settings: the knobs it takes, how it is made
// again with others, and the settings it was made with. The story reads
// its knobs' values from a Settings itself (KnobOf.Read), in its own
// file; the engine, the results and the CLI know them only by name.
type Tuning struct {
	// Knobs are the settings the story takes: "stock", "rate", …, each
	// with its help and how its text is checked.
	Knobs []Knob
	// Vary makes the story with settings other than its defaults; nil
	// for a story without settings. A knob's text it cannot read is a
	// *usage.FieldError naming the knob.
	Vary func(results.Settings) (*Scenario, error)
	// Settings are the settings this story was made with, each knob as
	// the story read it, which a result records so that the story is
	// made again the same (Finder); nil for the defaults of a story that
	// records none.
	Settings *results.Settings
}

// Player is a store bound to a story: its request and its read-back.
type Player struct {
	// Do performs request i of a burst on key.
	Do func(ctx context.Context, key string, i int) Answer
	// Read reads what the store counted on key.
	Read func(ctx context.Context, key string) (int64, error)
	// ReadTrial reads it after a trial whose requests it is given (a
	// rate limiter reads the windows they were counted in).
	ReadTrial func(ctx context.Context, key string, reqs []results.Request) (int64, error)
	// Prelude, when set, readies key before the trial's requests are
	// released (stale-plan: subscribe, browse, cancel; a race file's
	// setup requests), waiting with sleep on the store's clock.
	Prelude func(ctx context.Context, key string, sleep func(time.Duration) error) error
	// Sized, when set, is told the burst's N before the first trial (a
	// race file's setup step repeated once per request).
	Sized func(n int)
	// Stage, when set, readies the burst's requests lo to lo+n on key
	// before the barrier and returns one function per request that
	// releases it, in place of the store's own staging (targets.Stager):
	// a race file sends requests of its own, not the story's op. A shard
	// stages its own span of the burst (lo > 0).
	Stage func(ctx context.Context, key string, lo, n int) ([]func(context.Context) Answer, error)
	// Readback, when set, is what the trial on key left for the story's
	// rule besides the count, read by ReadTrial; it goes into the trial
	// (Trial.Readback), so that a saved result is judged again by it.
	Readback func(key string) *results.Readback
	// Part, when set, is what a shard keeps of the trial on key for the
	// rule, which it cannot judge alone: its share of the answers, and
	// what its prelude captured.
	Part func(key string) *results.Readback
	// Rejoin hands verify's player the parts' shares put together, before
	// it reads key back and judges it.
	Rejoin func(key string, whole *results.Readback)
}

// StageBurst readies the burst's requests lo to lo+n on key and returns
// how request j of them (0 ≤ j < n) is released: staged before the
// barrier by the story's own Stage (a race file's requests) or by the
// store (targets.Stager: the story's own request, made now, is sent but
// its final part, which goes after the barrier), else sent whole by the
// player after it.
func StageBurst(ctx context.Context, pl Player, store any, key string, lo, n int) (func(context.Context, int) Answer, error) {
	if pl.Stage != nil {
		staged, err := pl.Stage(ctx, key, lo, n)
		if err != nil {
			return nil, err
		}
		return func(ctx context.Context, j int) Answer { return staged[j](ctx) }, nil
	}
	if stager, ok := store.(targets.Stager); ok {
		release, err := burst.StageCalls(ctx, stager.Gate(n), func(ctx context.Context, j int) (a Answer) {
			defer func() {
				if p := recover(); p != nil {
					a = Answer{Outcome: results.Errored, Err: fmt.Errorf("panic in target: %v", p)}
				}
			}()
			return pl.Do(ctx, key, lo+j)
		})
		if err != nil {
			return nil, err
		}
		return func(ctx context.Context, j int) Answer {
			a, raw := release(ctx, j)
			a.Arrival, a.Early = raw.Arrival, raw.Early
			return a
		}, nil
	}
	return func(ctx context.Context, j int) Answer { return pl.Do(ctx, key, lo+j) }, nil
}

// Define makes a story typed on its store interface S (package story):
// do and read are written against S, the store first as in a method
// expression (story.Counter.Views), and a store plays the story exactly
// when it implements S, asserted once per target rather than per request.
func Define[S any](sc Scenario, do func(s S, ctx context.Context, key string, i int) Answer, read func(s S, ctx context.Context, key string) (int64, error)) *Scenario {
	return DefineTrial(sc, do, func(s S, ctx context.Context, key string, _ []results.Request) (int64, error) {
		return read(s, ctx, key)
	}, nil)
}

// DefineTrial is define for a story whose read-back needs the trial's
// requests (the windows they were counted in), or whose trial starts with
// a prelude on its key.
func DefineTrial[S any](sc Scenario, do func(s S, ctx context.Context, key string, i int) Answer,
	read func(s S, ctx context.Context, key string, reqs []results.Request) (int64, error),
	prelude func(s S, ctx context.Context, key string, sleep func(time.Duration) error) error) *Scenario {
	sc.bind = func(store any) (Player, bool) {
		s, ok := store.(S)
		if !ok {
			return Player{}, false
		}
		p := Player{
			Do:   func(ctx context.Context, key string, i int) Answer { return do(s, ctx, key, i) },
			Read: func(ctx context.Context, key string) (int64, error) { return read(s, ctx, key, nil) },
			ReadTrial: func(ctx context.Context, key string, reqs []results.Request) (int64, error) {
				return read(s, ctx, key, reqs)
			},
		}
		if prelude != nil {
			p.Prelude = func(ctx context.Context, key string, sleep func(time.Duration) error) error {
				return prelude(s, ctx, key, sleep)
			}
		}
		return p, true
	}
	return &sc
}

// Plays reports whether a store can play the story: whether it implements
// the story's interface. A catalog entry's Kind answers for the store it
// opens.
func (sc *Scenario) Plays(store any) bool {
	_, ok := sc.bind(store)
	return ok
}

// Decide judges a trial by the story's hard rule, then by its soft rule
// when it has one.
func (sc *Scenario) Decide(t *results.Trial, target string) {
	sc.Judge(t, target)
	if sc.Soft != nil {
		t.SoftBroken = sc.Soft(t)
	}
	sc.Words(t)
}

// Words records in the trial what it came to in the story's own words, its
// damage and what each request was told, so that a saved result reads
// without the story's code.
func (sc *Scenario) Words(t *results.Trial) {
	t.SetDamage(sc.Damage)
	if sc.DamageOf != nil {
		t.Damage = sc.DamageOf(t)
	}
	for i := range t.Requests {
		if r := &t.Requests[i]; r.Outcome != results.Errored { // an error says itself
			r.Answer = sc.DescribeAnswer(*r)
		}
	}
}

// Account says in one sentence what a judged trial came to: its Why when
// it broke, the story's Tell when it held.
func (sc *Scenario) Account(t *results.Trial, target string) string {
	if t.Broken {
		return t.Why
	}
	return sc.Tell(t, target)
}

// CanRefuse reports whether the story's request can be refused at all: a
// hit is counted or fails, so a refused hit is an outcome no store and no
// run can produce, and a document that says one was edited.
func (sc *Scenario) CanRefuse() bool { return sc.Op != story.OpHit }

// AnswerOf turns a store's reply into an Answer.
func AnswerOf(ok bool, value int64, err error) Answer {
	switch {
	case err != nil:
		return Answer{Outcome: results.Errored, Err: err}
	case ok:
		return Answer{Outcome: results.Allowed, Value: value}
	default:
		return Answer{Outcome: results.Refused, Value: value}
	}
}

// About is the story in its own words, for a report.
func (sc *Scenario) About() About {
	return About{Name: sc.Name, Title: sc.Title, Story: sc.Story, Rule: sc.Rule, SoftRule: sc.SoftRule, Fix: sc.Fix, Needs: sc.Needs}
}

// Finder finds a story by name, made with the settings a result records
// (nil: its defaults). An unknown name is a *targets.UnknownNameError.
// The engine looks stories up only through one, so that it knows none of
// them by name.
type Finder func(name string, set *results.Settings) (*Scenario, error)

// Bind types store for the story: ok is false when the store does not
// implement the story's interface.
func (sc *Scenario) Bind(store any) (p Player, ok bool) { return sc.bind(store) }

// Binder types a store for a story once, when a target is opened: ok is
// false when the store does not implement the story's interface.
type Binder func(store any) (p Player, ok bool)

// Rebind puts wrap around the story's binding, so that a story can stand
// something in front of every store it plays (stale-plan's extension).
func (sc *Scenario) Rebind(wrap func(bind Binder) Binder) { sc.bind = wrap(sc.bind) }

// CannotPlay is the error of a target that lacks the story's interface.
func (sc *Scenario) CannotPlay(target string) error {
	return usage.Fieldf("Targets", "target %s cannot play %s (it has no %s)", target, sc.Name, sc.Needs)
}
