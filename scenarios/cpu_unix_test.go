//go:build unix

package scenarios

import (
	"syscall"
	"time"
)

// cpuTime is the CPU time this process has used so far, user and system:
// on a machine shared with other work, the part of a benchmark's cost that
// the neighbours' load does not inflate.
func cpuTime() time.Duration {
	var u syscall.Rusage
	if syscall.Getrusage(syscall.RUSAGE_SELF, &u) != nil {
		return 0
	}
	return time.Duration(u.Utime.Nano() + u.Stime.Nano())
}
