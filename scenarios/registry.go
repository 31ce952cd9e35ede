package scenarios

import (
	"context"
	"errors"
	"fmt"
	"os"
	"slices"
	"strings"
	"time"

	"github.com/racelab/racelab/internal/usage"
	"github.com/racelab/racelab/scenarios/engine"
	"github.com/racelab/racelab/scenarios/racefile"
	"github.com/racelab/racelab/scenarios/results"
	"github.com/racelab/racelab/targets"
)

// registry is every story, in the order they are told: a new story is
// one file and one entry here. A plain variable: the engine finds stories
// through a Finder, so no story's definition reaches back into this list.
var registry = []*engine.Scenario{tenHitsOneView, sixBecomeFour, fiveCheckouts, sixOfFive, stalePlan}

// All returns every scenario, in the order the stories are told.
func All() []*engine.Scenario { return slices.Clone(registry) }

// Names returns every scenario's name.
func Names() []string {
	n := make([]string, len(registry))
	for i, s := range registry {
		n[i] = s.Name
	}
	return n
}

// Lookup finds a scenario by name; the error is a *targets.UnknownNameError.
// A name that is a race file (IsRaceFile) is read as one: its race is a
// story like the others (package racefile), and an error in it is a
// usage error naming its line.
func Lookup(name string) (*engine.Scenario, error) { return LookupShowing(name, false) }

// LookupShowing is Lookup, and for a race file with show set, a race
// whose outputs and errors show its secrets (--show-secrets) instead of
// racefile.Hidden.
func LookupShowing(name string, show bool) (*engine.Scenario, error) {
	if IsRaceFile(name) {
		return loadRace(name, &racefile.Options{ShowSecrets: show}, false)
	}
	for _, s := range registry {
		if s.Name == name {
			return s, nil
		}
	}
	if strings.HasSuffix(name, ".yaml") || strings.HasSuffix(name, ".yml") {
		// Named as a race file, which is not there: a story list would
		// not help.
		return nil, fmt.Errorf("race file %s: no such file; want the path of a *.race.yaml file (racelab race init writes one)%.0w", name, results.ErrUsage)
	}
	return nil, &targets.UnknownNameError{Kind: "scenario", Name: name, Known: Names()}
}

// Find is Lookup with the settings a saved result records: the story as
// the run made it. It also finds the scripted parts a result can come
// from (five-checkouts' payment part), which no burst plays. It is the
// engine's Finder for the built-in stories.
func Find(name string, set *results.Settings) (*engine.Scenario, error) {
	if set != nil && set.Race != nil {
		return RaceFiles{}.load(set.Race)
	}
	if name == paymentStory.Name {
		return paymentStory, nil
	}
	sc, err := Lookup(name)
	if err != nil || set == nil {
		return sc, err
	}
	return With(sc, *set)
}

// Check is the engine's Check of a saved result, with its story found
// among the built-in ones.
func Check(r *results.Result, historyTimeout time.Duration) error {
	return engine.CheckWith(r, Find, historyTimeout)
}

// With is the story sc with settings s: itself when s sets nothing. A
// setting the story does not take is a usage error naming the stories
// that do.
func With(sc *engine.Scenario, s results.Settings) (*engine.Scenario, error) {
	set := s.Names()
	for _, k := range set {
		if !takes(sc, k) {
			var owners []string
			for _, o := range registry {
				if takes(o, k) {
					owners = append(owners, o.Name)
				}
			}
			return nil, usage.Fieldf(k, "{} is a setting of %s, not %s", strings.Join(owners, " and "), sc.Name)
		}
	}
	if len(set) == 0 || sc.Vary == nil {
		return sc, nil
	}
	v, err := sc.Vary(s)
	var field *usage.FieldError
	switch {
	case errors.As(err, &field):
		return nil, err // it names the knob: the story's name adds nothing
	case err != nil:
		return nil, fmt.Errorf("%w: %s: %w", results.ErrUsage, sc.Name, err)
	}
	return v, nil
}

// takes says whether sc has a knob of that name.
func takes(sc *engine.Scenario, knob string) bool {
	return slices.ContainsFunc(sc.Knobs, func(k engine.Knob) bool { return k.Name == knob })
}

// IsRaceFile says name is a race file: a file that exists, named
// *.race.yaml, *.race.yml, *.yaml or *.yml (loadRace refuses one that is
// not a regular file).
func IsRaceFile(name string) bool {
	if !strings.HasSuffix(name, ".yaml") && !strings.HasSuffix(name, ".yml") {
		return false
	}
	// Any file so named, a FIFO or a device too: loadRace refuses those
	// in one line rather than as no such file.
	_, err := os.Stat(name)
	return err == nil
}

// LookupWith is Lookup for a command that fires at targets: a race file
// is given o (its databases, --allow-exec, the run's targets), checked
// against the file; a story, which reads no database, refuses --db.
func LookupWith(name string, o racefile.Options) (*engine.Scenario, error) {
	if IsRaceFile(name) {
		return loadRace(name, &o, true)
	}
	if len(o.Databases) > 0 {
		return nil, fmt.Errorf("--db is for a race file that reads a database (databases: [app]); %s is a built-in story%.0w", name, results.ErrUsage)
	}
	return Lookup(name)
}

// loadRace reads the race file at path as a story, with o's secrets
// shown or not; fired, its databases and commands are checked against o.
//
// It reads without a context: Load refuses what is not a regular file
// before it opens it, and a regular file never waits.
func loadRace(path string, o *racefile.Options, fired bool) (*engine.Scenario, error) {
	f, err := racefile.Load(context.Background(), path)
	if err != nil {
		return nil, err
	}
	f.ShowSecrets = o.ShowSecrets
	if fired {
		return f.ScenarioWith(f.Environ(), *o)
	}
	return f.Scenario(f.Environ())
}
