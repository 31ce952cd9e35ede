package kv

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/racelab/racelab/targets/clock"
	"github.com/racelab/racelab/targets/story"
)

// A key put with an expiry is gone from the central store, every cache
// and every listing once it passes; a shorter expiry than the platform's
// minimum is refused.
func TestPutExpiring(t *testing.T) {
	v := clock.NewVirtual(time.Date(2026, 3, 14, 9, 0, 0, 0, time.UTC))
	ns := newNamespace(t, func(cfg *Config) { cfg.Clock = v })
	ctx := context.Background()
	loc := Location{}
	if err := ns.PutExpiring(ctx, loc, "rl:a:1", "3", 30*time.Second); !errors.Is(err, ErrInvalidKey) {
		t.Errorf("expiry of 30s: %v; want refused", err)
	}
	if err := ns.PutExpiring(ctx, loc, "rl:a:1", "3", time.Minute); err != nil {
		t.Fatal(err)
	}
	if got, ok, _ := ns.Get(ctx, loc, "rl:a:1"); !ok || got != "3" {
		t.Fatalf("before expiry: %q %v; want 3", got, ok)
	}
	_ = v.Sleep(ctx, time.Minute)
	if _, ok, _ := ns.Get(ctx, loc, "rl:a:1"); ok {
		t.Error("the writing location still reads the key after its expiry")
	}
	if _, ok := ns.Settled("rl:a:1"); ok {
		t.Error("the central store still holds the key after its expiry")
	}
	if keys, _ := ns.List(ctx, Location{Site: 1}, "rl:a:"); len(keys) != 0 {
		t.Errorf("list after expiry: %v; want none", keys)
	}
}

// The naive limiter counts per window and leaves nothing behind after
// the expiry: Records reads the keys still stored.
func TestLimiterRecordsExpire(t *testing.T) {
	v := clock.NewVirtual(time.Date(2026, 3, 14, 9, 0, 0, 0, time.UTC))
	ns := newNamespace(t, func(cfg *Config) { cfg.Clock = v })
	app := NewApp(ns)
	w := story.Window{Limit: 5, Length: time.Minute}
	ctx := context.Background()
	var held, after int64
	err := v.Run(ctx, 1, func(ctx context.Context, _ int) {
		for range 3 {
			if a, err := app.Admit(ctx, "bot", w); err != nil || !a.Allowed {
				t.Errorf("admit: %+v %v", a, err)
			}
		}
		held, _ = app.Records(ctx, "bot", w)
		_ = v.Sleep(ctx, 2*time.Minute)
		after, _ = app.Records(ctx, "bot", w)
	})
	if err != nil {
		t.Fatal(err)
	}
	if held != 1 || after != 0 {
		t.Errorf("records %d, then %d after the expiry; want 1, then 0", held, after)
	}
}
