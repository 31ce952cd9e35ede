// Package loadavg reads the machine's load average, which the benchmarks
// print beside their figures: a ratio measured while other work held the
// cores says less than one measured on a quiet machine.
package loadavg

import (
	"os"
	"strings"
)

// One is the one-minute load average, or "?" where the system gives none.
func One() string {
	if f := figures(); f != nil {
		return f[0]
	}
	return "?"
}

// Three is the one-, five- and fifteen-minute load averages apart by
// spaces, or "?" where the system gives none.
func Three() string {
	if f := figures(); f != nil {
		return strings.Join(f, " ")
	}
	return "?"
}

// figures is /proc/loadavg's first three fields, nil without them.
func figures() []string {
	b, err := os.ReadFile("/proc/loadavg")
	if f := strings.Fields(string(b)); err == nil && len(f) >= 3 {
		return f[:3]
	}
	return nil
}
