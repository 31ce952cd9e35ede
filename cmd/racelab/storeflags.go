package main

import (
	"github.com/spf13/pflag"

	"github.com/racelab/racelab/scenarios"
	"github.com/racelab/racelab/scenarios/engine"
	"github.com/racelab/racelab/scenarios/racefile"
)

// storeFlags are a race file's ways to the store behind the API: --db,
// where the databases its sql: readbacks read are, and --allow-exec,
// whether its exec: readbacks may run their commands. Every command that
// plays a race file (run, load, verify, explain) registers them here.
type storeFlags struct {
	DB        []string
	AllowExec bool
}

func (s *storeFlags) register(f *pflag.FlagSet) {
	f.StringArrayVar(&s.DB, "db", nil, "a race file's database: NAME=URL for every target, TARGET.NAME=URL for one; URL sqlite:PATH,\n"+
		"postgres://… or mysql://… (read only; repeatable)")
	f.BoolVar(&s.AllowExec, "allow-exec", false, "let a race file's exec: readbacks run their commands on this machine")
}

// options are the flags for a race file played on targets (-t's values).
func (s *storeFlags) options(targets []string) racefile.Options {
	return racefile.Options{Databases: s.DB, AllowExec: s.AllowExec, Targets: targets}
}

// lookup finds the scenario a command fires at targets, a race file's
// secrets shown when show is set (--show-secrets).
func (s *storeFlags) lookup(name string, targets []string, show bool) (*engine.Scenario, error) {
	o := s.options(targets)
	o.ShowSecrets = show
	return scenarios.LookupWith(name, o)
}
