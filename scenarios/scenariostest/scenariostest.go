// Package scenariostest looks racelab's stories up for the tests of the
// packages that play them (the report, the stores over HTTP, the load, the
// classroom): a story a test names is there, or the test fails at once.
package scenariostest

import (
	"testing"

	"github.com/racelab/racelab/scenarios"
	"github.com/racelab/racelab/scenarios/engine"
)

// Lookup is scenarios.Lookup for a test: the story of that name, or of
// that race file; a name that finds none fails tb.
func Lookup(tb testing.TB, name string) *engine.Scenario {
	tb.Helper()
	sc, err := scenarios.Lookup(name)
	if err != nil {
		tb.Fatal(err)
	}
	return sc
}
