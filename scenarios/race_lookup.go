package scenarios

import (
	"context"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"time"

	"github.com/racelab/racelab/scenarios/engine"
	"github.com/racelab/racelab/scenarios/racefile"
	"github.com/racelab/racelab/scenarios/results"
)

// RaceFiles says where a saved result's race file is looked for when it
// is judged again: the file given on the command line (--race-file), else
// its path relative to the result file (Dir, the result file's folder),
// else the path the run was given. The zero value looks only at that
// path.
//
// With Fire set, the race is fired again (verify merging a sharded run):
// its databases and commands are checked against Fire, as LookupWith
// does.
type RaceFiles struct {
	Dir      string
	Override string
	Fire     *racefile.Options
}

// Find is the engine's Finder looking for race files as r says. It
// records in set where it found the file (RaceFile.Path, from this
// process's folder), so that a result written again records the file
// from where it goes.
func (r RaceFiles) Find(name string, set *results.Settings) (*engine.Scenario, error) {
	if set == nil || set.Race == nil {
		return Find(name, set)
	}
	sc, err := r.load(set.Race)
	if err == nil {
		set.Race.Path = sc.Settings.Race.Path
	}
	return sc, err
}

// Check is scenarios.Check with race files looked for as r says.
func (r RaceFiles) Check(res *results.Result, historyTimeout time.Duration) error {
	return engine.CheckWith(res, r.Find, historyTimeout)
}

// places are where the race file rf names may be, in order.
func (r RaceFiles) places(rf *results.RaceFile) []string {
	if r.Override != "" {
		return []string{r.Override}
	}
	var out []string
	if rf.Rel != "" && r.Dir != "" {
		out = append(out, filepath.Join(r.Dir, rf.Rel))
	}
	return append(out, rf.Path)
}

// load reads the race file a saved result ran with, with the environment
// values it recorded (the process's own fill in those it did not).
func (r RaceFiles) load(rf *results.RaceFile) (*engine.Scenario, error) {
	for _, path := range r.places(rf) {
		fi, err := os.Stat(path)
		switch {
		case err != nil:
			continue
		case !fi.Mode().IsRegular():
			return nil, fmt.Errorf("%w: race file %s is not a regular file", results.ErrUsage, path)
		}
		// A regular file never waits: no context is needed to stop it.
		f, err := racefile.Load(context.Background(), path)
		if err != nil {
			return nil, err
		}
		if rf.SHA256 != "" && f.SHA256 != rf.SHA256 {
			return nil, fmt.Errorf("race file %s changed since the run (sha256 %.12s…, now %.12s…); judge the result with the file it ran with", path, rf.SHA256, f.SHA256)
		}
		env := maps.Clone(rf.Env)
		if env == nil {
			env = map[string]string{}
		}
		maps.Copy(env, f.Environ())
		for _, name := range f.Env {
			if _, ok := env[name]; ok {
				continue
			}
			if slices.Contains(rf.Secret, name) {
				return nil, fmt.Errorf("%w: env: %s is marked secret, so the result does not record it; set it in the environment", results.ErrCannotJudge, name)
			}
			return nil, fmt.Errorf("%w: env: %s is neither recorded in the result nor set; set it in the environment", results.ErrCannotJudge, name)
		}
		if r.Fire != nil {
			return f.ScenarioWith(env, *r.Fire)
		}
		return f.Scenario(env)
	}
	if r.Override != "" {
		return nil, fmt.Errorf("%w: race file %s not found", results.ErrCannotJudge, r.Override)
	}
	return nil, fmt.Errorf("%w: race file %s not found (give --race-file)", results.ErrCannotJudge, rf.Path)
}
