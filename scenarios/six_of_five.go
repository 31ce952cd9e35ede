package scenarios

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/racelab/racelab/internal/usage"
	"github.com/racelab/racelab/scenarios/engine"
	"github.com/racelab/racelab/scenarios/pace"
	"github.com/racelab/racelab/scenarios/results"
	"github.com/racelab/racelab/targets/story"
)

// The rate limiter's defaults besides its limit (its op's, 5 requests a
// caller): a fixed window of 60 seconds, and a soft rule that lets one
// more through.
const (
	WindowLength     = story.WindowLength
	DefaultTolerance = 1
)

// six-of-five's knobs. A stream's rate and spacing are stale-plan's knobs
// too, read the same way: arrivalsKnob is theirs in common, and each says
// what its rate means for itself.
var (
	limitKnob     = engine.IntKnob("limit", "requests a caller per window (default 5)", 1, 0, "1 or more requests a window")
	windowKnob    = engine.DurationKnob("window", "the fixed window (default 60s)", "60s")
	toleranceKnob = engine.IntKnob("tolerance", "how far over the limit the soft rule lets a window go (default 1)", 0, 0, "0 or more requests over the limit")
	botRateKnob   = engine.RateKnob("rate", "stream one caller's requests at this rate over one window (such as 20/s) instead of a burst")
	arrivalsKnob  = engine.SpacingKnob("arrivals", "spacing of a stream's arrivals: even (default: one bot keeping time) or poisson (seeded)")
	rolloverKnob  = engine.BoolKnob("rollover", "start each stream half a window before a window boundary")
)

// The rate limiter's own figures: the window each request was counted in,
// and how many requests each window of a trial admitted, in window order.
// Their names are the keys results saved them under before figures were
// generic, so that such results still verify.
const (
	windowFigure  = "window"
	windowsFigure = "windows"
)

var sixOfFive = mustVary(sixOfFiveWith(results.Settings{}))

// mustVary is for the registry's own variants, made from settings that
// are known to be good.
func mustVary(sc *engine.Scenario, err error) *engine.Scenario {
	if err != nil {
		panic(err)
	}
	return sc
}

// sixOfFiveWith makes the rate limiter's story with settings set: the
// limit and window, the soft rule's tolerance, and a stream of arrivals
// instead of a burst.
func sixOfFiveWith(set results.Settings) (*engine.Scenario, error) {
	var err error
	limit := limitKnob.Read(set, defaultLimit(story.OpLimit), &err)
	length := windowKnob.Read(set, WindowLength, &err)
	tolerance := toleranceKnob.Read(set, DefaultTolerance, &err)
	rate := botRateKnob.Read(set, 0, &err)
	arrivals := arrivalsKnob.Read(set, "", &err)
	rollover := rolloverKnob.Read(set, false, &err)
	switch {
	case err != nil:
		return nil, err
	case length < time.Second || length > 24*time.Hour:
		return nil, usage.Fieldf(windowKnob.Name, "{} %s: want a window from 1s to 24h", length)
	case rate == 0 && (arrivals != "" || rollover):
		return nil, usage.Fieldf(botRateKnob.Name, "{arrivals} and {rollover} shape a stream; add {} such as 20/s")
	}
	w := story.Window{Limit: limit, Length: length}
	soft := limit + tolerance
	// The settings it was made with: every knob that shapes the rules,
	// and the stream's when it streams.
	var made results.Settings
	limitKnob.Put(&made, limit)
	windowKnob.Put(&made, length)
	toleranceKnob.Put(&made, tolerance)
	sc := engine.Scenario{
		Tale: engine.Tale{
			Name:  "six-of-five",
			Title: "a rate limit of five a minute that sometimes admits six",
			Story: "A free endpoint is protected by a fixed-window rate limiter kept in a " +
				"key-value store: the key is the caller and the window number, the " +
				"request reads the count, refuses at the limit, and otherwise writes " +
				"the count plus one with an expiry of max(60 s, window). The increment " +
				"is not atomic: two requests that read the same count both pass. A bot " +
				"streaming requests at a steady rate gets five through in most windows " +
				"and six or seven in some; a burst gets every request through. For abuse " +
				"protection that is a soft rule, and it holds; as a paid quota it would " +
				"be a bug. One object per caller, or one conditional upsert, makes the " +
				"check and the increment one step.",
			Rule: fmt.Sprintf("at most %d requests admitted a caller per %s window, and every admitted request counted", limit, results.DurationWords(length)),
			SoftRule: fmt.Sprintf("at most %d admitted a window: the limit of %d with a tolerance of %d, enough for abuse protection",
				soft, limit, tolerance),
			Fix: "One object per caller receives every request of that caller and " +
				"handles them one at a time, so the read of the window's count and its " +
				"increment are one step and no window ever admits more than the limit. " +
				"A database does it in one statement: INSERT … ON CONFLICT (caller, " +
				"window) DO UPDATE SET count = count + 1 WHERE count < limit RETURNING " +
				"count; Redis with INCR and EXPIRE in one Lua call. The fixed window " +
				"itself stays approximate on every store: a caller can spend one window's " +
				"allowance at its end and the next one's at the start.",
			Needs:     "rate limiter",
			Lineup:    []string{"kv", "actor", "sqlite"},
			KeyPrefix: "caller",
		},
		Request: engine.Request{
			DefaultRequests: 12,
			Op:              story.OpLimit,
			Limit:           limit,
		},
		Verdict: engine.Verdict{
			Figures: []results.Figure{{Name: windowsFigure, Words: "admitted per window", Per: "window"}},
			Tell: func(t *results.Trial, target string) string {
				return fmt.Sprintf("%s: %s admitted (%s), %d refused, %d counted", target,
					results.Plural(int64(t.Allowed), "request"), perWindow(t.Figures[windowsFigure]), t.Refused, t.Counted)
			},
			Judge: func(t *results.Trial, target string) {
				windows := admittedPerWindow(t.Requests)
				t.SetFigure(windowsFigure, windows...)
				var over int64
				for _, a := range windows {
					over += max(0, a-limit)
				}
				judgeLimit(t, over, func(allowed int64) string {
					return fmt.Sprintf("%s: %s admitted (%s) against a limit of %d a window, %d counted", target,
						results.Plural(allowed, "request"), perWindow(windows), limit, t.Counted) + overLimitWords(t)
				}, func(allowed int64) string {
					return fmt.Sprintf("%s: %s admitted, yet %d counted: refused requests were counted",
						target, results.Plural(allowed, "request"), t.Counted)
				})
			},
		},
		Teaching: engine.Teaching{
			Extras: []engine.Extra{{After: "race", Replay: streamReplay}, {After: "fix", Replay: rolloverReplays}},
			Ending: limiterExercise,
		},
		Tuning: engine.Tuning{
			Knobs: []engine.Knob{limitKnob.Knob, windowKnob.Knob, toleranceKnob.Knob, botRateKnob.Knob, arrivalsKnob.Knob, rolloverKnob.Knob},
		},
	}
	// A burst is the quota's bounded counter in each window it touched:
	// mostly one, two when the real clock crosses a boundary mid-burst.
	// A stream's many windows each start again, and its histories go
	// unchecked.
	sc.Model = engine.LimiterModel(limit, windowFigure)
	if rate > 0 {
		sc.Model = engine.Model{}
		// One bot keeps time: evenly spaced unless asked for Poisson.
		spacing := cmp.Or(arrivals, pace.Even)
		botRateKnob.Put(&made, rate)
		arrivalsKnob.Put(&made, spacing)
		if rollover {
			rolloverKnob.Put(&made, true)
		}
		// The stream ends a hundredth of a window early, so that its
		// last requests are decided inside the window they arrived in.
		sch := pace.Constant(rate, length-length/100)
		sch.Spacing = spacing
		if n := sch.Expected(); n > engine.MaxRequests || n < 1 {
			return nil, usage.Fieldf(botRateKnob.Name, "{} %s over a %s window is %d arrivals; want 1 to %d (lower {} or {window})",
				engine.RateWords(rate), results.DurationWords(length), n, engine.MaxRequests)
		}
		st := &engine.Stream{Schedule: sch, Align: length, Words: engine.StreamWords(sch)}
		if rollover {
			// Half a window before a boundary to half after it: the
			// requests just before and just after the rollover.
			st.Lead = length / 2
			st.Words += ", across a window boundary"
		}
		sc.Stream = st
		// Minutes of stream take microseconds on the simulated stores;
		// on a real clock a window takes a window.
		sc.Lineup = []string{"kv", "actor"}
	}
	out := engine.DefineTrial(sc, func(s story.Limiter, ctx context.Context, key string, _ int) engine.Answer {
		a, err := s.Admit(ctx, key, w)
		ans := engine.AnswerOf(a.Allowed, a.Count, err)
		ans.Figures = map[string]int64{windowFigure: a.Window}
		return ans
	}, func(s story.Limiter, ctx context.Context, key string, reqs []results.Request) (int64, error) {
		if reqs == nil {
			return 0, errNoWindows
		}
		var sum int64
		for _, n := range engine.FigureValues(reqs, windowFigure) {
			c, err := s.Admitted(ctx, key, w, n)
			if err != nil {
				return 0, err
			}
			sum += c
		}
		return sum, nil
	}, nil)
	out.Soft = func(t *results.Trial) bool {
		return slices.ContainsFunc(t.Figures[windowsFigure], func(a int64) bool { return a > soft })
	}
	out.Settings = &made
	out.Vary = sixOfFiveWith
	return out, nil
}

// errNoWindows: a limiter's count is per window, so its read-back needs
// the windows the requests were counted in.
var errNoWindows = errors.New("six-of-five reads back per window, and needs the windows its requests were counted in")

// admittedPerWindow counts the admitted requests of each window the trial
// touched, in window order.
func admittedPerWindow(reqs []results.Request) []int64 {
	ws := engine.FigureValues(reqs, windowFigure)
	out := make([]int64, len(ws))
	for _, r := range reqs {
		if r.Outcome == results.Allowed {
			out[slices.Index(ws, r.Figures[windowFigure])]++
		}
	}
	return out
}

// windowOf is the rate limit sc plays, as its settings made it.
func windowOf(sc *engine.Scenario) story.Window {
	var err error // none: sc was made from them
	return story.Window{Limit: sc.Limit, Length: windowKnob.Read(*sc.Settings, WindowLength, &err)}
}

// perWindow says the admitted counts of a trial's windows: "5 in one
// window", "5 and 5 in two windows".
func perWindow(ws []int64) string {
	parts := make([]string, len(ws))
	for i, a := range ws {
		parts[i] = fmt.Sprint(a)
	}
	switch len(ws) {
	case 0:
		return "no window"
	case 1:
		return parts[0] + " in one window"
	}
	return strings.Join(parts[:len(parts)-1], ", ") + " and " + parts[len(parts)-1] + fmt.Sprintf(" in %d windows", len(ws))
}
