package scenarios

import (
	"cmp"
	"context"
	"fmt"
	"hash/fnv"
	"slices"
	"sync"
	"time"

	"github.com/racelab/racelab/internal/usage"
	"github.com/racelab/racelab/scenarios/engine"
	"github.com/racelab/racelab/scenarios/pace"
	"github.com/racelab/racelab/scenarios/results"
	"github.com/racelab/racelab/targets"
	"github.com/racelab/racelab/targets/clock"
	"github.com/racelab/racelab/targets/story"
)

// stale-plan's defaults: downloads keep coming after the cancel at 6 a
// minute, and the design accepts the server's cached plan read of 45
// seconds. Via the extension they come at 6 an hour, and the design
// accepts its twelve hours "after that": after the server has learned of
// the cancel.
const (
	DefaultPlanRate       pace.Rate = 0.1
	DefaultPlanBound                = story.PlanCacheTTL
	DefaultExtensionRate  pace.Rate = 6.0 / 3600
	DefaultExtensionBound           = story.Revalidation + story.PlanCacheTTL
	// browseViews is how many pages the subscriber opens in the minute
	// before the cancel, each a cached read of the plan where it lands,
	// nine to a cache's life, so that the cancel meets a warm cache.
	browseViews = 12
	browseToTTL = 9
)

// exposureFigure is stale-plan's own figure: how long after the cancel a
// trial's last original was granted, in nanoseconds, recorded when one
// was. Its name is the key results saved it under before figures were
// generic, so that such results still verify.
const exposureFigure = "exposure_ns"

var stalePlan = mustVary(stalePlanWith(results.Settings{}))

// Who grants stale-plan's downloads after the cancel (viaKnob): the
// server, whose cached read of the plan expires in seconds, or the
// browser extension, whose licence is revalidated every twelve hours.
const (
	byServer    = "server"
	byExtension = "extension"
)

// stale-plan's knobs, and arrivalsKnob, which it shares with six-of-five.
var (
	planRateKnob = engine.RateKnob("rate", "the rate of downloads after the cancel (default 6/m; 6/h via the extension)")
	boundKnob    = engine.DurationKnob("bound", "the exposure after a cancel the design accepts (default the plan's 45s cache;\n12h0m45s via the extension)", "45s")
	forKnob      = engine.DurationKnob("for", "how long downloads keep coming after the cancel (default twice the bound, at least 2m)", "3m")
	viaKnob      = engine.ChoiceKnob("via", "who grants the downloads: server (default; a cached plan read) or extension\n(a licence revalidated every 12h)",
		byServer+" or "+byExtension, []string{byServer, byExtension})
)

// stalePlanWith makes the cancelled-subscription story with set: who
// grants the downloads after the cancel, their rate, spacing and span,
// and the bound the design accepts.
func stalePlanWith(set results.Settings) (*engine.Scenario, error) {
	var err error
	via := viaKnob.Read(set, byServer, &err)
	ext := via == byExtension
	rate, bound := DefaultPlanRate, DefaultPlanBound
	if ext {
		rate, bound = DefaultExtensionRate, DefaultExtensionBound
	}
	rate, bound = planRateKnob.Read(set, rate, &err), boundKnob.Read(set, bound, &err)
	spacing := arrivalsKnob.Read(set, pace.Poisson, &err)
	// Long enough to see the exposure end: twice the bound, at least two
	// minutes, unless --for says otherwise.
	span := forKnob.Read(set, 0, &err)
	if err != nil {
		return nil, err
	}
	given := span > 0
	span = cmp.Or(span, max(2*time.Minute, 2*bound))
	// The pages before the cancel keep the server's cache warm: a page
	// every ninth of the bound, and never slower than every ninth of the
	// 45 s cache (a bound of hours is the extension's, not the cache's).
	browse := min(bound, story.PlanCacheTTL) / browseToTTL
	sch := pace.Constant(rate, span)
	sch.Spacing = spacing
	if n := sch.Expected(); n < 1 || n > engine.MaxRequests {
		return nil, usage.Fieldf(planRateKnob.Name, "{} %s for %s is %d downloads; want 1 to %d", engine.RateWords(rate), results.DurationWords(span), n, engine.MaxRequests)
	}
	limit := defaultLimit(story.OpOriginal)
	// The settings it was made with: the stream's and the bound, and who
	// grants and for how long when the run said.
	var made results.Settings
	planRateKnob.Put(&made, rate)
	arrivalsKnob.Put(&made, spacing)
	boundKnob.Put(&made, bound)
	if given {
		forKnob.Put(&made, span)
	}
	if _, ok := set.Knob(viaKnob.Name); ok {
		viaKnob.Put(&made, via)
	}
	sc := engine.Scenario{
		Tale: engine.Tale{
			Name:  "stale-plan",
			Title: "a cancelled subscription keeps downloading until the cached plan expires",
			Story: "A tool keeps its subscriptions in a key-value store and reads the plan " +
				"on every download from a cache at the edge. When a subscriber cancels, " +
				"the server stops granting originals about 45 seconds later, when its " +
				"cached read expires, and the browser extension finds out at its next " +
				"revalidation, at most twelve hours after that. It is the price of not " +
				"asking a strong store on every download, and its author accepted it. The " +
				"story measures it: downloads keep arriving after the cancel, and the " +
				"exposure is the time from the cancel to the last original still granted. " +
				"The hybrid lets one object decide the daily quota exactly and KV serve " +
				"the plan: exact where it matters, cheap and stale within a known bound " +
				"elsewhere.",
			Rule: fmt.Sprintf("no original granted after the cancel, at most %d a subscriber a day, every one counted", limit),
			SoftRule: fmt.Sprintf("originals after the cancel only within the accepted %s, at most %d a day, every one counted",
				results.DurationWords(bound), limit),
			Fix: "One object per subscriber holds the plan and the day's count and takes " +
				"one request at a time: the cancel and every download after it meet in " +
				"the same place, so nothing is granted after the cancel and never more " +
				"than the limit. The hybrid keeps only the quota there and serves the plan " +
				"from KV: the quota is exact, the plan is stale for at most the cache " +
				"TTL, the bound its design accepted.",
			Needs:     "subscription plan",
			Lineup:    []string{"kv", "hybrid", "actor"},
			KeyPrefix: "subscriber",
		},
		Request: engine.Request{
			DefaultRequests: int(sch.Expected()),
			Op:              story.OpOriginal,
			Limit:           limit,
		},
		Verdict: engine.Verdict{
			Figures: []results.Figure{exposureFigureOf(bound)},
			Tell: func(t *results.Trial, target string) string {
				if t.Allowed == 0 {
					return fmt.Sprintf("%s: no original granted after the cancel; %d refused", target, t.Refused)
				}
				return fmt.Sprintf("%s: %s granted after the cancel, the last %s after it (accepted: %s); %d refused, %d counted",
					target, results.Plural(int64(t.Allowed), "original"), formatExposure(exposureOf(t)), results.DurationWords(bound), t.Refused, t.Counted)
			},
			Judge: func(t *results.Trial, target string) {
				allowed := int64(t.Allowed)
				exposed := measureExposure(t)
				t.Over = allowed // every one granted after the cancel is given away
				t.Lost = max(0, allowed-t.Counted)
				if allowed == 0 && t.Counted <= int64(t.Errors) {
					return
				}
				t.Broken = true
				t.Why = fmt.Sprintf("%s: %s granted after the cancel, the last %s after it", target,
					results.Plural(allowed, "original"), formatExposure(exposed))
				if allowed > limit {
					t.Why += fmt.Sprintf(", over the daily limit of %d", limit)
				}
				if t.Lost > 0 {
					t.Why += fmt.Sprintf("; %d counted: %d never counted", t.Counted, t.Lost)
				}
			},
		},
		Teaching: engine.Teaching{
			Ending: planEnding,
		},
		Tuning: engine.Tuning{
			Knobs: []engine.Knob{planRateKnob.Knob, arrivalsKnob.Knob, boundKnob.Knob, forKnob.Knob, viaKnob.Knob},
		},
	}
	sc.Stream = &engine.Stream{Schedule: sch, Words: engine.StreamWords(sch) + " after the cancel", Prelude: browseViews * browse}
	prelude := browseThenCancel(browse)
	if ext {
		prelude = viaExtension(&sc, bound, browse)
	}
	out := engine.DefineTrial(sc, func(s story.Plans, ctx context.Context, key string, _ int) engine.Answer {
		return engine.AnswerOf(s.Download(ctx, key, limit))
	}, func(s story.Plans, ctx context.Context, key string, _ []results.Request) (int64, error) {
		return s.Downloads(ctx, key)
	}, prelude)
	if ext {
		bindExtension(out)
	}
	out.Soft = func(t *results.Trial) bool {
		return exposureOf(t) > bound || int64(t.Allowed) > limit && !ext || t.Lost > 0
	}
	out.Settings = &made
	out.Vary = stalePlanWith
	out.Timed = true
	return out, nil
}

// measureExposure records in the trial how long after the cancel its last
// original was granted, and returns it: zero, and no figure, when none
// was.
func measureExposure(t *results.Trial) time.Duration {
	var d time.Duration
	for _, r := range t.Requests {
		if r.Outcome == results.Allowed {
			d = max(d, r.Invoke)
		}
	}
	delete(t.Figures, exposureFigure)
	if d > 0 {
		t.SetFigure(exposureFigure, int64(d))
	}
	return d
}

// exposureOf is the trial's exposure as measureExposure recorded it.
func exposureOf(t *results.Trial) time.Duration { return time.Duration(t.Figure(exposureFigure)) }

// exposureFigureOf declares how a report says the exposures of a run
// whose design accepts bound: their median and maximum, and the originals
// given away after the cancel, which the trials count as over.
func exposureFigureOf(bound time.Duration) results.Figure {
	return results.Figure{Name: exposureFigure, Words: "exposure after the cancel", Spread: true, Duration: true,
		Per: "exposed", Bound: int64(bound), Over: "download", OverWords: "given away after it"}
}

// browseThenCancel is a trial's prelude: the subscriber subscribes, opens
// a page every gap for a while (each a cached read of the plan where it
// lands), and cancels; the downloads start when the cancel has been
// written.
func browseThenCancel(gap time.Duration) func(s story.Plans, ctx context.Context, key string, sleep func(time.Duration) error) error {
	return func(s story.Plans, ctx context.Context, key string, sleep func(time.Duration) error) error {
		if err := s.Subscribe(ctx, key); err != nil {
			return err
		}
		return browseAndCancel(s, ctx, key, gap, sleep)
	}
}

// browseAndCancel opens browseViews pages gap apart, then cancels.
func browseAndCancel(s story.Plans, ctx context.Context, key string, gap time.Duration, sleep func(time.Duration) error) error {
	for range browseViews {
		if err := sleep(gap); err != nil {
			return err
		}
		if _, err := s.Paid(ctx, key); err != nil {
			return err
		}
	}
	return s.Cancel(ctx, key)
}

// formatExposure writes an exposure to the millisecond: "38.214s".
func formatExposure(d time.Duration) string { return d.Round(time.Millisecond).String() }

// planEnding works through what the subscription design accepted, with
// the replays' figures: the race on the server's cached read, and the
// extension's licence played for a day after the cancel.
func planEnding(ctx context.Context, x *engine.Explainer) (engine.Ending, error) {
	race := x.Race.Trials[0]
	ext, err := extensionReplay(ctx, x)
	if err != nil {
		return engine.Ending{}, err
	}
	return engine.Ending{
		Heading: "What the design accepted, part by part",
		Items: []engine.EndingItem{
			{Part: "The server's plan check", Mark: "approximate, within a bound", Why: fmt.Sprintf("A cached read of the plan goes on saying \"paid\" until it expires: on %s the last original went %s after the cancel, within the %s cache. The cost is the originals given away in that time: %d here.",
				x.Race.Target, formatExposure(exposureOf(&race)), results.DurationWords(story.PlanCacheTTL), race.Allowed)},
			{Part: "The extension's licence", Mark: "approximate, within a bound of its own", Why: ext},
			{Part: "The daily quota", Mark: "strict only in one place", Why: fmt.Sprintf("Read, compare, write, as %s does it, lets more than %d through and counts fewer; decided in one place (%s, or the hybrid's object) it is exact.", x.Target, x.Scenario.Limit, x.Fixed)},
		},
		Closing: "The hybrid keeps each part where it belongs: the quota, which is money, in a " +
			"strong store that decides atomically; the plan, where a minute of staleness " +
			"costs a few downloads, in KV for cheap reads everywhere.",
	}, nil
}

// extensionReplay plays the extension (--via extension) on the naive
// target for explainTrials days and says what its licence gave away.
func extensionReplay(ctx context.Context, x *engine.Explainer) (string, error) {
	tr, err := playStream(ctx, x, x.Target, explainTrials, false, func(s *results.Settings) {
		*s = results.Settings{}
		viaKnob.Put(s, byExtension)
	})
	if err != nil {
		return "", err
	}
	tally := tr.Summary()
	ex := tally.Figures[exposureFigure]
	played := fmt.Sprintf("Played on %s for %s, an original every ten minutes or so after the cancel: ", x.Target, results.Plural(int64(tally.Trials), "cancel"))
	if median, ok := ex.Median(); !ok {
		played += "no original was granted after any of them."
	} else {
		played += fmt.Sprintf("the licence granted %s after the cancel, the last %s after it at the median and %s at most, never counted by the server.",
			results.Plural(tally.Over, "original"), results.DurationWords(time.Duration(median).Round(time.Second)), results.DurationWords(time.Duration(ex.Max()).Round(time.Second)))
	}
	return fmt.Sprintf("The extension asks the server again every %s, so it goes on downloading until then; the design accepts %s, the server's %s and then twelve hours. %s Only revalidating more often shortens it.",
		results.DurationWords(story.Revalidation), results.DurationWords(DefaultExtensionBound), results.DurationWords(story.PlanCacheTTL), played), nil
}

// extension is the browser extension of stale-plan (--via extension): it
// holds a licence and asks the server whether the plan is paid only when
// the licence is story.Revalidation old, not on every download. It wraps
// the store the server reads the plan from, so the server's answer is as
// stale as that store makes it.
type extension struct {
	story.Plans
	store any // the opened target's store, whose clock the licences keep

	mu       sync.Mutex
	licences map[string]*licence
}

// licence is what the extension knows of one subscriber's plan.
type licence struct {
	until   time.Time // when the extension asks the server again
	revoked bool      // the server said the plan is no longer paid
}

func newExtension(s story.Plans, store any) *extension {
	return &extension{Plans: s, store: store, licences: make(map[string]*licence)}
}

// now reads the store's clock, virtual or real: a store over HTTP has
// none of its own, and runs on the real one.
func (e *extension) now() time.Time {
	if c, ok := e.store.(targets.Clocked); ok {
		return c.Clock().Now()
	}
	return clock.Real{}.Now()
}

// validate asks the server for subscriber's plan and, when it is paid,
// grants a licence for the next revalidation interval. renewed says it
// was granted.
func (e *extension) validate(ctx context.Context, subscriber string) (renewed bool, err error) {
	paid, err := e.Plans.Paid(ctx, subscriber)
	if err != nil {
		return false, err
	}
	e.mu.Lock()
	defer e.mu.Unlock()
	l := e.licences[subscriber]
	if l == nil {
		l = &licence{}
		e.licences[subscriber] = l
	}
	if !paid {
		l.revoked = true
		return false, nil
	}
	l.until = e.now().Add(story.Revalidation)
	return true, nil
}

// Download grants an original on the licence alone while it is fresh; an
// expired one is revalidated with the server first. The server counts
// none of them: the extension does not ask it on every download. The
// count answered is 1 when this download renewed the licence, which after
// a cancel is the store's mistake (a stale "paid"), 0 otherwise.
func (e *extension) Download(ctx context.Context, subscriber string, _ int64) (bool, int64, error) {
	e.mu.Lock()
	l := e.licences[subscriber]
	due := l == nil || !e.now().Before(l.until)
	revoked := l != nil && l.revoked
	e.mu.Unlock()
	switch {
	case revoked:
		return false, 0, nil
	case !due:
		return true, 0, nil
	}
	renewed, err := e.validate(ctx, subscriber)
	if err != nil || !renewed {
		return false, 0, err
	}
	return true, 1, nil
}

// Downloads reads the server's count, and forgets the licence: a trial
// reads back once, after its last download.
func (e *extension) Downloads(ctx context.Context, subscriber string) (int64, error) {
	e.mu.Lock()
	delete(e.licences, subscriber)
	e.mu.Unlock()
	return e.Plans.Downloads(ctx, subscriber)
}

// licencePhase is how long after the subscription the extension last
// validated the licence before the cancel: spread over the revalidation
// interval by the key, which the seed decides in virtual time, so that
// the cancel falls anywhere in the licence's life.
func licencePhase(key string, room time.Duration) time.Duration {
	h := fnv.New64a()
	h.Write([]byte(key))
	return time.Duration(h.Sum64() % uint64(room))
}

// validateThenCancel is a trial's prelude via the extension: the
// subscriber subscribes, the extension validates its licence at some
// point of the next twelve hours, the subscriber browses for a minute
// and cancels twelve hours after subscribing.
func validateThenCancel(browse time.Duration) func(s story.Plans, ctx context.Context, key string, sleep func(time.Duration) error) error {
	return func(s story.Plans, ctx context.Context, key string, sleep func(time.Duration) error) error {
		e := s.(*extension)
		if err := e.Subscribe(ctx, key); err != nil {
			return err
		}
		room := story.Revalidation - browseViews*browse
		phase := licencePhase(key, room)
		if err := sleep(phase); err != nil {
			return err
		}
		if _, err := e.validate(ctx, key); err != nil {
			return err
		}
		if err := sleep(room - phase); err != nil {
			return err
		}
		return browseAndCancel(e, ctx, key, browse, sleep)
	}
}

// viaExtension turns stale-plan's rules and stream to the extension's
// and answers its prelude: no store can stop the downloads a licence
// already granted allows, so the hard rule is the part a store decides,
// that the licence is not renewed after the cancel; the exposure is
// judged by the soft rule, against bound.
func viaExtension(sc *engine.Scenario, bound, browse time.Duration) func(s story.Plans, ctx context.Context, key string, sleep func(time.Duration) error) error {
	sc.Stream.Words += ", granted by the extension"
	sc.Stream.Prelude = story.Revalidation
	sc.Rule = "the extension's licence is never renewed after the cancel"
	sc.SoftRule = fmt.Sprintf("originals after the cancel only within the accepted %s", results.DurationWords(bound))
	sc.Tell = func(t *results.Trial, target string) string {
		if t.Allowed == 0 {
			return fmt.Sprintf("%s: no original granted after the cancel; %d refused", target, t.Refused)
		}
		return fmt.Sprintf("%s: %s granted on the extension's licence after the cancel, the last %s after it (accepted: %s); the licence was not renewed, and the server counted %d",
			target, results.Plural(int64(t.Allowed), "original"), formatExposure(exposureOf(t)), results.DurationWords(bound), t.Counted)
	}
	sc.Damage = func(over, _ int64) string {
		if over == 0 {
			return ""
		}
		return fmt.Sprintf("%d given away", over)
	}
	sc.Judge = func(t *results.Trial, target string) {
		exposed := measureExposure(t)
		t.Over = int64(t.Allowed) // given away, within the bound or not
		t.Lost = 0                // the extension never asks the server to count
		i := slices.IndexFunc(t.Requests, func(r results.Request) bool { return r.Outcome == results.Allowed && r.Value == 1 })
		if i < 0 {
			return
		}
		t.Broken = true
		t.Why = fmt.Sprintf("%s: the server renewed the extension's licence %s after the cancel from a stale plan; %s granted, the last %s after the cancel",
			target, formatExposure(t.Requests[i].Invoke), results.Plural(int64(t.Allowed), "original"), formatExposure(exposed))
	}
	return validateThenCancel(browse)
}

// bindExtension puts an extension in front of the store of every target
// that plays out, one per opened target, so that its licences are the
// target's.
func bindExtension(out *engine.Scenario) {
	out.Rebind(func(bind engine.Binder) engine.Binder {
		return func(store any) (engine.Player, bool) {
			s, ok := store.(story.Plans)
			if !ok {
				return engine.Player{}, false
			}
			return bind(newExtension(s, store))
		}
	})
}
