package scenarios

import (
	"context"
	"fmt"
	"os"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/racelab/racelab/scenarios/engine"

	"github.com/racelab/racelab/scenarios/results"

	"github.com/racelab/racelab/targets"
	"github.com/racelab/racelab/targets/storetest"
)

// checkStalePlan judges tr, a stale-plan result of trials trials: a
// strategy that decides the plan where it counts grants nothing after the
// cancel; a naive one, whose server caches the plan, gives originals away
// in most trials but within the accepted bound, and counts every one.
// Either must answer every request: an error proves nothing.
func checkStalePlan(t *testing.T, tr *results.TargetResult, trials int) {
	t.Helper()
	if tr.Error != "" || len(tr.Trials) != trials {
		t.Fatalf("%s: error %q, %d trials; want none and %d", tr.Target, tr.Error, len(tr.Trials), trials)
	}
	s := tr.Summary()
	if s.Errors.Max > 0 {
		t.Errorf("%s: %d requests failed (first: %s); want every one answered", tr.Target, s.Errors.Sum, s.FirstError)
	}
	exposures := s.Figures[exposureFigure]
	worst := time.Duration(exposures.Max())
	if strings.Contains(tr.Target, ":naive") {
		if s.Broken < trials*8/10 || s.SoftBroken != 0 || s.Lost != 0 || worst > DefaultPlanBound || worst == 0 {
			t.Errorf("%s: broken %d of %d, soft %d, lost %d, worst exposure %s; want most broken, all within %s, nothing lost",
				tr.Target, s.Broken, trials, s.SoftBroken, s.Lost, worst, DefaultPlanBound)
		}
		return
	}
	if s.Broken != 0 || s.SoftBroken != 0 || s.Over != 0 || len(exposures) != 0 || tr.Verdict() != "holds" {
		t.Errorf("%s: verdict %s, broken %d, soft %d, given away %d; want nothing after the cancel",
			tr.Target, tr.Verdict(), s.Broken, s.SoftBroken, s.Over)
	}
}

// outcomes is each trial's originals granted and exposure, to compare
// two runs of one seed: a real store keeps what a run wrote, so its run
// id (and with it the bytes) differ, but not what happened.
func outcomes(tr *results.TargetResult) string {
	var b strings.Builder
	for _, trial := range tr.Trials {
		fmt.Fprintf(&b, "%d/%d/%s ", trial.Allowed, trial.Counted, exposureOf(&trial))
	}
	return b.String()
}

// SQLite plays stale-plan with no server, in virtual time: the atomic
// upsert grants nothing after the cancel; the naive strategy's cached
// plan gives originals away within the cache's 45 s. The same seed plays
// the same trials.
func TestStalePlanSQLite(t *testing.T) {
	const trials = 30
	sc := vary(t, "stale-plan", results.Settings{})
	var first []string
	for run := range 2 {
		res := runStory(t, sc, trials, 9, "sqlite", "sqlite:naive")
		var got []string
		for i := range res.Targets {
			tr := &res.Targets[i]
			if tr.Clock != results.ClockVirtual {
				t.Errorf("%s ran on the %s clock; want virtual", tr.Target, tr.Clock)
			}
			checkStalePlan(t, tr, trials)
			got = append(got, outcomes(tr))
		}
		if run == 1 && !slices.Equal(first, got) {
			t.Errorf("two runs of seed 9 differ:\n%q\n%q", first, got)
		}
		first = got
	}
}

// TestStalePlanServers plays stale-plan on every Redis and PostgreSQL
// strategy, in virtual time as `racelab run` does. Without the servers
// (`make services`) it skips, except under CI=true, where it fails.
func TestStalePlanServers(t *testing.T) {
	const trials = 20
	servers := map[string][]string{
		"redis":    {"redis", "redis:naive", "redis:watch"},
		"postgres": {"postgres", "postgres:naive", "postgres:for-update", "postgres:serializable"},
	}
	opts := []targets.Option{targets.WithRedisURL(os.Getenv("RACELAB_REDIS_URL")), targets.WithPostgresURL(os.Getenv("RACELAB_POSTGRES_URL"))}
	sc := vary(t, "stale-plan", results.Settings{})
	for server, names := range servers {
		t.Run(server, func(t *testing.T) {
			probe, err := targets.Open(context.Background(), server, opts...)
			if err != nil {
				storetest.Unreachable(t, "RACELAB_"+strings.ToUpper(server)+"_URL", err)
			}
			probe.Close()
			res, err := engine.Run(context.Background(), engine.Plan{Scenario: sc, Targets: names, Trials: trials, Seed: 9, Options: opts})
			if err != nil {
				t.Fatal(err)
			}
			for i := range res.Targets {
				checkStalePlan(t, &res.Targets[i], trials)
			}
		})
	}
}
