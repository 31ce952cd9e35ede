package clock

import "time"

// Every calls f every d, never two at once, until stop is closed; it
// returns then, after the call in progress, if any. A call that outlasts
// d delays the next one instead of queueing several (time.Ticker drops
// the ticks a slow receiver misses).
func Every(d time.Duration, stop <-chan struct{}, f func()) {
	t := time.NewTicker(d)
	defer t.Stop()
	for {
		select {
		case <-stop:
			return
		case <-t.C:
			f()
		}
	}
}
