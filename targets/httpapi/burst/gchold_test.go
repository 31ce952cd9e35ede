package burst

import (
	"runtime/debug"
	"testing"
	"time"
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
	first := Hold(time.Minute)
	second := Hold(time.Minute)
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
	expiring := Hold(10 * time.Millisecond)
	defer expiring()
	for deadline := time.Now().Add(20 * time.Second); gcPercent() != 150; time.Sleep(time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatal("the hold's bound passed 20s ago and GOGC is still off")
		}
	}
}
