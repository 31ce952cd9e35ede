package postgres

import (
	"testing"

	"github.com/racelab/racelab/targets/storetest"
)

// TestKit runs the checks every real-server store passes, one subtest each
// (storetest.Kit says what each shows); on PostgreSQL the optimistic strategy
// is SERIALIZABLE.
func TestKit(t *testing.T) { kit.Run(t) }

// BenchmarkHit measures one view hit per strategy, all goroutines on one
// slug, as in the story.
func BenchmarkHit(b *testing.B) { kit.BenchmarkHit(b) }

// TestOpenIsSafeInParallel opens stores at the same instant: creating the
// tables must not trip over itself, and opening again must keep the rows.
func TestOpenIsSafeInParallel(t *testing.T) {
	first := testServer.Store(t, Config{})
	ctx := t.Context()
	slug := storetest.Key(t, 0)
	if _, err := first.Hit(ctx, slug); err != nil {
		t.Fatal(err)
	}
	type opened struct {
		s   *Store
		err error
	}
	stores := storetest.Burst(8, func(int) opened {
		s, err := Open(ctx, Config{URL: testServer.URL()})
		return opened{s, err}
	})
	for i, o := range stores {
		if o.err != nil {
			t.Errorf("store %d: %v", i, o.err)
			continue
		}
		defer o.s.Close()
		got, err := o.s.Views(ctx, slug)
		if err != nil {
			t.Fatal(err)
		}
		if got != 1 {
			t.Errorf("store %d: views got %d, want 1", i, got)
		}
	}
}
