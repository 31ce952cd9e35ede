package sidebyside

import (
	"sync"
	"testing"
)

// Case is one subtest: its name and its body.
type Case struct {
	Name string
	Test func(t *testing.T)
}

// Run runs every case as a subtest of t, all at once, and returns when
// each has ended. A subtest that calls t.Parallel waits for one of
// -parallel's slots (GOMAXPROCS by default, 2 on CI), which holds tests
// that sleep two at a time though the cores are idle. These start from
// goroutines of their own instead, as testing.T.Run allows, and take no
// slot. For subtests that sleep, that is: ones that compute want the
// slots, or they slow each other down.
func Run(t *testing.T, cases ...Case) {
	t.Helper()
	var wg sync.WaitGroup
	for _, c := range cases {
		wg.Go(func() { t.Run(c.Name, c.Test) })
	}
	wg.Wait()
}
