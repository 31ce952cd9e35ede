package faults

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/racelab/racelab/targets/clock"
)

// A manual clock: Sleep advances it.
type manual struct{ now time.Time }

func (m *manual) Now() time.Time { return m.now }
func (m *manual) Sleep(_ context.Context, d time.Duration) error {
	m.now = m.now.Add(d)
	return nil
}

var _ Clock = clock.Real{}

func TestNoFaultsInjectsNothing(t *testing.T) {
	if in := New(Config{Seed: 3}, &manual{}); in != nil {
		t.Fatalf("New without faults = %v, want nil", in)
	}
	var in *Injector
	in.StartTrial()
	if err := in.Before(context.Background(), "get"); err != nil {
		t.Errorf("nil injector: %v", err)
	}
}

// The outage window is measured from the start of each trial.
func TestOutageWindow(t *testing.T) {
	c := &manual{now: time.Date(2026, 3, 14, 9, 0, 0, 0, time.UTC)}
	in := New(Config{Outage: Window{2 * time.Minute, 5 * time.Minute}}, c)
	for _, trial := range []time.Duration{0, time.Hour} {
		c.now = c.now.Add(trial)
		in.StartTrial()
		start := c.now
		for _, tt := range []struct {
			at   time.Duration
			down bool
		}{{0, false}, {2*time.Minute - 1, false}, {2 * time.Minute, true}, {4 * time.Minute, true}, {5 * time.Minute, false}} {
			c.now = start.Add(tt.at)
			err := in.Before(context.Background(), "get")
			if down := errors.Is(err, ErrOutage); down != tt.down {
				t.Errorf("trial at +%v, %v in: err %v, want down %v", trial, tt.at, err, tt.down)
			}
		}
	}
}

// The error rate is seeded: the same seed fails the same operations, and
// about the asked share of them. Spikes add their latency.
func TestFailAndSpikeAreSeeded(t *testing.T) {
	run := func(seed int64) ([]bool, time.Duration) {
		c := &manual{}
		in := New(Config{Fail: 0.2, Spike: 0.1, SpikeLatency: time.Second, Seed: seed}, c)
		out := make([]bool, 2000)
		for i := range out {
			out[i] = errors.Is(in.Before(context.Background(), "put"), ErrInjected)
		}
		return out, c.now.Sub(time.Time{})
	}
	a, waitedA := run(7)
	b, waitedB := run(7)
	c, _ := run(8)
	failed := 0
	for i := range a {
		if a[i] != b[i] {
			t.Fatalf("seed 7 differs at operation %d", i)
		}
		if a[i] {
			failed++
		}
	}
	if waitedA != waitedB {
		t.Errorf("seed 7 spiked %v and %v", waitedA, waitedB)
	}
	if equal := func() bool {
		for i := range a {
			if a[i] != c[i] {
				return false
			}
		}
		return true
	}(); equal {
		t.Error("seeds 7 and 8 failed the same operations")
	}
	if failed < 300 || failed > 500 {
		t.Errorf("fail=0.2: %d of 2000 failed, want about 400", failed)
	}
	if spikes := waitedA / time.Second; spikes < 140 || spikes > 260 {
		t.Errorf("spike=0.1: %d spikes in 2000, want about 200", spikes)
	}
}

func TestParseWindow(t *testing.T) {
	if w, err := ParseWindow("2m-5m"); err != nil || w != (Window{2 * time.Minute, 5 * time.Minute}) {
		t.Errorf("ParseWindow(2m-5m) = %v, %v", w, err)
	}
	for _, bad := range []string{"2m", "5m-2m", "x-5m", "2m-2m", "-1s-5s"} {
		if _, err := ParseWindow(bad); err == nil {
			t.Errorf("ParseWindow(%q) accepted", bad)
		}
	}
}
