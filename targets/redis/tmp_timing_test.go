package redis

import (
	"context"
	"fmt"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"
)

func TestTmpTiming(t *testing.T) {
	s := openStore(t, Config{Strategy: StrategyNaive})
	ctx := t.Context()
	s.Prepare(ctx, 12)
	var mu sync.Mutex
	var t0 time.Time
	var reads []time.Duration
	s.betweenReadAndWrite = func(context.Context) {
		mu.Lock()
		reads = append(reads, time.Since(t0))
		mu.Unlock()
	}
	single := 0
	for round := range 40 {
		reads = nil
		item := freshKey(t, round)
		type r struct{ call, done time.Duration; won bool }
		start := make(chan struct{})
		out := make([]r, 10)
		var wg sync.WaitGroup
		for i := range 10 {
			wg.Go(func() {
				<-start
				c := time.Since(t0)
				won, _ := s.Checkout(ctx, item, "b")
				out[i] = r{c, time.Since(t0), won}
			})
		}
		time.Sleep(time.Millisecond)
		t0 = time.Now()
		close(start)
		wg.Wait()
		wins := 0
		var b strings.Builder
		sort.Slice(out, func(i, j int) bool { return out[i].call < out[j].call })
		for _, o := range out {
			if o.won { wins++ }
			fmt.Fprintf(&b, "[%v %v %v] ", o.call.Microseconds(), o.done.Microseconds(), o.won)
		}
		if wins == 1 { single++ }
		if round < 8 {
			t.Logf("wins %d reads(us) %v calls: %s", wins, reads, b.String())
		}
	}
	t.Logf("single winner rounds: %d/40", single)
}
