package main

import (
	"fmt"
	"os"

	"github.com/spf13/pflag"

	"github.com/racelab/racelab/targets"
)

// serverFlags are the servers of the real-store targets as flags: one for
// each server a catalog entry declares (targets.Server: --redis-url,
// --postgres-url), defaulting to its environment variable. Every command
// that opens targets registers them through here, so that a new
// server-backed store brings its flag with its catalog entry.
type serverFlags struct {
	urls map[string]*string
}

// register defines the flags on f. What names, in the command's own words,
// what the servers are for: "targets" for run, "stores" for serve.
func (s *serverFlags) register(f *pflag.FlagSet, cat *targets.Catalog, what string) {
	s.urls = map[string]*string{}
	for _, srv := range cat.Servers() {
		u := new(string)
		s.urls[srv.Setting] = u
		f.StringVar(u, srv.Setting, os.Getenv(srv.Env), fmt.Sprintf("%s %s (env %s; default %s)", srv.What, what, srv.Env, srv.Default))
	}
}

// options point the targets opened with them at the servers.
func (s *serverFlags) options() []targets.Option {
	var out []targets.Option
	for setting, u := range s.urls {
		out = append(out, targets.WithServerURL(setting, *u))
	}
	return out
}
