package shards

import (
	"errors"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/racelab/racelab/internal/usage"
	"github.com/racelab/racelab/scenarios/results"
)

// TestSpecSharding: what a shard is asked to play, as written, becomes
// the shard it plays, or a usage error naming the field at fault.
func TestSpecSharding(t *testing.T) {
	now := time.Date(2026, 5, 1, 12, 0, 0, 0, time.UTC)
	sh, err := Spec{Shard: "1/4", RunID: "r1", StartAt: "+30s", Period: time.Second, Trials: true}.Sharding(now, nil)
	if err != nil || sh.Index != 1 || sh.Of != 4 || sh.RunID != "r1" || !sh.StartAt.Equal(now.Add(30*time.Second)) || sh.Period != time.Second {
		t.Errorf("1/4 of r1 at +30s: %+v, %v", sh, err)
	}
	for _, tc := range []struct {
		spec  Spec
		field string
	}{
		{Spec{Shard: "0/2"}, "RunID"},
		{Spec{Shard: "0/2", RunID: "a b"}, "RunID"},
		{Spec{Shard: "0/2", RunID: "r", Trials: true}, "Period"},
		{Spec{Shard: "0/2", RunID: "r", Wait: true}, "Wait"},
		{Spec{Shard: "0/2", RunID: "r", StartAt: "-1s"}, "StartAt"},
	} {
		_, err := tc.spec.Sharding(now, nil)
		var fe *usage.FieldError
		if !errors.As(err, &fe) || fe.Field != tc.field {
			t.Errorf("%+v: %v; want a usage error about %s", tc.spec, err, tc.field)
		}
	}
	// A load has no trials to space: its period is not checked.
	if _, err := (Spec{Shard: "0/2", RunID: "r"}).Sharding(now, nil); err != nil {
		t.Errorf("a load's shard: %v", err)
	}
}

// TestSaveAndExpandDirs: a part saved in a folder is found there by
// name, and a folder without parts is a usage error.
func TestSaveAndExpandDirs(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "parts")
	part := &results.ShardResult{Shard: 1, Shards: 2}
	data, err := Encode(part, nil)
	if err != nil {
		t.Fatal(err)
	}
	if err := Save(dir, part, data); err != nil {
		t.Fatal(err)
	}
	got, err := ExpandDirs([]string{"-", dir, "x.json"})
	if want := filepath.Join(dir, "shard-1-of-2.json"); err != nil || len(got) != 3 || got[0] != "-" || got[1] != want || got[2] != "x.json" {
		t.Errorf("ExpandDirs = %v, %v; want -, %s, x.json", got, err, want)
	}
	if b, err := os.ReadFile(got[1]); err != nil || string(b) != string(data) {
		t.Errorf("saved part: %v", err)
	}
	empty := t.TempDir()
	if _, err := ExpandDirs([]string{empty}); !errors.Is(err, usage.Err) {
		t.Errorf("a folder without parts: %v; want a usage error", err)
	}
}
