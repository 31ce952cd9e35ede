package story

import (
	"testing"
	"time"
)

// A window's first instant is its own, its last nanosecond the one
// before: Number at the boundary, one nanosecond either side.
func TestWindowNumberAtABoundary(t *testing.T) {
	w := Window{Limit: 5, Length: time.Minute}
	edge := time.Unix(120, 0) // the start of window 2
	for at, want := range map[time.Time]int64{edge.Add(-time.Nanosecond): 1, edge: 2, edge.Add(time.Nanosecond): 2, time.Unix(0, 0): 0} {
		if got := w.Number(at); got != want {
			t.Errorf("Number(%s) = %d; want %d", at.UTC().Format(time.RFC3339Nano), got, want)
		}
	}
}
