package engine

import (
	"context"
	"errors"
	"fmt"

	"github.com/racelab/racelab/internal/usage"
	"github.com/racelab/racelab/scenarios/results"
	"github.com/racelab/racelab/targets"
)

// ErrFixBroke is matched by Explain's error (errors.Is) when the fixed
// target broke the rule in its replay: "how the fix works" under it would
// be a lie.
var ErrFixBroke = errors.New("the fixed target broke the rule")

// fixBroke says how the fixed target broke; it is ErrFixBroke.
type fixBroke struct{ msg string }

func (e fixBroke) Error() string        { return e.msg }
func (e fixBroke) Is(target error) bool { return target == ErrFixBroke }

// Explainer is what an explanation was asked for, handed to a story's
// extras so that they replay on the same targets and seed.
type Explainer struct {
	Scenario *Scenario
	Catalog  *targets.Catalog
	// Target breaks the rule; Fixed holds it.
	Target, Fixed string
	Requests      int
	Seed          int64
	// MaxTrials, when set (--until broken), replays the race trial after
	// trial until one breaks the rule, at most this many.
	MaxTrials int
	// Options open the targets (servers' URLs, an HTTP service's mapping).
	Options []targets.Option
	// Race and Fix are the replays of the burst on Target and on Fixed.
	Race, Fix *results.TargetResult
}

// Plan is the plan of one traced trial on target, from the explainer's
// scenario, N and seed.
func (x *Explainer) Plan(target string) Plan {
	return Plan{Scenario: x.Scenario, Catalog: x.Catalog, Targets: []string{target}, Requests: x.Requests, Seed: x.Seed, Trace: true,
		Options: x.Options}
}

// CheckTargets refuses a Fixed target that breaks the rule by design,
// and a Target named from the catalog that holds it: either would print a
// story the replay does not tell (a "fix" under a store that loses
// updates, a "race" on one that cannot have it). A URL is the user's own
// service: it may be the race to explain, and is expected to hold as a
// fix. A story with no line-up of its own (a race file) has no default
// targets to replay on: both must be given (given says which were), and
// each must be one the story can play, all before anything is sent.
func (x *Explainer) CheckTargets(given func(field string) bool) error {
	cat, sc := (&Plan{Catalog: x.Catalog}).catalog(), x.Scenario
	want := func() string {
		return results.OrList(append(x.catalogTargets(false), x.urlWanted(true)))
	}
	if len(sc.Lineup) == 0 {
		for _, field := range []string{"Target", "Fixed"} {
			if !given(field) {
				return usage.Fieldf(field, "{} is missing: %s names no targets of its own, so explain needs both {Target} (a service that breaks the rule) and {Fixed} (one that holds it): %s",
					sc.Name, want())
			}
		}
	}
	for _, f := range []struct{ field, spec string }{{"Target", x.Target}, {"Fixed", x.Fixed}} {
		spec, e, err := cat.Lookup(f.spec)
		if err != nil {
			return err
		}
		if !sc.Plays(e.Kind) {
			return usage.Fieldf(f.field, "{} %s cannot play %s (it has no %s); want %s", spec.Name(), sc.Name, sc.Needs, want())
		}
	}
	spec, e, err := cat.Lookup(x.Target)
	if err != nil {
		return err
	}
	if e.Holds && spec.URL == nil {
		return usage.Fieldf("Target", "{} %s holds the rule, so it has no race to replay; want a target that breaks it: %s",
			spec.Name(), results.OrList(x.catalogTargets(false)))
	}
	spec, e, err = cat.Lookup(x.Fixed)
	if err != nil {
		return err
	}
	if !e.Holds {
		return usage.Fieldf("Fixed", "{} %s breaks the rule by design, so it has no fix to show; want a target that holds it: %s",
			spec.Name(), results.OrList(append(x.catalogTargets(true), x.urlWanted(false))))
	}
	return nil
}

// urlWanted names the URL targets the story plays, for a message that
// asks for one: a SQL race plays on a database, anything else on the
// user's service. schemes adds the URL forms.
func (x *Explainer) urlWanted(schemes bool) string {
	for _, e := range (&Plan{Catalog: x.Catalog}).catalog().Entries() {
		if e.Name == targets.SQLStore && x.Scenario.Plays(e.Kind) {
			return "a database URL (postgres://…, mysql://… or sqlite:PATH)"
		}
	}
	if schemes {
		return "your service's URL (http://… or https://…)"
	}
	return "your service's URL"
}

// catalogTargets lists the targets named in the catalog (not URLs) that
// can play the story and are expected to hold (holds) or to break it.
func (x *Explainer) catalogTargets(holds bool) []string {
	var out []string
	for _, e := range (&Plan{Catalog: x.Catalog}).catalog().Entries() {
		if targets.ByURL(e.Name) || e.Holds != holds || !x.Scenario.Plays(e.Kind) {
			continue
		}
		out = append(out, e.Name)
	}
	return out
}

// Replay runs one traced trial of plan and returns its target's result.
func (x *Explainer) Replay(ctx context.Context, plan Plan) (*results.TargetResult, error) {
	res, err := Run(ctx, plan)
	if err != nil {
		return nil, err
	}
	if res.Interrupted {
		return nil, context.Canceled
	}
	tr := &res.Targets[0]
	if tr.Error != "" {
		return nil, errors.New(tr.Error)
	}
	return tr, nil
}

// Explain replays the story's race on x.Target, then the same burst on
// x.Fixed, with the story's own extras after each (Scenario.Extras): the
// library behind `racelab explain`. A fixed target that breaks the rule
// gives an error wrapping ErrFixBroke.
func Explain(ctx context.Context, x *Explainer) (Explanation, error) {
	sc, fixed := x.Scenario, x.Fixed
	e := Explanation{Story: sc.About()}
	found, err := x.replayRace(ctx)
	if err != nil {
		return e, err
	}
	race := found.Result
	x.Race = race
	t := &race.Trials[0]
	how, same := results.Plural(int64(len(t.Requests)), "request")+" at once", "burst"
	if sc.Stream != nil {
		how, same = results.Plural(int64(len(t.Requests)), "request")+": "+sc.Stream.Words, "trial"
	}
	e.Replays = append(e.Replays, Replay{
		Heading: x.raceTitle(found, how),
		Target:  race.Target, Clock: race.Clock, Trial: t, Outcome: sc.Account(t, race.Target), Compared: true,
	})
	if err := x.extras(ctx, &e, "race"); err != nil {
		return e, err
	}
	fixPlan := x.Plan(fixed)
	fixPlan.Seed = found.Seed // the same burst
	fix, err := x.Replay(ctx, fixPlan)
	if err != nil {
		return e, err
	}
	x.Fix = fix
	t = &fix.Trials[0]
	if t.Broken {
		return e, fixBroke{fmt.Sprintf("%s broke the rule in the replay, so it shows no fix: %s", fix.Target, sc.Account(t, fix.Target))}
	}
	e.Replays = append(e.Replays, Replay{
		Heading: fmt.Sprintf("The same %s on %s (%s)", same, fix.Target, fix.Guarantee),
		Target:  fix.Target, Clock: fix.Clock, Trial: t, Outcome: sc.Account(t, fix.Target), Compared: true,
	})
	if err := x.extras(ctx, &e, "fix"); err != nil {
		return e, err
	}
	if sc.Ending != nil {
		end, err := sc.Ending(ctx, x)
		if err != nil {
			return e, err
		}
		e.Ending = &end
	}
	return e, nil
}

// extras appends the story's extras that go after the given replay.
func (x *Explainer) extras(ctx context.Context, e *Explanation, after string) error {
	for _, ex := range x.Scenario.Extras {
		if ex.After != after {
			continue
		}
		rs, err := ex.Replay(ctx, x)
		if err != nil {
			return err
		}
		e.Replays = append(e.Replays, rs...)
	}
	return nil
}
