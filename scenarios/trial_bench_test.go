package scenarios

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/racelab/racelab/internal/loadavg"
	"github.com/racelab/racelab/scenarios/engine"
)

// benchChunk is how many trials each side runs before the other takes its
// turn: the two sides alternate in small chunks so that a neighbour's load
// on a shared machine falls on both alike and the ratio stays honest.
const benchChunk = 200

// bareTrial is the floor a virtual trial is measured against: n goroutines
// parked on one barrier, each reading then writing a counter under a
// mutex, and the counter read back. It is what a trial must do at the very
// least, with no store, no clock and no history.
func bareTrial(n int) int64 {
	var (
		mu      sync.Mutex
		count   int64
		wg      sync.WaitGroup
		barrier = make(chan struct{})
	)
	wg.Add(n)
	for range n {
		go func() {
			defer wg.Done()
			<-barrier
			mu.Lock()
			v := count
			count = v + 1
			mu.Unlock()
		}()
	}
	close(barrier)
	wg.Wait()
	mu.Lock()
	defer mu.Unlock()
	return count
}

// BenchmarkTrialRatio times a virtual ten-hits-one-view trial of 10
// requests, history check on, against a bare barrier + mutex trial of 10
// goroutines, in the same run, and reports the ratio (issue 24, part 4:
// within 5× on kv, 10× on actor). One op is one trial of each.
func BenchmarkTrialRatio(b *testing.B) {
	sc, err := Lookup("ten-hits-one-view")
	if err != nil {
		b.Fatal(err)
	}
	for _, target := range []struct {
		name string
		goal float64 // the CPU ratio issue 24 asks for at most
	}{{"kv", 5}, {"actor", 10}} {
		b.Run(target.name, func(b *testing.B) {
			var real, bare, realCPU, bareCPU time.Duration
			b.ResetTimer()
			for done := 0; done < b.N; {
				chunk := min(benchChunk, b.N-done)
				start, cpu := time.Now(), cpuTime()
				for range chunk {
					if got := bareTrial(10); got != 10 {
						b.Fatalf("bare trial counted %d, want 10", got)
					}
				}
				bare += time.Since(start)
				bareCPU += cpuTime() - cpu
				start, cpu = time.Now(), cpuTime()
				res, err := engine.Run(context.Background(), engine.Plan{Scenario: sc, Targets: []string{target.name}, Requests: 10, Trials: chunk, Seed: int64(done)})
				real += time.Since(start)
				realCPU += cpuTime() - cpu
				if err != nil {
					b.Fatal(err)
				}
				if tr := res.Targets[0]; tr.Error != "" || tr.Summary().Trials != chunk {
					b.Fatalf("%s: %d of %d trials, error %q", target.name, tr.Summary().Trials, chunk, tr.Error)
				}
				done += chunk
			}
			b.ReportMetric(float64(real)/1e3/float64(b.N), "µs/trial")
			b.ReportMetric(float64(bare)/1e3/float64(b.N), "bare-µs/trial")
			b.ReportMetric(float64(real)/float64(bare), "ratio")
			if bareCPU <= 0 {
				return
			}
			// Wall time counts the waits for a CPU that other work holds,
			// and a trial with many hand-offs waits more often than a bare
			// one: CPU time says what racelab itself spends, and is what
			// the goal is judged on.
			cpuRatio := float64(realCPU) / float64(bareCPU)
			b.ReportMetric(float64(realCPU)/1e3/float64(b.N), "cpu-µs/trial")
			b.ReportMetric(float64(bareCPU)/1e3/float64(b.N), "bare-cpu-µs/trial")
			b.ReportMetric(cpuRatio, "cpu-ratio")
			if b.N > 1 { // not the probe run of one trial
				verdict := "met"
				if cpuRatio > target.goal {
					verdict = "missed"
				}
				b.Logf("%s: a trial costs %.1f× a bare one in CPU time (goal %g×: %s), %.1f× in wall time; load average %s",
					target.name, cpuRatio, target.goal, verdict, float64(real)/float64(bare), loadavg.One())
			}
		})
	}
}
