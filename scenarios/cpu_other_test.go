//go:build !unix

package scenarios

import "time"

// cpuTime is unknown here: the CPU ratio then reads 0.
func cpuTime() time.Duration { return 0 }
