package results

import "runtime/debug"

// readMemoryLimit is the heap the Go collector keeps report and verify
// to while they read saved documents: each input is read a document at a
// time and bounded (MaxResultBytes, MaxDocumentWeight),
// but with the collector's default pace a heap may grow to twice what it
// holds before it is collected, and a 22 MB result then peaked at 130 MB
// of memory. The limit is soft: past it the collector works harder, it
// never fails an allocation.
const readMemoryLimit = 64 << 20

// LimitReadMemory holds the process's heap near readMemoryLimit, unless
// GOMEMLIMIT set one already.
func LimitReadMemory() {
	if debug.SetMemoryLimit(-1) == 1<<63-1 { // math.MaxInt64: none set
		debug.SetMemoryLimit(readMemoryLimit)
	}
}
