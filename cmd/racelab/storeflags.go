package main

import (
	"github.com/spf13/pflag"

	"github.com/racelab/racelab/scenarios"
	"github.com/racelab/racelab/scenarios/engine"
	"github.com/racelab/racelab/scenarios/racefile"
)

// storeFlags are how a race file is played: --db, where the databases its
// sql: readbacks read are; --allow-exec, whether its exec: readbacks may
// run their commands; --show-secrets, whether its secrets show. Every
// command that plays a race file (run, load, verify, explain) registers
// them here, so each takes them all with one wording.
type storeFlags struct {
	DB        []string
	AllowExec bool
	// ShowSecrets shows a race file's secrets (Authorization, Cookie,
	// Set-Cookie and Proxy-Authorization values, captures and headers
	// marked secret: true), which show as … in every output and error
	// unless it is given.
	ShowSecrets bool
}

func (s *storeFlags) register(f *pflag.FlagSet) {
	f.StringArrayVar(&s.DB, "db", nil, "a race file's database: NAME=URL for every target, TARGET.NAME=URL for one; URL sqlite:PATH,\n"+
		"postgres://… or mysql://… (read only; repeatable)")
	f.BoolVar(&s.AllowExec, "allow-exec", false, "let a race file's exec: readbacks run their commands on this machine")
	f.BoolVar(&s.ShowSecrets, "show-secrets", false, "show a race file's secrets (credentials, sessions, values marked secret: true) instead of … in outputs and errors")
}

// options are the flags for a race file played on targets (-t's values).
func (s *storeFlags) options(targets []string) racefile.Options {
	return racefile.Options{Databases: s.DB, AllowExec: s.AllowExec, ShowSecrets: s.ShowSecrets, Targets: targets}
}

// lookup finds the scenario a command fires at targets.
func (s *storeFlags) lookup(name string, targets []string) (*engine.Scenario, error) {
	return scenarios.LookupWith(name, s.options(targets))
}
