package load

import (
	"context"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/racelab/racelab/scenarios/pace"
	"github.com/racelab/racelab/scenarios/results"
)

// oneSlot loads a service that answers every request after delay with n
// arrivals at 100/s through a single request in flight, each with its
// timeout.
func oneSlot(t *testing.T, delay time.Duration, n int64, timeout time.Duration) (*results.LoadResult, results.LoadTarget) {
	t.Helper()
	p := hitsOverHTTP(t, serveActor(t, func(h http.Handler) http.HandlerFunc {
		return func(w http.ResponseWriter, r *http.Request) {
			time.Sleep(delay)
			h.ServeHTTP(w, r)
		}
	}))
	p.Schedule = &pace.Schedule{Start: 100, Spacing: pace.Even}
	p.Requests, p.MaxInFlight, p.Keys, p.Timeout = n, 1, 3, timeout
	res, err := Load(context.Background(), p)
	if err != nil {
		t.Fatal(err)
	}
	return res, res.Targets[0]
}

// TestOpenModelTimesFromTheIntendedInstant: with one request in flight
// and a service taking 50 ms, arrivals due every 10 ms queue behind each
// other; each one's latency counts from when it was due, not from when a
// slot let it go, so the queue shows (coordinated omission corrected).
// Timed from the send, every answer would take about 50 ms. The bounds are
// lower ones: a slower machine only makes the queue longer.
func TestOpenModelTimesFromTheIntendedInstant(t *testing.T) {
	_, tg := oneSlot(t, 50*time.Millisecond, 20, 10*time.Second)
	if tg.Error != "" || tg.Answered != 20 || tg.Dropped != 0 {
		t.Fatalf("error %q, answered %d, dropped %d; want 20 answered", tg.Error, tg.Answered, tg.Dropped)
	}
	// The kth arrival (from 0) is due at 10k ms and answered near 50(k+1)
	// ms: it waited 40k+50 ms. The 10th waits about 450 ms, the last 810.
	if l := tg.Latency; l.P50 < 300*time.Millisecond || l.Max < 600*time.Millisecond {
		t.Errorf("one slot, 50ms answers, an arrival every 10ms: p50 %s, max %s; want p50 ≥ 300ms, max ≥ 600ms", l.P50, l.Max)
	}
	if tg.Late < 15 {
		t.Errorf("%d arrivals late; want nearly all 20", tg.Late)
	}
}

// TestOpenModelDropsWhatCannotBeSentInTime: arrivals that find the one
// slot taken past their timeout are not sent, count as failures, and the
// load says what to change without naming a flag.
func TestOpenModelDropsWhatCannotBeSentInTime(t *testing.T) {
	res, tg := oneSlot(t, 300*time.Millisecond, 10, 100*time.Millisecond)
	if tg.Dropped == 0 || tg.Sent+tg.Dropped != 10 || tg.Errors < tg.Dropped {
		t.Fatalf("sent %d, dropped %d, errors %d; want some of the 10 dropped", tg.Sent, tg.Dropped, tg.Errors)
	}
	for _, k := range tg.ErrorKinds {
		if k.Kind == KindDropped && (strings.Contains(k.First, "--") || !strings.Contains(k.First, "all 1 in-flight slots")) {
			t.Errorf("dropped: %q", k.First)
		}
	}
	advice := Advice(res)
	if len(advice) != 1 || advice[0].Field != "MaxInFlight" {
		t.Fatalf("advice %v; want one on MaxInFlight", advice)
	}
	flag := func(f string) string { return "<" + f + ">" }
	if got := advice[0].Say(flag); !strings.Contains(got, "raise <MaxInFlight> or lower <Schedule>") || !strings.Contains(got, "in-flight slots taken for the 100ms timeout") {
		t.Errorf("advice %q", got)
	}
}
