package main

import (
	"os"

	"github.com/spf13/pflag"

	"github.com/racelab/racelab/targets"
)

// serverFlags are the servers of the real-store targets as flags,
// --redis-url and --postgres-url, each defaulting to its environment
// variable. Every command that opens targets (run, serve) binds them to two
// strings of its options through here, so that their names, environment
// variables and help are written once.
type serverFlags struct {
	RedisURL    *string
	PostgresURL *string
}

func (o *runOptions) servers() serverFlags   { return serverFlags{&o.RedisURL, &o.PostgresURL} }
func (o *serveOptions) servers() serverFlags { return serverFlags{&o.RedisURL, &o.PostgresURL} }

// register defines the flags on f. What names, in the command's own words,
// what the servers are for: "targets" for run, "stores" for serve.
func (s serverFlags) register(f *pflag.FlagSet, what string) {
	f.StringVar(s.RedisURL, "redis-url", os.Getenv("RACELAB_REDIS_URL"),
		"Redis server for redis "+what+" (env RACELAB_REDIS_URL; default "+targets.DefaultRedisURL+")")
	f.StringVar(s.PostgresURL, "postgres-url", os.Getenv("RACELAB_POSTGRES_URL"),
		"PostgreSQL server for postgres "+what+" (env RACELAB_POSTGRES_URL)")
}

// options point the targets opened with them at the servers.
func (s serverFlags) options() []targets.Option {
	return []targets.Option{targets.WithRedisURL(*s.RedisURL), targets.WithPostgresURL(*s.PostgresURL)}
}
