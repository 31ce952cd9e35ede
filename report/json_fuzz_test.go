package report

import (
	"bytes"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/racelab/racelab/scenarios/results"
)

// FuzzReadJSON feeds the saved-result reader anything: it must never
// panic, and whatever it accepts must render in every format and read
// back as accepted again (Check recomputes nothing it let through
// differently the second time).
func FuzzReadJSON(f *testing.F) {
	for _, fx := range fixtures {
		var b bytes.Buffer
		if err := RenderAll(&b, nil, JSON, Options{}); err == nil {
			f.Fatal("RenderAll of nothing succeeded")
		}
		if err := Render(&b, fx.result(), JSON, Options{}); err != nil {
			f.Fatal(err)
		}
		// Large seeds (the evidence fixture's 470 trials) make every
		// mutation slow; the small ones reach the same code.
		if b.Len() < 64<<10 {
			f.Add(b.Bytes())
		}
	}
	seeds, _ := filepath.Glob(filepath.Join("testdata", "*.json.golden"))
	for _, s := range seeds {
		if data, err := os.ReadFile(s); err == nil {
			f.Add(data)
		}
	}
	f.Add([]byte(`{"schema": "racelab/result/v1"}`))
	f.Add([]byte(`{"schema": "racelab/result/v1", "scenario": "ten-hits-one-view", "requests": 1, "targets": [{"target": "x", "expect": "holds", "strict": true, "trials": [{"index": 0, "requests": [{"index": 0, "outcome": "allowed", "value": 1}], "allowed": 1, "counted": 1}]}]}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		if len(data) > 32<<10 {
			return // what a small input cannot reach, a large one rarely does
		}
		done := make(chan struct{})
		defer close(done)
		go func() {
			select {
			case <-done:
			case <-time.After(20 * time.Second):
				panic("results.ReadJSON and render took more than 20s")
			}
		}()
		// A short history recheck: mutated histories can be slow to
		// settle, and one that runs out only reads as unknown.
		rs, err := results.ReadJSON(bytes.NewReader(data), withLimits(verify, 10*time.Millisecond, 0))
		if err != nil {
			return
		}
		for _, format := range formats {
			if err := RenderAll(&bytes.Buffer{}, rs, format, Options{}); err != nil {
				t.Fatalf("an accepted result does not render as %s: %v", format, err)
			}
		}
		var b bytes.Buffer
		if err := RenderAll(&b, rs, JSON, Options{}); err != nil {
			t.Fatal(err)
		}
		if _, err := results.ReadJSON(&b, withLimits(verify, 10*time.Millisecond, 0)); err != nil {
			t.Fatalf("an accepted result, written again, is refused: %v", err)
		}
	})
}
