package sqlrace

import (
	"testing"
	"time"
)

// TestBackoffDoublesToItsCap: retry n waits between half and all of
// 1 ms << n, and from the sixth retry on no more than 64 ms.
func TestBackoffDoublesToItsCap(t *testing.T) {
	for n, full := range map[int]time.Duration{0: time.Millisecond, 5: 32 * time.Millisecond, 6: 64 * time.Millisecond, 7: 64 * time.Millisecond, 100: 64 * time.Millisecond} {
		for range 200 {
			if d := backoff(n); d < full/2 || d > full {
				t.Fatalf("backoff(%d) = %v; want %v to %v", n, d, full/2, full)
			}
		}
	}
}
