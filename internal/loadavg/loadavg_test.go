package loadavg

import (
	"os"
	"strconv"
	"strings"
	"testing"
)

// TestFigures: on a system with /proc/loadavg the figures are its own,
// numbers; without it each reads "?".
func TestFigures(t *testing.T) {
	if _, err := os.Stat("/proc/loadavg"); err != nil {
		if One() != "?" || Three() != "?" {
			t.Errorf("no /proc/loadavg: One %q, Three %q; want ?", One(), Three())
		}
		return
	}
	three := strings.Fields(Three())
	if len(three) != 3 {
		t.Fatalf("Three = %q, want three figures", Three())
	}
	for _, f := range append(three, One()) {
		if v, err := strconv.ParseFloat(f, 64); err != nil || v < 0 {
			t.Errorf("figure %q is not a load average", f)
		}
	}
}
