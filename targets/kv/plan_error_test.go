package kv

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/racelab/racelab/targets/faults"
	"github.com/racelab/racelab/targets/story"
)

// TestPlanReadErrorIsReturned: a plan that cannot be read is an error of
// Paid and of Download, never "not paid" (which would be a refusal, and a
// refusal is a verdict). Two ways to fail the read: a key the platform
// refuses, and the store failing every operation.
func TestPlanReadErrorIsReturned(t *testing.T) {
	ctx := context.Background()
	long := strings.Repeat("s", MaxKeyBytes-len(planPrefix)+1)
	ns, err := New(DefaultConfig())
	if err != nil {
		t.Fatal(err)
	}
	app := NewApp(ns)
	if err := app.Subscribe(ctx, "fits"); err != nil {
		t.Fatal(err)
	}
	// The longest key that fits, with its prefix, still reads: the limit
	// is tested on both sides.
	if paid, err := app.Paid(ctx, "fits"); err != nil || !paid {
		t.Fatalf("Paid(fits) = %v, %v; want true, nil", paid, err)
	}
	if _, err := app.Paid(ctx, long[1:]); err != nil {
		t.Errorf("Paid of a key of exactly %d bytes with its prefix: %v, want no error", MaxKeyBytes, err)
	}
	if paid, err := app.Paid(ctx, long); !errors.Is(err, ErrInvalidKey) || !errors.Is(err, story.ErrKeyRefused) || paid {
		t.Errorf("Paid of a key past the limit = %v, %v; want an error wrapping ErrInvalidKey and story.ErrKeyRefused", paid, err)
	}
	if ok, _, err := app.Download(ctx, long, 5); err == nil || ok {
		t.Errorf("Download of a key past the limit = %v, %v; want the plan read's error", ok, err)
	}

	cfg := DefaultConfig()
	cfg.Faults = faults.Config{Fail: 1}
	failing, err := New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	app = NewApp(failing)
	if paid, err := app.Paid(ctx, "tom"); err == nil || paid {
		t.Errorf("Paid on a failing store = %v, %v; want an error", paid, err)
	}
	if ok, n, err := app.Download(ctx, "tom", 5); err == nil || ok || n != 0 {
		t.Errorf("Download on a failing store = %v, %d, %v; want an error", ok, n, err)
	}
}
