package httpapi

import (
	"runtime/debug"
	"testing"
	"time"

	"github.com/racelab/racelab/targets/httpapi/httpapitest"
)

// gcPercent reads GOGC as the runtime has it now.
func gcPercent() int {
	p := debug.SetGCPercent(100)
	debug.SetGCPercent(p)
	return p
}

// TestHoldGC: the collector is off while any burst holds it and back as
// it was once the last lets go, or once a hold's bound has passed. It is
// not parallel: GOGC is the whole process's.
func TestHoldGC(t *testing.T) {
	was := debug.SetGCPercent(150)
	defer debug.SetGCPercent(was)
	limit := debug.SetMemoryLimit(-1)
	first := holdGC(time.Minute)
	second := holdGC(time.Minute)
	if p := gcPercent(); p != -1 {
		t.Fatalf("GOGC %d under two holds, want -1 (off)", p)
	}
	if l := debug.SetMemoryLimit(-1); l >= limit {
		t.Errorf("memory limit %d under a hold, want one below %d (the heap's headroom)", l, limit)
	}
	first()
	first() // letting go twice counts once
	if p := gcPercent(); p != -1 {
		t.Errorf("GOGC %d with one hold left, want -1 (off)", p)
	}
	second()
	if p, l := gcPercent(), debug.SetMemoryLimit(-1); p != 150 || l != limit {
		t.Errorf("GOGC %d, memory limit %d after the last hold, want 150 and %d as before", p, l, limit)
	}
	expiring := holdGC(10 * time.Millisecond)
	defer expiring()
	httpapitest.Eventually(t, "the hold's bound", func() bool { return gcPercent() == 150 })
}
