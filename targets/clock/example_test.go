package clock_test

import (
	"context"
	"fmt"
	"time"

	"github.com/racelab/racelab/targets/clock"
)

// Three participants released together, each waiting a different time: the
// virtual clock runs them in the order of their wake-ups, and a minute of
// waiting costs no wall time.
func ExampleVirtual_Run() {
	start := time.Date(2026, 8, 14, 12, 0, 0, 0, time.UTC)
	v := clock.NewVirtual(start)
	err := v.Run(context.Background(), 3, func(ctx context.Context, i int) {
		wait := []time.Duration{time.Minute, time.Second, 30 * time.Second}[i]
		if err := v.Sleep(ctx, wait); err != nil {
			fmt.Println(err)
			return
		}
		fmt.Printf("participant %d woke at +%v\n", i, v.Now().Sub(start))
	})
	fmt.Println("run:", err, "clock at", v.Now().Format(time.TimeOnly))
	// Output:
	// participant 1 woke at +1s
	// participant 2 woke at +30s
	// participant 0 woke at +1m0s
	// run: <nil> clock at 12:01:00
}

// A server started with Go takes requests through a clock-aware channel,
// a second each. The run ends when both requests are handed over; the
// server, still busy, resumes when the clock is moved on from outside, and
// the channel's close ends it.
func ExampleChan() {
	start := time.Date(2026, 8, 14, 12, 0, 0, 0, time.UTC)
	v := clock.NewVirtual(start)
	requests := clock.NewChan[string](v, 0)
	v.Go(func() {
		for {
			name, err := requests.Recv(context.Background())
			if err != nil {
				return
			}
			_ = v.Sleep(context.Background(), time.Second)
			fmt.Printf("served %s at +%v\n", name, v.Now().Sub(start))
		}
	})
	_ = v.Run(context.Background(), 2, func(ctx context.Context, i int) {
		_ = requests.Send(ctx, fmt.Sprintf("request %d", i))
	})
	fmt.Printf("run over at +%v\n", v.Now().Sub(start))
	requests.Close()
	_ = v.Sleep(context.Background(), time.Minute)
	// Output:
	// served request 0 at +1s
	// run over at +1s
	// served request 1 at +2s
}
