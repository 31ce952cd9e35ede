package racefile_test

import (
	"context"
	"testing"

	"github.com/racelab/racelab/internal/testwait"
	"github.com/racelab/racelab/scenarios/engine"
	"github.com/racelab/racelab/scenarios/racefile"
	"github.com/racelab/racelab/scenarios/results"
)

// load reads a race file of testdata as a story.
func load(t testing.TB, name string) *engine.Scenario {
	t.Helper()
	f, err := racefile.Load(context.Background(), "testdata/"+name)
	if err != nil {
		t.Fatal(err)
	}
	sc, err := f.Scenario(nil)
	if err != nil {
		t.Fatal(err)
	}
	return sc
}

// TestNaiveBreaksFixedHolds plays each race of testdata on a naive and a
// fixed service, over real sockets, 20 trials each: the naive one must
// break in every trial, the fixed one hold in every trial, with every
// trial conclusive.
func TestNaiveBreaksFixedHolds(t *testing.T) {
	const trials = 20
	// The services sleep inside their race windows: the cases wait side
	// by side.
	var cases []testwait.Case
	for _, file := range []string{"coupon.race.yaml", "balance.race.yaml", "signup.race.yaml", "idempotency.race.yaml", "transfer.race.yaml"} {
		for _, h2c := range []bool{false, true} {
			name := file + "/h1"
			if h2c {
				name = file + "/h2c"
			}
			cases = append(cases, testwait.Case{Name: name, Test: func(t *testing.T) {
				sc := load(t, file)
				naive, fixed := newService(t, true, h2c), newService(t, false, h2c)
				res := naiveAndFixed(t, sc, trials, base(naive), base(fixed))
				if fs := res.Shortfalls(); len(fs) > 0 {
					t.Errorf("shortfalls: %+v", fs)
				}
				n, f := &res.Targets[0], &res.Targets[1]
				for _, tr := range []*results.TargetResult{n, f} {
					if tr.Error != "" {
						t.Fatalf("%s: %s", tr.Label(), tr.Error)
					}
				}
				ns, fs := n.Summary(), f.Summary()
				// A naive service loses the race when the burst's requests
				// meet in its window, which a machine loaded by the whole
				// suite does not promise in every trial: most trials must
				// show it (the fixed one must hold in all of them).
				if ns.Broken < trials*3/4 {
					t.Errorf("naive broke in %d of %d trials; want at least %d (first error %q)", ns.Broken, ns.Trials, trials*3/4, ns.FirstError)
				}
				// A trial released too far apart proves nothing, and a
				// loaded machine may spread one; any other inconclusive
				// trial (an error) is a fault of the player.
				if fs.Broken != 0 || fs.Inconclusive != fs.NotSimultaneous || f.Verdict() != "holds" {
					t.Errorf("fixed: %d broken, %d inconclusive (%d not simultaneous), verdict %s; want 0, none but spread ones, holds (first why %q, first error %q)",
						fs.Broken, fs.Inconclusive, fs.NotSimultaneous, f.Verdict(), fs.FirstWhy, fs.FirstError)
				}
				if got := n.Trials[0].Readback; got == nil || len(got.Answers) != sc.DefaultRequests || len(got.Bodies) == 0 {
					t.Errorf("naive's first trial read back %+v; want %d answers and the bodies", got, sc.DefaultRequests)
				}
				if h2c {
					if unsync := ns.Unsynchronized + fs.Unsynchronized; unsync != 0 {
						t.Errorf("%d trials unsynchronized over h2c", unsync)
					}
				}
			}})
		}
	}
	testwait.SideBySide(t, cases...)
}

// naiveAndFixed runs sc for trials trials against the naive service,
// expected to break, and the fixed one.
func naiveAndFixed(t *testing.T, sc *engine.Scenario, trials int, naive, fixed string) *results.Result {
	t.Helper()
	res, err := engine.Run(context.Background(), engine.Plan{
		Scenario: sc, Trials: trials,
		Targets:  []string{"naive=" + naive, "fixed=" + fixed},
		ExpectOf: map[string]engine.Override{"naive": engine.OverrideBreaks},
	})
	if err != nil {
		t.Fatal(err)
	}
	return res
}
