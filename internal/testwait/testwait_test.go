package testwait

import (
	"sync"
	"testing"
	"time"
)

// TestRunStartsEveryCaseAtOnce: each case waits until all of them have
// started, which only cases running at once can do, and Run returns after
// the last has ended.
func TestRunStartsEveryCaseAtOnce(t *testing.T) {
	const n = 8 // more than -parallel's default slots on any CI runner here
	var started sync.WaitGroup
	started.Add(n)
	all := make(chan struct{})
	go func() { started.Wait(); close(all) }()
	var mu sync.Mutex
	ended := 0
	cases := make([]Case, n)
	for i := range cases {
		cases[i] = Case{Name: string(rune('a' + i)), Test: func(t *testing.T) {
			started.Done()
			select {
			case <-all:
			case <-time.After(10 * time.Second):
				t.Error("the other cases did not start within 10 s: they run one after another")
			}
			mu.Lock()
			ended++
			mu.Unlock()
		}}
	}
	SideBySide(t, cases...)
	if ended != n {
		t.Errorf("Run returned after %d of %d cases ended", ended, n)
	}
}
