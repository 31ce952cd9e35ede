package engine

import (
	"context"
	"fmt"
	"runtime"
	"slices"
	"sync"
	"time"

	"github.com/racelab/racelab/scenarios/results"
	"github.com/racelab/racelab/targets"
	"github.com/racelab/racelab/targets/clock"
	"github.com/racelab/racelab/targets/story"
)

// Firing says how one trial's requests are fired: all at once or one after
// another, on the real clock or a target's virtual one.
type Firing struct {
	n       int
	timeout time.Duration
	// virtual is the target's virtual clock, nil on the real clock.
	virtual *clock.Virtual
	// realIO says the target's requests do real I/O (a real store in
	// virtual time): they keep their real timeout, since virtual time
	// does not move while a request waits on a socket.
	realIO bool
	// gap, when positive, fires the requests one after another, gap apart,
	// instead of all at once.
	gap time.Duration
	// trace records every request's store operations into Request.Steps.
	trace bool
	// stream, when set, fires each trial as arrivals over time; seed
	// draws each trial's arrivals.
	Stream *Stream
	seed   int64
	// acrossMidnight lets a sequential virtual trial cross UTC midnight
	// (Plan.AcrossMidnight).
	acrossMidnight bool
	// offset numbers the requests from offset on (Request.Index): a
	// shard fires requests offset..offset+n-1 of a burst shared with
	// others (shard.go).
	offset int
	// at, when set, is the wall-clock instant a real-clock burst is
	// released at, and the instant its requests' instants count from;
	// zero releases as soon as every request is ready.
	at time.Time
}

// untilDayFits is how long to wait from now for span to fit within one UTC
// day: zero when it fits already, else the time to the next midnight.
func untilDayFits(now time.Time, span time.Duration) time.Duration {
	u := now.UTC()
	midnight := time.Date(u.Year(), u.Month(), u.Day()+1, 0, 0, 0, 0, time.UTC)
	if !u.Add(span).After(midnight) {
		return 0
	}
	return midnight.Sub(u)
}

// fire plays one trial's requests and returns them with the server-side
// arrival instants, when every answer carried one. The error is racelab's
// own (a virtual run that deadlocked), never a target's.
func (f Firing) fire(ctx context.Context, do func(context.Context, int) Answer) ([]results.Request, []time.Time, error) {
	reqs := make([]results.Request, f.n)
	arrived := make([]time.Time, f.n)
	var err error
	switch {
	case f.virtual != nil && f.gap > 0:
		err = f.virtual.Run(ctx, 1, func(ctx context.Context, _ int) {
			// A daily quota starts afresh at UTC midnight: a trial that
			// straddled it would grant a sixth download rightly and be
			// judged against one day's limit. Virtual time skips ahead to
			// the new day instead, as a visitor coming back tomorrow would.
			if wait := untilDayFits(f.virtual.Now(), time.Duration(f.n)*f.gap+time.Minute); wait > 0 && !f.acrossMidnight && f.virtual.Sleep(ctx, wait) != nil {
				return
			}
			f.sequence(ctx, f.virtual, f.virtual.Now(), do, reqs, arrived)
		})
	case f.virtual != nil:
		release := f.virtual.Now()
		err = f.virtual.Run(ctx, f.n, func(ctx context.Context, i int) {
			f.one(ctx, i, do, f.virtual.Now, release, reqs, arrived)
		})
	case f.gap > 0:
		f.sequence(ctx, clock.Real{}, time.Now(), do, reqs, arrived)
	default:
		// On the real clock too a burst waits out the last moments of a
		// UTC day rather than straddle midnight, where a daily quota
		// rightly grants afresh and would be judged against one day. The
		// wait is at most the burst's own timeout, capped at a minute.
		// Shards have agreed on an instant and keep to it.
		if f.at.IsZero() && !f.acrossMidnight {
			if wait := untilDayFits(time.Now(), min(f.timeout, time.Minute)); wait > 0 && (clock.Real{}).Sleep(ctx, wait) != nil {
				break
			}
		}
		f.Burst(ctx, do, reqs, arrived)
	}
	if err != nil && ctx.Err() == nil {
		return nil, nil, fmt.Errorf("virtual time: %w", err)
	}
	if slices.ContainsFunc(arrived, time.Time.IsZero) {
		arrived = nil
	}
	return reqs, arrived, nil
}

// Burst fires exactly n requests at once on the real clock. All n
// goroutines are started and parked on one channel before it is closed, so
// none of them pays for goroutine start-up after the release; each writes
// only its own slot.
func (f Firing) Burst(ctx context.Context, do func(context.Context, int) Answer, reqs []results.Request, arrived []time.Time) {
	gate := make(chan struct{})
	var ready, done sync.WaitGroup
	ready.Add(f.n)
	done.Add(f.n)
	var release time.Time // written before close(gate), read after it
	for i := range f.n {
		go func() {
			defer done.Done()
			ready.Done()
			<-gate
			f.one(ctx, i, do, time.Now, release, reqs, arrived)
		}()
	}
	ready.Wait()
	release = time.Now()
	if !f.at.IsZero() {
		// Instants count from the agreed instant, not from this process's
		// own release, so that shards' requests line up in one burst.
		WaitUntil(ctx, f.at)
		release = f.at
	}
	close(gate)
	done.Wait()
}

// sequence fires the requests one after another, gap apart, as one visitor
// clicking through: the stale-read half of a story, where no two requests
// overlap and the store still gets it wrong.
func (f Firing) sequence(ctx context.Context, c clock.Clock, start time.Time, do func(context.Context, int) Answer, reqs []results.Request, arrived []time.Time) {
	for i := range f.n {
		if i > 0 && c.Sleep(ctx, f.gap) != nil {
			return
		}
		f.one(ctx, i, do, c.Now, start, reqs, arrived)
	}
}

// one fires request i and writes its slot; instants are relative to
// release, read from now (the monotonic clock, or virtual time).
func (f Firing) one(ctx context.Context, i int, do func(context.Context, int) Answer, now func() time.Time, release time.Time, reqs []results.Request, arrived []time.Time) {
	var rec *story.Recorder
	if f.trace {
		rec = new(story.Recorder)
		ctx = story.WithRecorder(ctx, rec)
	}
	invoke := now().Sub(release)
	a := f.call(ctx, i, do)
	r := results.Request{
		Index:   f.offset + i,
		Invoke:  invoke,
		Return:  now().Sub(release),
		Outcome: a.Outcome,
		Value:   a.Value,
		Early:   a.Early,
		Figures: a.Figures,
	}
	if a.Err != nil {
		// A failed request's figures, if any, say nothing reliable.
		r.Outcome, r.Error, r.Figures = results.Errored, a.Err.Error(), nil
	}
	if rec != nil {
		for _, s := range rec.Steps() {
			r.Steps = append(r.Steps, results.Step{At: s.At.Sub(release), Op: s.Op, Key: s.Key, Value: s.Value, Note: s.Note})
		}
	}
	reqs[i] = r
	arrived[i] = a.Arrival
}

// call runs do with the request's timeout (bounded); a panic in the
// target becomes the request's failure.
func (f Firing) call(ctx context.Context, i int, do func(context.Context, int) Answer) (a Answer) {
	ctx, cancel := f.bounded(ctx)
	defer cancel()
	defer func() {
		if p := recover(); p != nil {
			a = Answer{Outcome: results.Errored, Err: fmt.Errorf("panic in target: %v", p)}
		}
	}()
	return do(ctx, i)
}

// bounded is ctx with the timeout of one request or one read-back. A
// simulated store in virtual time gets no real timeout: its requests take
// no real time, and one that could never finish is a deadlock the clock
// reports. (Nor does it pay for a timer it would never need, twice a
// trial.)
func (f Firing) bounded(ctx context.Context) (context.Context, context.CancelFunc) {
	if f.virtual == nil || f.realIO {
		return context.WithTimeout(ctx, f.timeout)
	}
	return ctx, func() {}
}

// Burst fires exactly n calls of do at once on the real clock, as a trial
// does, and returns their requests. Instants are monotonic and relative to
// the release. Every call gets its own timeout; a panic in do is recorded
// as that request's failure.
func Burst(ctx context.Context, n int, timeout time.Duration, do func(ctx context.Context, i int) Answer) []results.Request {
	reqs, _, _ := Firing{n: n, timeout: timeout}.fire(ctx, do)
	return reqs
}

// fireStream plays one trial as a stream: it waits for the stream's start
// (a window boundary, on the target's clock), runs the prelude, and then
// fires request i at offsets[i] after that release, each on its own, so
// that a slow answer never holds back the next arrival (an open model).
// The error is racelab's own (a virtual run that deadlocked) or the
// prelude's.
func (f Firing) fireStream(ctx context.Context, offsets []time.Duration, prelude func(context.Context, func(time.Duration) error) error,
	do func(context.Context, int) Answer) ([]results.Request, error) {
	n := len(offsets)
	reqs := make([]results.Request, n)
	arrived := make([]time.Time, n)
	var perr error
	start := func(ctx context.Context, c clock.Clock) bool {
		if d := f.Stream.wait(c.Now()); d > 0 && c.Sleep(ctx, d) != nil {
			return false
		}
		if prelude != nil {
			if perr = prelude(ctx, func(d time.Duration) error { return c.Sleep(ctx, d) }); perr != nil {
				return false
			}
		}
		return true
	}
	if v := f.virtual; v != nil {
		err := v.Run(ctx, 1, func(ctx context.Context, _ int) { start(ctx, v) })
		if err == nil && perr == nil {
			release := v.Now()
			err = v.Run(ctx, n, func(ctx context.Context, i int) {
				if v.Sleep(ctx, offsets[i]) == nil {
					f.one(ctx, i, do, v.Now, release, reqs, arrived)
				}
			})
		}
		if err != nil && ctx.Err() == nil {
			return nil, fmt.Errorf("virtual time: %w", err)
		}
	} else if start(ctx, clock.Real{}) {
		release := time.Now()
		var wg sync.WaitGroup
		for i := range n {
			wg.Go(func() {
				if (clock.Real{}).Sleep(ctx, time.Until(release.Add(offsets[i]))) == nil {
					f.one(ctx, i, do, time.Now, release, reqs, arrived)
				}
			})
		}
		wg.Wait()
	}
	if perr != nil && ctx.Err() == nil {
		return nil, fmt.Errorf("before the stream: %w", perr)
	}
	return reqs, nil
}

// Midnight is the day boundary the explanation crosses: the first one
// after virtual time starts.
var Midnight = targets.DefaultStart.Truncate(24 * time.Hour).Add(24 * time.Hour)

// WaitUntil returns at the wall-clock instant at, or when ctx is done. It
// sleeps until shortly before and spins the rest, yielding, since a
// timer's wake-up is far coarser than the spread a release aims for.
func WaitUntil(ctx context.Context, at time.Time) {
	if d := time.Until(at) - spinBefore; d > 0 {
		t := time.NewTimer(d)
		select {
		case <-t.C:
		case <-ctx.Done():
			t.Stop()
			return
		}
	}
	for time.Now().Before(at) && ctx.Err() == nil {
		runtime.Gosched()
	}
}

// spinBefore is the last stretch before a release instant that is
// spun rather than slept: a sleeping timer wakes up to a millisecond
// late, which would be most of the spread shards can reach.
const spinBefore = 2 * time.Millisecond

// ShardFiring fires a shard's share of a burst: its n requests numbered
// from offset on, released at the wall-clock instant at (zero: as soon as
// they are ready), each bounded by timeout.
func ShardFiring(n int, timeout time.Duration, offset int, at time.Time) Firing {
	return Firing{n: n, timeout: timeout, offset: offset, at: at}
}

// Fire fires the requests and returns them with the server's arrival
// instants, when it reports them.
func (f Firing) Fire(ctx context.Context, do func(context.Context, int) Answer) ([]results.Request, []time.Time, error) {
	return f.fire(ctx, do)
}
