package scenarios

import (
	"cmp"
	"context"
	"fmt"
	"time"

	"github.com/racelab/racelab/scenarios/pace"
	"github.com/racelab/racelab/targets/story"
)

// stale-plan's defaults: downloads keep coming after the cancel at 6 a
// minute, and the design accepts the server's cached plan read of 45
// seconds.
const (
	DefaultPlanRate  pace.Rate = 0.1
	DefaultPlanBound           = story.PlanCacheTTL
	// browseViews is how many pages the subscriber opens in the minute
	// before the cancel, each a cached read of the plan where it lands.
	browseViews = 12
	browseGap   = 5 * time.Second
)

var stalePlan = mustVary(stalePlanWith(Settings{}))

// stalePlanWith makes the cancelled-subscription story with set: the rate
// and spacing of the downloads after the cancel, and the bound the design
// accepts.
func stalePlanWith(set Settings) (*Scenario, error) {
	rate := cmp.Or(set.Rate, DefaultPlanRate)
	spacing := cmp.Or(set.Arrivals, pace.Poisson)
	bound := cmp.Or(set.Bound, DefaultPlanBound)
	if set.Rollover || set.Tolerance != nil {
		return nil, fmt.Errorf("--rollover and --tolerance are six-of-five's")
	}
	// Long enough to see the exposure end: twice the bound, at least two
	// minutes.
	span := max(2*time.Minute, 2*bound)
	sch := pace.Constant(rate, span)
	sch.Spacing = spacing
	if n := sch.Expected(); n < 1 || n > MaxRequests {
		return nil, fmt.Errorf("--rate %s for %s is %d downloads; want 1 to %d", rateWords(rate), durationWords(span), n, MaxRequests)
	}
	limit := int64(DailyLimit)
	resolved := Settings{Rate: rate, Arrivals: spacing, Bound: bound}
	sc := Scenario{
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
			durationWords(bound), limit),
		Fix: "One object per subscriber holds the plan and the day's count and takes " +
			"one request at a time: the cancel and every download after it meet in " +
			"the same place, so nothing is granted after the cancel and never more " +
			"than the limit. The hybrid keeps only the quota there and serves the plan " +
			"from KV: the quota is exact, the plan is stale for at most the cache " +
			"TTL, the bound its design accepted.",
		Needs:           "subscription plan",
		DefaultRequests: int(sch.Expected()),
		Lineup:          []string{"kv", "hybrid", "actor"},
		Op:              story.OpDownload,
		Limit:           limit,
		KeyPrefix:       "subscriber",
		Knobs:           []string{KnobRate, KnobArrivals, KnobBound},
		Ending:          planEnding,
		Tell: func(t *Trial, target string) string {
			if t.Allowed == 0 {
				return fmt.Sprintf("%s: no original granted after the cancel; %d refused", target, t.Refused)
			}
			return fmt.Sprintf("%s: %s granted after the cancel, the last %s after it (accepted: %s); %d refused, %d counted",
				target, plural(int64(t.Allowed), "original"), formatExposure(t.Exposure), durationWords(bound), t.Refused, t.Counted)
		},
		Judge: func(t *Trial, target string) {
			allowed := int64(t.Allowed)
			t.Exposure = 0
			for _, r := range t.Requests {
				if r.Outcome == Allowed {
					t.Exposure = max(t.Exposure, r.Invoke)
				}
			}
			t.Over = allowed // every one granted after the cancel is given away
			t.Lost = max(0, allowed-t.Counted)
			if allowed == 0 && t.Counted <= int64(t.Errors) {
				return
			}
			t.Broken = true
			t.Why = fmt.Sprintf("%s: %s granted after the cancel, the last %s after it", target,
				plural(allowed, "original"), formatExposure(t.Exposure))
			if allowed > limit {
				t.Why += fmt.Sprintf(", over the daily limit of %d", limit)
			}
			if t.Lost > 0 {
				t.Why += fmt.Sprintf("; %d counted: %d never counted", t.Counted, t.Lost)
			}
		},
	}
	sc.stream = &stream{schedule: sch, words: streamWords(sch) + " after the cancel"}
	out := defineTrial(sc, func(s story.Plans, ctx context.Context, key string, _ int) Answer {
		return answerOf(s.Download(ctx, key, limit))
	}, func(s story.Plans, ctx context.Context, key string, _ []Request) (int64, error) {
		return s.Downloads(ctx, key)
	}, browseThenCancel)
	out.soft = func(t *Trial) bool {
		return t.Exposure > bound || int64(t.Allowed) > limit || t.Lost > 0
	}
	out.settings = &resolved
	out.vary = stalePlanWith
	out.timed = true
	return out, nil
}

// browseThenCancel is a trial's prelude: the subscriber subscribes, opens
// a page every few seconds for a minute (each a cached read of the plan
// where it lands), and cancels; the downloads start when the cancel has
// been written.
func browseThenCancel(s story.Plans, ctx context.Context, key string, sleep func(time.Duration) error) error {
	if err := s.Subscribe(ctx, key); err != nil {
		return err
	}
	for range browseViews {
		if err := sleep(browseGap); err != nil {
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
// the replays' figures.
func planEnding(_ context.Context, x *Explainer) (Ending, error) {
	race := x.Race.Trials[0]
	return Ending{
		Heading: "What the design accepted, part by part",
		Items: []EndingItem{
			{"The server's plan check", "approximate, within a bound",
				fmt.Sprintf("A cached read of the plan goes on saying \"paid\" until it expires: on %s the last original went %s after the cancel, within the %s cache. The cost is the originals given away in that time: %d here.",
					x.Race.Target, formatExposure(race.Exposure), durationWords(story.PlanCacheTTL), race.Allowed)},
			{"The extension's licence", "approximate, within a bound of its own",
				fmt.Sprintf("The extension asks the server again every %s, so it can go on downloading for up to %s after the server has learned of the cancel. Nothing here can shorten that but revalidating more often.",
					durationWords(story.Revalidation), durationWords(story.Revalidation))},
			{"The daily quota", "strict only in one place",
				fmt.Sprintf("Read, compare, write on KV lets more than %d through and counts fewer; in one object (%s, or the hybrid's) it is exact.", DailyLimit, x.Fixed)},
		},
		Closing: "The hybrid keeps each part where it belongs: the quota, which is money, in a " +
			"strong store that decides atomically; the plan, where a minute of staleness " +
			"costs a few downloads, in KV for cheap reads everywhere.",
	}, nil
}
