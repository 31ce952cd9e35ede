package shards

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"os"
	"strconv"
	"strings"
	"time"

	"github.com/racelab/racelab/internal/usage"
	"github.com/racelab/racelab/scenarios/engine"
	"github.com/racelab/racelab/scenarios/results"
	"github.com/racelab/racelab/targets"
	"github.com/racelab/racelab/targets/clock"
)

// Defaults and bounds of sharding, in one place.
const (

	// MaxShardRequests bounds the requests one shard of a run keeps for
	// the merge (every one of them: the merge judges whole bursts), so
	// that a part stays well inside what `racelab verify` reads.
	MaxShardRequests = 500_000

	// stageLead is how long before its release instant a shard stages a
	// trial's requests. Staged requests wait on the server, and a server
	// gives a request head only so long (racelab serve: 30 s), so staging
	// for a release minutes away would fail.
	stageLead = 500 * time.Millisecond
	// maxStageLead bounds the lead a slow server stretches it to (see
	// shardRun.play), well inside the 5 s a server may give a head.
	maxStageLead = 2 * time.Second
)

// ParseShard reads --shard: "I/N" (I from 0 to N-1), or "auto/N" and
// "auto", which take I from JOB_COMPLETION_INDEX (set by a Kubernetes
// Indexed Job) and, for "auto", N from RACELAB_SHARDS. env reads the
// environment (os.Getenv when nil).
func ParseShard(s string, env func(string) string) (index, of int, err error) {
	if env == nil {
		env = os.Getenv
	}
	bad := func(why string) (int, int, error) {
		return 0, 0, usage.Fieldf("Shard", "{} %q: %s", s, why)
	}
	i, n, hasN := strings.Cut(strings.TrimSpace(s), "/")
	if !hasN && i != "auto" {
		return bad("want I/N, such as 0/4 (shards count from 0), or auto/N")
	}
	if !hasN {
		n = env("RACELAB_SHARDS")
		if n == "" {
			return bad("auto without /N takes N from RACELAB_SHARDS, which is not set; write auto/N")
		}
	}
	of, err = strconv.Atoi(n)
	if err != nil || of < 1 {
		return bad("N must be a whole number of shards, 1 or more")
	}
	if i == "auto" {
		v := env("JOB_COMPLETION_INDEX")
		if v == "" {
			return bad("auto takes I from JOB_COMPLETION_INDEX (set in a Kubernetes Indexed Job), which is not set; write I/N")
		}
		index, err = strconv.Atoi(v)
		if err != nil {
			return bad(fmt.Sprintf("JOB_COMPLETION_INDEX=%q is not a whole number", v))
		}
	} else if index, err = strconv.Atoi(i); err != nil {
		return bad("I must be a whole number from 0 to N-1")
	}
	if index < 0 || index >= of {
		return bad(fmt.Sprintf("shard %d of %d: want 0 to %d (shards count from 0)", index, of, of-1))
	}
	return index, of, nil
}

// ParseStartAt reads --start-at: an RFC 3339 instant
// (2026-05-01T12:00:00Z, fractions allowed) or "+DURATION" from now.
// "+30s" is only for one process; shards must all be given the same
// instant, computed once.
func ParseStartAt(s string, now time.Time) (time.Time, error) {
	s = strings.TrimSpace(s)
	if rest, ok := strings.CutPrefix(s, "+"); ok {
		d, err := time.ParseDuration(rest)
		if err != nil || d <= 0 {
			// +0s is now, which no shard can stage for: already past when
			// it fires.
			return time.Time{}, usage.Fieldf("StartAt", "{} %q: want +DURATION above 0 such as +30s, or an RFC 3339 instant such as 2026-05-01T12:00:00Z", s)
		}
		return now.Add(d).Round(0), nil // Round(0): a wall-clock instant, as a parsed one
	}
	t, err := time.Parse(time.RFC3339Nano, s)
	if err != nil {
		return time.Time{}, usage.Fieldf("StartAt", "{} %q: want an RFC 3339 instant such as 2026-05-01T12:00:00Z, or +DURATION such as +30s", s)
	}
	return t, nil
}

// MaxStartAhead is how far ahead --start-at may be without Wait: a
// release over a day away is more likely a mistyped date than a plan. A
// release over a day past is taken for a mistyped date too.
const MaxStartAhead = 24 * time.Hour

// CheckStartAt refuses a release instant no shard can mean: one more than
// MaxStartAhead past, and one more than MaxStartAhead away unless wait
// says it is meant, since a shard would wait for it without a word. An
// instant less than a day past is a shard that started late (a runner
// handed out late, a pod slow to pull its image), not a mistake of the
// user's: it is kept, the shard fires its share of every trial already
// due at once (Late says how late), and the merge counts those bursts as
// not simultaneous, where refusing it would lose every other shard's
// work and every trial still to come. Its fields are StartAt and Wait.
func CheckStartAt(at, now time.Time, wait bool) error {
	now = now.Round(0) // the wall clock, as at's
	switch {
	case now.Sub(at) > MaxStartAhead:
		return usage.Fieldf("StartAt", "{} %s is %s in the past, more than a day; give an instant to come, computed once for every shard, or +DURATION such as +30s",
			at.Format(time.RFC3339Nano), aboutDuration(now.Sub(at)))
	case at.Sub(now) > MaxStartAhead && !wait:
		return usage.Fieldf("StartAt", "{} %s is %s ahead, more than a day; add {Wait} if the shards are to wait that long",
			at.Format(time.RFC3339Nano), aboutDuration(at.Sub(now)))
	}
	return nil
}

// Late says, for a shard whose release instant is at, how long ago it
// passed at now, in words ("3s"), or "" when it is still to come.
func Late(at, now time.Time) string {
	if at.IsZero() || !now.Round(0).After(at) {
		return ""
	}
	return aboutDuration(now.Round(0).Sub(at))
}

// aboutDuration says d in days from two days, else to the second, or to
// the millisecond below one.
func aboutDuration(d time.Duration) string {
	if d >= 48*time.Hour {
		return fmt.Sprintf("%d days", d/(24*time.Hour))
	}
	if d < time.Second {
		return d.Round(time.Millisecond).String()
	}
	return results.DurationWords(d.Round(time.Second))
}

// RunShard plays shard s of the plan: its share of every trial's burst,
// released at the agreed instants, with no read-back and no verdict,
// since no shard sees a whole burst. The error is a usage error; a target
// that fails is recorded in its ShardTarget.
func RunShard(ctx context.Context, p engine.Plan, s engine.Sharding) (*results.ShardResult, error) {
	rs, err := p.Resolve()
	if err != nil {
		return nil, err
	}
	sc := p.Scenario
	n := cmp.Or(p.Requests, sc.DefaultRequests)
	trials := cmp.Or(p.Trials, engine.DefaultTrials)
	timeout := cmp.Or(p.Timeout, engine.DefaultTimeout)
	switch {
	case sc.Stream != nil:
		return nil, usage.Fieldf("Scenario", "%s fires a stream of arrivals over time, not a burst; a sharded run fires bursts", sc.Name)
	case p.Sequential:
		return nil, usage.Fieldf("Sequential", "{} fires one request after another; a sharded run fires bursts")
	case p.Background != nil:
		return nil, usage.Fieldf("Background", "{} loads each target beside the trials of one process, and a shard would load it once per shard; run the shards without {}")
	case p.MaxRate > 0:
		return nil, usage.Fieldf("MaxRate", "{} adds trials as the verdicts come, and a shard sees none; give {Trials}")
	}
	if err := engine.Splittable(sc); err != nil {
		return nil, err
	}
	if err := s.Check(n); err != nil {
		return nil, err
	}
	lo, hi := s.Span(n)
	if kept := (hi - lo) * trials * len(rs); kept > MaxShardRequests {
		return nil, fmt.Errorf("%w: this shard would keep %d requests (%d a burst × %d trials × %d targets) for the merge; at most %d: use more shards or fewer trials",
			results.ErrUsage, kept, hi-lo, trials, len(rs), MaxShardRequests)
	}
	for _, r := range rs {
		if !engine.Shareable(r.Spec, r.Entry) {
			return nil, engine.ErrNotShareable(r.Spec.Name())
		}
	}
	out := &results.ShardResult{Schema: results.ShardSchemaVersion, Kind: results.ShardRun, RunID: s.RunID, Shard: s.Index, Shards: s.Of,
		Period: cmp.Or(s.Period, engine.DefaultPeriod), Host: s.Host}
	if !s.StartAt.IsZero() {
		at := s.StartAt
		out.StartAt = &at
	}
	part := &results.ShardRunPart{Scenario: sc.Name, Rule: sc.Rule, Settings: sc.Settings, Requests: n, Lo: lo, Hi: hi, Trials: trials, Seed: p.Seed, Timeout: timeout}
	out.Run = part
	opts := append([]targets.Option{targets.WithSeed(p.Seed), targets.WithVirtualTime(false)}, p.Options...)
	opened, openErr, err := engine.OpenAll(ctx, rs, opts)
	if err != nil {
		return nil, err
	}
	defer engine.CloseAll(opened)
	for ti, r := range rs {
		st := results.ShardTarget{Target: r.Spec.Name(), Spec: r.Raw, Guarantee: r.Entry.Guarantee}
		if r.Spec.URL != nil {
			st.Spec = st.Target
		}
		st.Expect, st.Strict = engine.ExpectationOf(r.Entry, p.Expect)
		if ctx.Err() != nil {
			break
		}
		if openErr[ti] != nil {
			st.Error = openErr[ti].Error()
		} else {
			sr := shardRun{sc: sc, target: opened[ti], s: &s, lo: lo, hi: hi, timeout: timeout, trials: trials,
				first: ti * trials, onTrial: p.OnTrial,
				key: func(trial int) string { return fmt.Sprintf("%s-%s-%d-%d", sc.KeyPrefix, s.RunID, ti, trial) }}
			if err := engine.PlayThenClose(&opened[ti], func() error { return sr.play(ctx, &st) }); err != nil {
				st.Error = err.Error()
			}
		}
		part.Targets = append(part.Targets, st)
	}
	part.Interrupted = ctx.Err() != nil
	return out, nil
}

// shardRun is a shard's trials on one opened target.
type shardRun struct {
	sc      *engine.Scenario
	target  *targets.Target
	s       *engine.Sharding
	lo, hi  int
	timeout time.Duration
	trials  int
	// first is the slot of the target's first trial: targets play one
	// after another, each trial in a slot of its own.
	first   int
	key     func(trial int) string
	onTrial func(target string, done, total int)
}

func (r shardRun) play(ctx context.Context, st *results.ShardTarget) error {
	n := r.hi - r.lo
	t := r.target
	if err := t.Prepare(ctx, n); err != nil {
		return &engine.TargetError{Stage: fmt.Sprintf("prepare %d requests", n), Err: err}
	}
	pl, ok := r.sc.Bind(t.Store)
	if !ok {
		return &engine.TargetError{Stage: fmt.Sprintf("cannot play %s (it has no %s)", r.sc.Name, r.sc.Needs)}
	}
	retrier, _ := t.Store.(targets.Retrier)
	// A server still busy with earlier work (a long-running serve after
	// a load) accepts connections and reads heads slowly: staging took
	// up to a second there, past a fixed lead, and the shard then fired
	// its share that late, alone: bursts spread over 0.4 to 2.6 s. The
	// lead grows to twice the slowest staging seen, so that the next
	// trial is staged in time; a trial staged late still shows it in its
	// release spread, and the merge counts it as not simultaneous.
	lead := min(stageLead, cmp.Or(r.s.Period, engine.DefaultPeriod)/2)
	for i := range r.trials {
		k := r.key(i)
		at := r.s.Slot(r.first + i)
		if pl.Prelude != nil && r.s.Index == 0 {
			// One shard readies the key (a race file's setup), as soon as
			// the last burst is done: every shard's requests find it ready
			// only if it is done before the release.
			if err := pl.Prelude(ctx, k, func(d time.Duration) error { return (clock.Real{}).Sleep(ctx, d) }); err != nil {
				if ctx.Err() != nil {
					return nil
				}
				return &engine.TargetError{Stage: "ready " + k, Err: err}
			}
			if !at.IsZero() && time.Now().After(at) {
				return &engine.TargetError{Stage: fmt.Sprintf("ready %s: done %s after its release instant, when the other shards had fired; give the shards a longer period between trials",
					k, results.DurationWords(time.Since(at)))}
			}
		}
		if !at.IsZero() {
			engine.WaitUntil(ctx, at.Add(-lead))
		}
		staging := time.Now()
		if ctx.Err() != nil {
			return nil
		}
		var before int64
		if retrier != nil {
			before = retrier.Retries()
		}
		do, err := engine.StageBurst(ctx, pl, t.Store, k, r.lo, n)
		if err != nil {
			if ctx.Err() != nil {
				return nil
			}
			return &engine.TargetError{Stage: fmt.Sprintf("stage %d requests", n), Err: err}
		}
		lead = nextLead(lead, time.Since(staging))
		f := engine.ShardFiring(n, r.timeout, r.lo, at)
		reqs, arrivals, err := f.Fire(ctx, do)
		if ctx.Err() != nil {
			return nil // cut short: this shard's share proves nothing
		}
		if err != nil {
			return &engine.TargetError{Stage: "fire the burst", Err: err}
		}
		trial := results.ShardTrial{Index: i, Key: k, Requests: reqs}
		if arrivals != nil {
			trial.Arrivals = make([]int64, len(arrivals))
			for j, a := range arrivals {
				trial.Arrivals[j] = a.UnixNano()
			}
		}
		if retrier != nil {
			trial.Retries = retrier.Retries() - before
		}
		if pl.Part != nil {
			trial.Readback = pl.Part(k)
		}
		st.Trials = append(st.Trials, trial)
		if r.onTrial != nil {
			r.onTrial(st.Target, i+1, r.trials)
		}
	}
	return nil
}

// nextLead is the staging lead after a trial whose staging took took:
// twice that when it came close to the lead, never more than
// maxStageLead, never less than it was.
func nextLead(lead, took time.Duration) time.Duration {
	return max(lead, min(2*took, maxStageLead))
}

// CheckShard refuses a part whose own figures do not hold together: a
// shard outside its count, requests outside its span or missing from it,
// outcomes racelab never writes. What a part says about the others (the
// same run, the same plan) is checked when parts are merged.
func CheckShard(s *results.ShardResult, find engine.Finder) error {
	bad := func(format string, args ...any) error {
		return fmt.Errorf("%w: shard %d: %s", engine.ErrInconsistent, s.Shard, fmt.Sprintf(format, args...))
	}
	switch {
	case s.Kind != results.ShardRun && s.Kind != results.ShardLoad:
		return bad("kind %q; want run or load", s.Kind)
	case engine.CheckRunID(s.RunID) != nil:
		return bad("run_id %q is not a run id racelab writes", s.RunID)
	case s.Shards < 1 || s.Shard < 0 || s.Shard >= s.Shards:
		return bad("shard %d of %d", s.Shard, s.Shards)
	case (s.Run == nil) == (s.Load == nil) || s.Kind == results.ShardRun && s.Run == nil || s.Kind == results.ShardLoad && s.Load == nil:
		return bad("a %s part must hold exactly its %s", s.Kind, s.Kind)
	}
	if s.Load != nil {
		if err := CheckLoad(s.Load, find); err != nil {
			return bad("load: %v", err)
		}
		return checkLoadShard(s)
	}
	r := s.Run
	sh := engine.Sharding{Index: s.Shard, Of: s.Shards}
	if r.Requests < s.Shards || r.Requests > engine.MaxRequests {
		return bad("requests %d for %d shards; want %d to %d", r.Requests, s.Shards, s.Shards, engine.MaxRequests)
	}
	if lo, hi := sh.Span(r.Requests); r.Lo != lo || r.Hi != hi {
		return bad("requests %d to %d; shard %d of %d fires %d to %d of %d", r.Lo, r.Hi, s.Shard, s.Shards, lo, hi, r.Requests)
	}
	if r.Trials < 1 {
		return bad("trials %d; want 1 or more", r.Trials)
	}
	sc, err := find(r.Scenario, r.Settings)
	if errors.Is(err, results.ErrCannotJudge) {
		return err
	} else if err != nil {
		return bad("scenario %q is not a story this racelab knows", r.Scenario)
	}
	if len(r.Targets) == 0 {
		return bad("run.targets: none; a part holds every target the shard ran")
	}
	for ti := range r.Targets {
		t := &r.Targets[ti]
		if len(t.Trials) > r.Trials {
			return bad("target %s: %d trials of %d", t.Target, len(t.Trials), r.Trials)
		}
		for i := range t.Trials {
			tr := &t.Trials[i]
			if tr.Index != i {
				return bad("target %s: trial %d where %d was due", t.Target, tr.Index, i)
			}
			if len(tr.Requests) != r.Hi-r.Lo || (tr.Arrivals != nil && len(tr.Arrivals) != len(tr.Requests)) {
				return bad("target %s: trial %d: %d requests, %d arrivals; the shard fires %d", t.Target, i, len(tr.Requests), len(tr.Arrivals), r.Hi-r.Lo)
			}
			for j, q := range tr.Requests {
				if q.Index != r.Lo+j {
					return bad("target %s: trial %d: request %d where %d was due", t.Target, i, q.Index, r.Lo+j)
				}
				if err := sc.CheckOutcome(q.Outcome); err != nil {
					return bad("target %s: trial %d: request %d: outcome %v", t.Target, i, q.Index, err)
				}
			}
		}
	}
	return nil
}
