package engine

import (
	"context"
	"fmt"
	"github.com/racelab/racelab/scenarios/results"
)

// DefaultMaxTrials bounds `racelab explain --until broken`: a race that
// shows in one trial of ten shows within 50 nearly always (1 − 0.9⁵⁰ >
// 99.4 %), and a replay that never breaks must still end.
const DefaultMaxTrials = 50

// MaxMaxTrials bounds --max-trials.
const MaxMaxTrials = 1000

// replayRace replays the race on x.Target: one trial, or with
// x.MaxTrials set, trial after trial (seed after seed) until one breaks
// the rule or MaxTrials have held. It returns the trial to show (the
// first broken one, else the last), its seed, and how many were played.
func (x *Explainer) replayRace(ctx context.Context) (race *TargetResultSeed, err error) {
	plan := x.Plan(x.Target)
	tries := max(x.MaxTrials, 1)
	out := &TargetResultSeed{}
	for k := range tries {
		plan.Seed = x.Seed + int64(k)
		r, err := x.Replay(ctx, plan)
		if err != nil {
			return nil, err
		}
		out.Result, out.Seed, out.Played = r, plan.Seed, k+1
		if r.Trials[0].Broken {
			break
		}
	}
	return out, nil
}

// TargetResultSeed is a replay and where it came from: its seed, and
// how many trials were played to find it.
type TargetResultSeed struct {
	Result *results.TargetResult
	Seed   int64
	Played int
}

// raceTitle is the heading of the race's replay: with --until broken, it
// says which trial broke, or that none did within the bound.
func (x *Explainer) raceTitle(r *TargetResultSeed, how string) string {
	t := &r.Result.Trials[0]
	switch {
	case x.MaxTrials == 0 && t.Broken:
		return fmt.Sprintf("The race, replayed on %s (%s, seed %d)", r.Result.Target, how, r.Seed)
	case x.MaxTrials == 0:
		// A service given as the race may hold: the heading must not
		// promise a race the lanes do not show.
		return fmt.Sprintf("The race did not show on %s (%s, seed %d)", r.Result.Target, how, r.Seed)
	case t.Broken:
		return fmt.Sprintf("The race, replayed on %s (%s, seed %d): trial %d, the first of up to %d that broke the rule", r.Result.Target, how, r.Seed, r.Played, x.MaxTrials)
	}
	return fmt.Sprintf("The race did not show on %s in %d trials (%s, seeds %d to %d); the last is shown", r.Result.Target, r.Played, how, x.Seed, r.Seed)
}
