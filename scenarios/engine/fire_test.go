package engine

import (
	"testing"
	"time"
)

// A trial that would run across UTC midnight waits for the new day: the
// daily quota starts afresh there, and a sixth download is rightly granted.
func TestUntilDayFits(t *testing.T) {
	if got := untilDayFits(time.Date(2026, 1, 1, 23, 59, 50, 0, time.UTC), time.Minute); got != 10*time.Second {
		t.Errorf("10s before midnight, a minute's trial waits %s, want 10s", got)
	}
	if got := untilDayFits(time.Date(2026, 1, 1, 12, 0, 0, 0, time.UTC), time.Minute); got != 0 {
		t.Errorf("at noon a minute's trial waits %s, want 0", got)
	}
}
