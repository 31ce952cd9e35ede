package actor

import (
	"context"
	"errors"
	"fmt"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/racelab/racelab/targets/clock"
	"github.com/racelab/racelab/targets/storetest"
	"github.com/racelab/racelab/targets/story"
)

var epoch = time.Date(2026, 8, 14, 12, 0, 0, 0, time.UTC)

// burstResult is what a burst of hits on a virtual clock produced.
type burstResult struct {
	answers []int64
	views   int64
	steps   [][]story.Step
	took    time.Duration // virtual time of the burst
}

// virtualHits releases n hits on one slug together, on a fresh store
// following strategy on a virtual clock, with each request traced.
func virtualHits(t *testing.T, strategy string, n int) burstResult {
	t.Helper()
	v := clock.NewVirtual(epoch)
	s := open(t, Config{Strategy: strategy, Clock: v})
	r := burstResult{answers: make([]int64, n), steps: make([][]story.Step, n)}
	recs := make([]story.Recorder, n)
	errs := make([]error, n)
	err := clock.Run(t.Context(), s.Clock(), n, func(ctx context.Context, i int) {
		r.answers[i], errs[i] = s.Hit(story.WithRecorder(ctx, &recs[i]), "post")
	})
	if err != nil {
		t.Fatalf("Run: %v", err)
	}
	for i, err := range errs {
		if err != nil {
			t.Fatalf("hit %d: %v", i, err)
		}
	}
	r.took = v.Now().Sub(epoch)
	for i := range recs {
		r.steps[i] = recs[i].Steps()
	}
	// Read from outside the run: it runs as a run of its own.
	if r.views, err = s.Views(t.Context(), "post"); err != nil {
		t.Fatal(err)
	}
	return r
}

// ops lists the ops of steps, space-separated.
func ops(steps []story.Step) string {
	var out []string
	for _, s := range steps {
		out = append(out, s.Op)
	}
	return strings.Join(out, " ")
}

// One request at a time per key: on a virtual clock ten hits are served in
// the order they arrived, each taking one storage read and one storage
// write with the input gate closed, and the result is exact.
func TestVirtualHitBurstHolds(t *testing.T) {
	const n = 10
	r := virtualHits(t, StrategyDefault, n)
	if again := virtualHits(t, StrategyDefault, n); !reflect.DeepEqual(r, again) {
		t.Fatalf("two runs differ:\n%+v\n%+v", r, again)
	}
	if r.views != n {
		t.Errorf("views = %d, want %d", r.views, n)
	}
	if want := storetest.OneTo(n); !slices.Equal(r.answers, want) {
		t.Errorf("answers = %v, want %v (served in arrival order)", r.answers, want)
	}
	// Two storage round trips per request, one request at a time.
	if want := n * 2 * DefaultStorageLatency; r.took != want {
		t.Errorf("burst took %v of virtual time, want %v", r.took, want)
	}
	for i, steps := range r.steps {
		if got := ops(steps); got != "read write" {
			t.Fatalf("request %d: ops %q, want %q", i, got, "read write")
		}
		read, write := steps[0], steps[1]
		if read.Key != "views:post" || read.Value != fmt.Sprint(i) || write.Value != fmt.Sprint(i+1) {
			t.Errorf("request %d: %v, %v; want read %d, write %d on views:post", i, read, write, i, i+1)
		}
		start := epoch.Add(time.Duration(2*i) * DefaultStorageLatency)
		if !read.At.Equal(start.Add(DefaultStorageLatency)) || !write.At.Equal(start.Add(2*DefaultStorageLatency)) {
			t.Errorf("request %d: read at %v, write at %v; want one after the other", i, read.At.Sub(epoch), write.At.Sub(epoch))
		}
	}
}

// Awaiting a fetch opens the gate between read and write: on a virtual
// clock updates are lost the same way every time.
func TestVirtualHitBurstAwaitFetchLoses(t *testing.T) {
	const n = 10
	r := virtualHits(t, StrategyAwaitFetch, n)
	for range 3 {
		if again := virtualHits(t, StrategyAwaitFetch, n); !reflect.DeepEqual(r, again) {
			t.Fatalf("two runs differ:\n%+v\n%+v", r, again)
		}
	}
	if r.views >= n {
		t.Errorf("views = %d after %d hits, want fewer (lost updates)", r.views, n)
	}
	sorted := slices.Sorted(slices.Values(r.answers))
	if len(slices.Compact(sorted)) == n {
		t.Errorf("answers %v all distinct, want repeats (requests read the same total)", r.answers)
	}
	for i, steps := range r.steps {
		if got := ops(steps); got != "read fetch write" {
			t.Fatalf("request %d: ops %q, want %q", i, got, "read fetch write")
		}
		if steps[2].At.Sub(steps[1].At) < DefaultFetchLatency {
			t.Errorf("request %d wrote %v after its fetch began, want at least the fetch latency", i, steps[2].At.Sub(steps[1].At))
		}
	}
	t.Logf("%d hits, %d views, answers %v, %v of virtual time", n, r.views, r.answers, r.took)
}

// virtualDownloads releases n downloads by one visitor together.
func virtualDownloads(t *testing.T, strategy string, n int, limit int64) (granted int, count int64, steps [][]story.Step) {
	t.Helper()
	v := clock.NewVirtual(epoch)
	s := open(t, Config{Strategy: strategy, Clock: v})
	ok := make([]bool, n)
	steps = make([][]story.Step, n)
	err := clock.Run(t.Context(), v, n, func(ctx context.Context, i int) {
		var r story.Recorder
		var err error
		ok[i], _, err = s.Consume(story.WithRecorder(ctx, &r), "visitor", limit)
		if err != nil {
			t.Error(err)
		}
		steps[i] = r.Steps()
	})
	if err != nil {
		t.Fatal(err)
	}
	for _, g := range ok {
		if g {
			granted++
		}
	}
	if count, err = s.Count(t.Context(), "visitor"); err != nil {
		t.Fatal(err)
	}
	return granted, count, steps
}

func TestVirtualConsumeBurst(t *testing.T) {
	const n, limit = 12, 5
	granted, count, steps := virtualDownloads(t, StrategyDefault, n, limit)
	if granted != limit || count != limit {
		t.Errorf("granted %d, count %d; want %d and %d", granted, count, limit, limit)
	}
	for i, st := range steps {
		want := "read write"
		if i >= limit {
			want = "read refuse"
		}
		if got := ops(st); got != want {
			t.Errorf("download %d: ops %q, want %q", i, got, want)
		}
	}
	if refuse := steps[n-1][1]; refuse.Value != "5" || refuse.Note != "limit of 5 reached" {
		t.Errorf("refusal recorded as %v", refuse)
	}
	g1, c1, _ := virtualDownloads(t, StrategyAwaitFetch, n, limit)
	g2, c2, _ := virtualDownloads(t, StrategyAwaitFetch, n, limit)
	if g1 != g2 || c1 != c2 {
		t.Errorf("await-fetch replayed differently: granted %d then %d, count %d then %d", g1, g2, c1, c2)
	}
	if g1 <= limit {
		t.Errorf("await-fetch granted %d, want more than the limit of %d", g1, limit)
	}
}

func TestVirtualCheckoutBurst(t *testing.T) {
	for _, tt := range []struct {
		strategy      string
		wantSuccesses int
	}{
		{StrategyDefault, 1},
		{StrategyAwaitFetch, 5},
	} {
		v := clock.NewVirtual(epoch)
		s := open(t, Config{Strategy: tt.strategy, Clock: v})
		won := make([]bool, 5)
		recs := make([]story.Recorder, 5)
		err := clock.Run(t.Context(), v, 5, func(ctx context.Context, i int) {
			won[i], _ = s.Checkout(story.WithRecorder(ctx, &recs[i]), "painting", fmt.Sprintf("buyer-%d", i+1))
		})
		if err != nil {
			t.Fatal(err)
		}
		successes := 0
		for _, w := range won {
			if w {
				successes++
			}
		}
		if successes != tt.wantSuccesses {
			t.Errorf("%q: %d checkouts succeeded, want %d", tt.strategy, successes, tt.wantSuccesses)
		}
		if tt.strategy == StrategyDefault {
			if got := recs[1].Steps(); ops(got) != "read refuse" || got[1].Note != "sold out: claimed by buyer-1" {
				t.Errorf("second checkout recorded %v", got)
			}
		}
	}
}

// The quota's day rolls over at midnight UTC on the store's clock: on a
// virtual one, waiting for midnight takes no time.
func TestVirtualDayRollover(t *testing.T) {
	v := clock.NewVirtual(time.Date(2026, 3, 1, 23, 59, 0, 0, time.UTC))
	s := open(t, Config{Clock: v})
	ctx := t.Context()
	consume := func() (bool, int64) {
		t.Helper()
		granted, count, err := s.Consume(ctx, "visitor", 5)
		if err != nil {
			t.Fatal(err)
		}
		return granted, count
	}
	for range 5 {
		consume()
	}
	if granted, count := consume(); granted || count != 5 {
		t.Fatalf("sixth download before midnight: (%v, %d), want refused at 5", granted, count)
	}
	// From outside the runs, Sleep moves the clock on.
	if err := v.Sleep(ctx, time.Minute); err != nil {
		t.Fatal(err)
	}
	if granted, count := consume(); !granted || count != 1 {
		t.Errorf("first download after midnight: (%v, %d), want granted at 1", granted, count)
	}
	var r story.Recorder
	if _, err := s.Count(story.WithRecorder(ctx, &r), "visitor"); err != nil {
		t.Fatal(err)
	}
	if steps := r.Steps(); len(steps) != 1 || steps[0].Note != "day 2026-03-02" {
		t.Errorf("count recorded %v", steps)
	}
}

// Close ends the objects and fetches parked on a virtual clock between
// runs; TestMain's leak check sees that none is left.
func TestVirtualClose(t *testing.T) {
	v := clock.NewVirtual(epoch)
	s := New(Config{Strategy: StrategyAwaitFetch, Clock: v, FetchLatency: time.Hour})
	ctx, cancel := context.WithTimeout(t.Context(), time.Hour)
	defer cancel()
	// The hits give up after a minute of virtual time, their fetches still
	// in flight for the rest of the hour.
	errs := make([]error, 3)
	err := clock.Run(t.Context(), v, 3, func(_ context.Context, i int) {
		rctx, stop := context.WithCancel(ctx)
		defer stop()
		clock.Go(v, func() {
			_ = v.Sleep(context.Background(), time.Minute)
			stop()
		})
		_, errs[i] = s.Hit(rctx, fmt.Sprint("slug-", i))
	})
	if err != nil {
		t.Fatal(err)
	}
	for i, err := range errs {
		if !errors.Is(err, context.Canceled) {
			t.Errorf("hit %d: %v, want context.Canceled", i, err)
		}
	}
	// The cancels took effect at the instant they were made.
	if got := v.Now().Sub(epoch); got != time.Minute {
		t.Errorf("the run ended at %v, want 1m0s", got)
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Hit(ctx, "slug-0"); err == nil {
		t.Error("Hit after Close succeeded")
	}
}

// A burst of ten hits on a fresh store in virtual time, as racelab runs
// one trial of ten-hits-one-view on actor.
func BenchmarkVirtualBurst(b *testing.B) {
	for _, strategy := range []string{StrategyDefault, StrategyAwaitFetch} {
		b.Run(fmt.Sprintf("10-hits/strategy=%q", strategy), func(b *testing.B) {
			for b.Loop() {
				v := clock.NewVirtual(epoch)
				s := New(Config{Strategy: strategy, Clock: v})
				err := clock.Run(context.Background(), v, 10, func(ctx context.Context, i int) {
					if _, err := s.Hit(ctx, "post"); err != nil {
						b.Error(err)
					}
				})
				if err != nil {
					b.Fatal(err)
				}
				s.Close()
			}
		})
	}
}
