package load

import (
	"math/rand/v2"
	"testing"
	"time"

	"github.com/racelab/racelab/scenarios/results"
)

// TestMeterMemoryIsFlat: the meter keeps one histogram for the load and
// one for the current second, and one small Second per second gone: a
// million answers take no more room than a thousand.
func TestMeterMemoryIsFlat(t *testing.T) {
	start := time.Unix(0, 0)
	m := newMeter(start)
	size := m.all.ByteSize() + m.sec.ByteSize()
	for i := range 1_000_000 {
		at := start.Add(time.Duration(i) * 3 * time.Microsecond) // three seconds in all
		m.Add(results.LoadSample{Latency: time.Duration(i%5000) * time.Microsecond}, at, nil)
	}
	if got := m.all.ByteSize() + m.sec.ByteSize(); got != size {
		t.Errorf("histograms grew from %d to %d bytes", size, got)
	}
	lat, _, buckets, series, _ := m.finish(start.Add(3 * time.Second))
	if len(series) != 3 || lat.Count != 1_000_000 || len(buckets) > 40 {
		t.Errorf("%d seconds, %d answers, %d buckets; want 3, 1000000, a few", len(series), lat.Count, len(buckets))
	}
	if p50 := lat.P50; p50 < 2400*time.Microsecond || p50 > 2600*time.Microsecond {
		t.Errorf("p50 %s of a uniform 0-5ms, want 2.5ms", p50)
	}
}

// TestZipfKeysAreHot: with zipf:2 the first key takes most requests.
func TestZipfKeysAreHot(t *testing.T) {
	pk := newPicker(1, 0, 100, results.KeyDist{Zipf: 2})
	hits := make([]int, 100)
	for range 10000 {
		hits[pk.next()]++
	}
	if hits[0] < 5000 || hits[99] > 100 {
		t.Errorf("zipf:2 over 100 keys: first %d, last %d of 10000", hits[0], hits[99])
	}
}

// TestMeterSecondsHaveTheirOwnPercentiles: each second's p50 and p99 are
// that second's answers' alone, and an answer at a second's first instant
// belongs to that second. Read off the whole load's histogram, the fast
// second would show the slow one's p99.
func TestMeterSecondsHaveTheirOwnPercentiles(t *testing.T) {
	start := time.Unix(0, 0)
	m := newMeter(start)
	for i := range 100 {
		m.Add(results.LoadSample{Latency: time.Millisecond}, start.Add(time.Duration(i)*time.Millisecond), nil)
	}
	for i := range 100 {
		m.Add(results.LoadSample{Latency: 100 * time.Millisecond}, start.Add(time.Second+time.Duration(i)*time.Millisecond), nil)
	}
	_, _, _, series, _ := m.finish(start.Add(2 * time.Second))
	if len(series) != 2 || series[0].Answered != 100 || series[1].Answered != 100 {
		t.Fatalf("series %+v; want two seconds of 100 answers", series)
	}
	near := func(d, want time.Duration) bool { return d >= want*95/100 && d <= want*105/100 }
	if s := series[0]; !near(s.P50, time.Millisecond) || !near(s.P99, time.Millisecond) || !near(s.Max, time.Millisecond) {
		t.Errorf("second 0, every answer 1ms: p50 %s, p99 %s, max %s", s.P50, s.P99, s.Max)
	}
	if s := series[1]; !near(s.P50, 100*time.Millisecond) || !near(s.P99, 100*time.Millisecond) {
		t.Errorf("second 1, every answer 100ms: p50 %s, p99 %s", s.P50, s.P99)
	}
}

// TestMeterSamplesSpreadOverTheLoad: past its size, the sample keeps
// requests from the whole load, not its first ones, in the order due.
func TestMeterSamplesSpreadOverTheLoad(t *testing.T) {
	m := newMeter(time.Unix(0, 0))
	m.max, m.rng = 100, rand.New(rand.NewPCG(1, 2))
	for i := range 10_000 {
		m.Add(results.LoadSample{At: time.Duration(i) * time.Millisecond, Key: i}, time.Unix(0, 0), nil)
	}
	got := m.sampled()
	if len(got) != 100 || m.seen != 10_000 {
		t.Fatalf("%d kept of %d seen; want 100 of 10000", len(got), m.seen)
	}
	late := 0
	for i, s := range got {
		if i > 0 && s.At < got[i-1].At {
			t.Fatalf("sample %d due at %s before %s", i, s.At, got[i-1].At)
		}
		if s.Key >= 5000 {
			late++
		}
	}
	if late < 30 || late > 70 {
		t.Errorf("%d of 100 kept from the load's second half; want about half", late)
	}
}
