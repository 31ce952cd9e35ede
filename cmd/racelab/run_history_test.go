package main

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/racelab/racelab/scenarios"
	"github.com/racelab/racelab/scenarios/engine"
	"github.com/racelab/racelab/scenarios/results"
)

// TestWriteHistory: --history-html is written by the command from the
// result, not by the engine; a result with no trial writes nothing, and a
// file that cannot be written is an error naming the flag.
func TestWriteHistory(t *testing.T) {
	sc, err := scenarios.Lookup("ten-hits-one-view")
	if err != nil {
		t.Fatal(err)
	}
	p := engine.Plan{Scenario: sc, Catalog: testCatalog, Targets: []string{"kv"}, Trials: 1, Seed: 1}
	res, err := engine.Run(context.Background(), p)
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()

	path := filepath.Join(dir, "h.html")
	if err := writeHistory(path, p, res); err != nil {
		t.Fatal(err)
	}
	if b, err := os.ReadFile(path); err != nil || !strings.Contains(string(b), "ten-hits-one-view on kv, trial 1") {
		t.Errorf("history page: %v, %d bytes; want kv's first trial drawn", err, len(b))
	}

	none := filepath.Join(dir, "none.html")
	empty := &results.Result{Scenario: sc.Name, Targets: []results.TargetResult{{Target: "kv", Error: "open kv: refused"}}}
	if err := writeHistory(none, p, empty); err != nil {
		t.Errorf("a result with no trial: %v; want nothing written and no error", err)
	}
	if _, err := os.Stat(none); !os.IsNotExist(err) {
		t.Errorf("a result with no trial wrote %s (%v)", none, err)
	}

	if err := writeHistory(dir, p, res); err == nil || !strings.HasPrefix(err.Error(), "--history-html "+dir+": write history: ") {
		t.Errorf("writing over a folder: %v; want an error naming --history-html", err)
	}
}
