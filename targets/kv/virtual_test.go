package kv

import (
	"context"
	"errors"
	"fmt"
	"reflect"
	"strconv"
	"strings"
	"testing"
	"time"

	"go.uber.org/goleak"

	"github.com/racelab/racelab/targets/clock"
	"github.com/racelab/racelab/targets/story"
)

func TestMain(m *testing.M) {
	goleak.VerifyTestMain(m)
}

// trial is everything a burst on a virtual clock produced: what each
// request was told, what it did to the store, and what the store settled on.
type trial struct {
	answers []string
	steps   [][]story.Step
	counted int64
	stats   Stats
	took    time.Duration // virtual time of the burst
}

// virtualBurst runs n requests of one story at once on a fresh namespace
// with the default platform behaviour, a virtual clock and seed.
func virtualBurst(t testing.TB, seed int64, n int, kind string) trial {
	t.Helper()
	v := clock.NewVirtual(epoch)
	cfg := DefaultConfig()
	cfg.Seed = seed
	cfg.Clock = v
	ns, err := New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	app := NewApp(ns)
	tr := trial{answers: make([]string, n), steps: make([][]story.Step, n)}
	recs := make([]story.Recorder, n)
	err = clock.Run(context.Background(), v, n, func(ctx context.Context, i int) {
		ctx = story.WithRecorder(ctx, &recs[i])
		var answer any
		var err error
		switch kind {
		case "hit":
			answer, err = app.Hit(ctx, "post")
		case "consume":
			var granted bool
			var count int64
			granted, count, err = app.Consume(ctx, "visitor", 5)
			answer = fmt.Sprint(granted, count)
		case "checkout":
			answer, err = app.Checkout(ctx, "painting", fmt.Sprintf("buyer-%d", i))
		}
		tr.answers[i] = fmt.Sprint(answer, err)
	})
	if err != nil {
		t.Fatalf("Run: %v", err)
	}
	tr.took = v.Now().Sub(epoch)
	for i := range recs {
		tr.steps[i] = recs[i].Steps()
	}
	ctx := context.Background()
	switch kind {
	case "hit":
		tr.counted, err = app.Views(ctx, "post")
	case "consume":
		tr.counted, err = app.Count(ctx, "visitor")
	case "checkout":
		tr.counted, err = app.Claims(ctx, "painting")
	}
	if err != nil {
		t.Fatal(err)
	}
	tr.stats = ns.Stats()
	return tr
}

// On a virtual clock the seed decides everything: the same seed gives the
// same answers, the same count and the same steps at the same instants.
func TestVirtualBurstIsDeterministic(t *testing.T) {
	for _, kind := range []string{"hit", "consume", "checkout"} {
		for seed := range int64(6) {
			first := virtualBurst(t, seed, 12, kind)
			again := virtualBurst(t, seed, 12, kind)
			if !reflect.DeepEqual(first, again) {
				t.Errorf("%s, seed %d: two runs differ:\n%+v\n%+v", kind, seed, first, again)
			}
		}
	}
}

// The story's figure, replayed: ten simultaneous hits record fewer than ten
// views, the same way every time, and each request's trace shows its read,
// its write, and what its write erased when it landed.
func TestVirtualTenHits(t *testing.T) {
	const n = 10
	first := virtualBurst(t, 7, n, "hit")
	for range 2 {
		if again := virtualBurst(t, 7, n, "hit"); !reflect.DeepEqual(first, again) {
			t.Fatalf("seed 7 replayed differently:\n%+v\n%+v", first, again)
		}
	}
	if first.counted >= n {
		t.Errorf("10 hits recorded %d views, want fewer (lost updates)", first.counted)
	}
	// Every request read, then wrote, then its write landed; nothing else.
	erased := 0
	for i, steps := range first.steps {
		var ops []string
		for _, s := range steps {
			ops = append(ops, s.Op)
			if s.Key != "views:post" {
				t.Errorf("request %d: step on %q, want views:post", i, s.Key)
			}
		}
		if got, want := strings.Join(ops, " "), "read write write-lands"; got != want {
			t.Fatalf("request %d: ops %q, want %q", i, got, want)
		}
		read, write, lands := steps[0], steps[1], steps[2]
		if want := strconv.FormatInt(number(read.Value)+1, 10); write.Value != want || lands.Value != want {
			t.Errorf("request %d read %q, wrote %q, landed %q; want it to write %s", i, read.Value, write.Value, lands.Value, want)
		}
		if want := fmt.Sprint(write.Value, " <nil>"); first.answers[i] != want {
			t.Errorf("request %d answered %q, want %q", i, first.answers[i], want)
		}
		if !read.At.Before(write.At.Add(1)) || !write.At.Before(lands.At) {
			t.Errorf("request %d: steps out of order: %v", i, steps)
		}
		if old, ok := strings.CutPrefix(lands.Note, "replaced "); ok && number(old) >= number(lands.Value) {
			erased++ // this landing overwrote a count at least as high: a lost update
		}
	}
	if lost := n - int(first.counted); erased < lost {
		t.Errorf("%d views lost but only %d landings shown erasing a count", lost, erased)
	}
	// The whole burst takes one cold read and one write, jitter included.
	if max := 2 * (DefaultColdRead + DefaultWrite); first.took <= 0 || first.took > max {
		t.Errorf("burst took %v of virtual time, want (0, %v]", first.took, max)
	}
	for i, steps := range first.steps {
		t.Logf("request %d → %s\n%s", i, first.answers[i], story.FormatSteps(epoch, steps))
	}
}

// The other two stories break on a virtual clock as they do on the real one.
func TestVirtualStoriesBreak(t *testing.T) {
	consume := virtualBurst(t, 7, 12, "consume")
	granted := 0
	for _, a := range consume.answers {
		if strings.HasPrefix(a, "true") {
			granted++
		}
	}
	if granted <= 5 {
		t.Errorf("12 downloads at once: %d granted, want more than the limit of 5", granted)
	}
	checkout := virtualBurst(t, 7, 5, "checkout")
	for i, a := range checkout.answers {
		if a != "true <nil>" {
			t.Errorf("checkout %d answered %q, want true", i, a)
		}
	}
	if checkout.counted != 1 {
		t.Errorf("claims = %d, want 1", checkout.counted)
	}
}

// recorded runs do with a recorder in its context and returns its steps.
func recorded(do func(ctx context.Context)) []story.Step {
	var r story.Recorder
	do(story.WithRecorder(context.Background(), &r))
	return r.Steps()
}

// Each kind of step the namespace and the Worker record, with its note.
func TestTraceSteps(t *testing.T) {
	ns, c := newManual(t, func(c *Config) { c.WriteLimit = true })
	app := NewApp(ns)
	here, there := Location{Site: 0}, Location{Site: 1}
	var app0 = app.At(here)
	type want struct{ op, value, note string }
	tests := []struct {
		name string
		do   func(ctx context.Context)
		want []want
	}{
		{"read of a missing key", func(ctx context.Context) { _, _, _ = ns.Get(ctx, there, "k") },
			[]want{{"read", "", "not found, cache miss: read the central store"}}},
		{"first write", func(ctx context.Context) { _ = ns.Put(ctx, here, "k", "1") },
			[]want{{"write", "1", ""}, {"write-lands", "1", "created"}}},
		{"stale cached not found", func(ctx context.Context) { _, _, _ = ns.Get(ctx, there, "k") },
			[]want{{"read", "", "not found, cache hit, cached 31ms ago, stale: the central store holds 1"}}},
		{"current cached value", func(ctx context.Context) { _, _, _ = ns.Get(ctx, here, "k") },
			[]want{{"read", "1", "cache hit, cached 2ms ago, current"}}},
		{"write within a second: 429", func(ctx context.Context) { _ = ns.Put(ctx, here, "k", "2") },
			[]want{{"write", "2", ""}, {"refuse", "2", "429: the key was written 32ms before"}}},
		{"a second later", func(ctx context.Context) { c.Advance(time.Second); _ = ns.Put(ctx, here, "k", "3") },
			[]want{{"write", "3", ""}, {"write-lands", "3", "replaced 1"}}},
		{"delete", func(ctx context.Context) { c.Advance(time.Second); _ = ns.Delete(ctx, here, "k") },
			[]want{{"write", "", "delete"}, {"write-lands", "", "deleted 3"}}},
		{"checkout, then another", func(ctx context.Context) {
			_, _ = app0.Checkout(ctx, "painting", "ada")
			c.Advance(time.Second)
			_, _ = app0.Checkout(ctx, "painting", "bob")
		}, []want{
			{"read", "", "not found, cache miss: read the central store"},
			{"write", "ada", ""}, {"write-lands", "ada", "created"},
			{"read", "ada", "cache hit, cached 1.001s ago, current"},
			{"refuse", "ada", "already sold"},
		}},
	}
	for _, tt := range tests {
		steps := recorded(tt.do)
		var got []want
		for _, s := range steps {
			got = append(got, want{s.Op, s.Value, s.Note})
			if s.At.Before(epoch) || s.At.After(c.Now()) {
				t.Errorf("%s: step %v at %v, outside the clock's span", tt.name, s, s.At)
			}
		}
		if !reflect.DeepEqual(got, tt.want) {
			t.Errorf("%s: steps\n%q\nwant\n%q", tt.name, got, tt.want)
		}
	}
	// A refused download, and nothing recorded without a recorder.
	for range 5 {
		if _, _, err := app0.Consume(context.Background(), "v", 5); err != nil && !errors.Is(err, ErrTooManyWrites) {
			t.Fatal(err)
		}
		c.Advance(time.Second)
	}
	steps := recorded(func(ctx context.Context) { _, _, _ = app0.Consume(ctx, "v", 5) })
	if last := steps[len(steps)-1]; last.Op != story.OpRefuse || last.Value != "5" || last.Note != "limit of 5 reached" {
		t.Errorf("refused download recorded %v", last)
	}
}

// 1,000 of these is what racelab runs for 1,000 trials of ten-hits-one-view
// on kv in virtual time.
func BenchmarkVirtualBurst(b *testing.B) {
	for _, traced := range []bool{false, true} {
		b.Run(fmt.Sprintf("10-hits/traced=%v", traced), func(b *testing.B) {
			for b.Loop() {
				v := clock.NewVirtual(epoch)
				cfg := DefaultConfig()
				cfg.Clock = v
				ns, err := New(cfg)
				if err != nil {
					b.Fatal(err)
				}
				app := NewApp(ns)
				var recs [10]story.Recorder
				err = clock.Run(context.Background(), v, 10, func(ctx context.Context, i int) {
					if traced {
						ctx = story.WithRecorder(ctx, &recs[i])
					}
					if _, err := app.Hit(ctx, "post"); err != nil {
						b.Error(err)
					}
				})
				if err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
