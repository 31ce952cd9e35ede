package testwait

import (
	"sync"
	"testing"
	"time"
)

// Case is one subtest: its name and its body.
type Case struct {
	Name string
	Test func(t *testing.T)
}

// SideBySide runs every case as a subtest of t, all at once, and returns when
// each has ended. A subtest that calls t.Parallel waits for one of
// -parallel's slots (GOMAXPROCS by default, 2 on CI), which holds tests
// that sleep two at a time though the cores are idle. These start from
// goroutines of their own instead, as testing.T.Run allows, and take no
// slot. For subtests that sleep, that is: ones that compute want the
// slots, or they slow each other down.
func SideBySide(t *testing.T, cases ...Case) {
	t.Helper()
	var wg sync.WaitGroup
	for _, c := range cases {
		wg.Go(func() { t.Run(c.Name, c.Test) })
	}
	wg.Wait()
}

// Eventually waits until cond holds, polling it every millisecond, and
// fails t naming what when 20 seconds pass first: a bound far past any
// wait a passing test makes, so that a test that would hang fails instead.
func Eventually(t testing.TB, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(20 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("gave up waiting for %s after 20s", what)
		}
		time.Sleep(time.Millisecond)
	}
}
