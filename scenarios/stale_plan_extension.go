package scenarios

import (
	"context"
	"fmt"
	"hash/fnv"
	"slices"
	"sync"
	"time"

	"github.com/racelab/racelab/scenarios/engine"

	"github.com/racelab/racelab/scenarios/results"

	"github.com/racelab/racelab/targets"
	"github.com/racelab/racelab/targets/clock"
	"github.com/racelab/racelab/targets/story"
)

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
		exposed := judgeExposure(t)
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
