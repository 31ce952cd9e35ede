package scenarios

import (
	"cmp"
	"context"
	"math/rand/v2"
	"time"

	"github.com/racelab/racelab/scenarios/engine"
	"github.com/racelab/racelab/scenarios/results"
	"github.com/racelab/racelab/targets"
	"github.com/racelab/racelab/targets/clock"
	"github.com/racelab/racelab/targets/kv"
)

// The scripted parts of five-checkouts (payment, outage, sold mark) play
// seeded scripts in virtual time rather than bursts against a store; what
// they share lives here so that a change to how a script is run, saved or
// timed is made once.

// scriptedSide is one side of a scripted part's comparison: the target it
// is saved as and how it plays trial i.
type scriptedSide struct {
	tr   results.TargetResult
	play func(ctx context.Context, i int) (results.Trial, error)
}

// shopSide is a side played against a shop design or policy named name:
// the naive one is expected to break, the fixed one (holds) to hold
// strictly.
func shopSide(name, guarantee string, holds bool, play func(ctx context.Context, i int) (results.Trial, error)) scriptedSide {
	tr := results.TargetResult{Target: "shop:" + name, Spec: "shop:" + name, Clock: results.ClockVirtual,
		Guarantee: guarantee, Expect: results.ExpectBreak}
	if holds {
		tr.Expect, tr.Strict = results.ExpectHold, true
	}
	return scriptedSide{tr: tr, play: play}
}

// runScripted plays res.Trials trials (the default when zero) of each
// side in turn and adds one target per side to res. A cancelled ctx
// returns what was finished, marked interrupted; a side whose script
// fails keeps the error and the trials before it.
func runScripted(ctx context.Context, res *results.Result, sides []scriptedSide, onTrial func(string, int, int)) (*results.Result, error) {
	res.Trials = cmp.Or(res.Trials, engine.DefaultTrials)
	if res.Trials < 1 {
		return nil, engine.Wants.Invalid("Trials", res.Trials)
	}
	// Scripts play in virtual time: a replay of the seed, its id the
	// result's own hash (results.ReplayID).
	done := func() (*results.Result, error) {
		res.RunID = results.ReplayID(res)
		return res, nil
	}
	for _, side := range sides {
		tr := side.tr
		rec := results.NewRecorder(&tr, results.Keep{})
		for i := range res.Trials {
			if ctx.Err() != nil {
				res.Interrupted = true
				return done()
			}
			t, err := side.play(ctx, i)
			if err != nil {
				tr.Error = err.Error()
				break
			}
			rec.Add(t)
			if onTrial != nil {
				onTrial(tr.Target, i+1, res.Trials)
			}
		}
		rec.Finish(results.DefaultConfidence, 0)
		res.Targets = append(res.Targets, tr)
	}
	return done()
}

// kvScript is what a script played against the simulated KV namespace
// starts from: its random source, its virtual clock and the namespace,
// spread over the locations, on that clock.
type kvScript struct {
	rng   *rand.Rand
	v     *clock.Virtual
	start time.Time
	cfg   kv.Config
	ns    *kv.Namespace
}

// newKVScript starts trial i of seed. The script depends on the seed, the
// trial and the part's salt only, so that the sides compared face the
// same buyers at the same moments from the same places.
func newKVScript(seed int64, i int, salt uint64) (*kvScript, error) {
	s := &kvScript{rng: rand.New(rand.NewPCG(uint64(seed), uint64(i)^salt)), v: clock.NewVirtual(targets.DefaultStart)}
	s.start = s.v.Now()
	s.cfg = kv.DefaultConfig()
	s.cfg.Route, s.cfg.Seed, s.cfg.Clock = kv.RouteSpread, seed+int64(i), s.v
	ns, err := kv.New(s.cfg)
	if err != nil {
		return nil, err
	}
	s.ns = ns
	return s, nil
}

// since is the script's time so far.
func (s *kvScript) since() time.Duration { return s.v.Now().Sub(s.start) }

// sleepUntil advances the script's clock to at, if it is not there yet.
func (s *kvScript) sleepUntil(ctx context.Context, at time.Duration) error {
	if d := at - s.since(); d > 0 {
		return s.v.Sleep(ctx, d)
	}
	return nil
}
