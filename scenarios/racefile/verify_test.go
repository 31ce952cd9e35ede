package racefile_test

import (
	"context"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/racelab/racelab/scenarios"
	"github.com/racelab/racelab/scenarios/engine"
	"github.com/racelab/racelab/scenarios/results"
	"github.com/racelab/racelab/scenarios/scenariostest"
)

// TestSavedResultIsJudgedAgain: a saved result of a race file checks
// against the file it ran with; a readback forged to hide the break, or a
// file changed since, is refused.
func TestSavedResultIsJudgedAgain(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "coupon.race.yaml")
	src, err := os.ReadFile("testdata/coupon.race.yaml")
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, src, 0o644); err != nil {
		t.Fatal(err)
	}
	sc := scenariostest.Lookup(t, path)
	naive, fixed := newService(t, true, false), newService(t, false, false)
	res, err := engine.Run(context.Background(), engine.Plan{Scenario: sc, Trials: 2, Targets: []string{"naive=" + base(naive), "fixed=" + base(fixed)},
		ExpectOf: map[string]engine.Override{"naive": engine.OverrideBreaks}})
	if err != nil {
		t.Fatal(err)
	}
	if res.Settings == nil || res.Settings.Race == nil || res.Settings.Race.Path != path {
		t.Fatalf("result names no race file: %+v", res.Settings)
	}
	saved, err := json.Marshal(res)
	if err != nil {
		t.Fatal(err)
	}
	reread := func() *results.Result {
		var r results.Result
		if err := json.Unmarshal(saved, &r); err != nil {
			t.Fatal(err)
		}
		return &r
	}
	if err := scenarios.Check(reread(), time.Second); err != nil {
		t.Fatalf("the result as saved: %v", err)
	}

	forged := reread()
	tr := &forged.Targets[0].Trials[0]
	if !tr.Broken {
		t.Fatal("the naive coupon service held; want it broken")
	}
	tr.Broken, tr.Why = false, ""
	if err := scenarios.Check(forged, time.Second); !errors.Is(err, engine.ErrInconsistent) || !strings.Contains(err.Error(), "broken") {
		t.Errorf("a break forged away: %v; want it refused at broken", err)
	}
	forged = reread()
	held := &forged.Targets[1].Trials[0]
	if held.Broken {
		t.Fatal("the fixed coupon service broke; want it held")
	}
	held.Readback.Bodies["account"] = json.RawMessage(`{"discounts": 2}`) // what the rule reads now says it broke
	if err := scenarios.Check(forged, time.Second); !errors.Is(err, engine.ErrInconsistent) || !strings.Contains(err.Error(), "targets[1].trials[0].broken") {
		t.Errorf("a readback that breaks the rule, saved as held: %v; want it refused at broken", err)
	}

	if err := os.WriteFile(path, append(src, "# changed\n"...), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := scenarios.Check(reread(), time.Second); err == nil || !strings.Contains(err.Error(), "changed since the run") {
		t.Errorf("file changed since: %v; want it refused", err)
	}
}
