package scenarios

import (
	"bytes"
	"context"
	"encoding/json"
	"path/filepath"
	"testing"
	"time"

	"github.com/racelab/racelab/scenarios/engine"
	"github.com/racelab/racelab/scenarios/load"
	"github.com/racelab/racelab/scenarios/results"
	"github.com/racelab/racelab/scenarios/shards"
)

// FuzzDocuments feeds the readers of documents from outside (a saved
// run, a saved load, a shard's part, then the merge of a part that passed
// its check) whatever bytes the fuzzer makes of honest ones: a document
// is refused or judged, never a panic. The merge reads back from a
// private SQLite file, whatever target the part names.
func FuzzDocuments(f *testing.F) {
	ctx := context.Background()
	dir := f.TempDir()
	db := "sqlite?path=" + filepath.Join(dir, "db.sqlite")
	marshal := func(v any) []byte {
		b, err := json.Marshal(v)
		if err != nil {
			f.Fatal(err)
		}
		return b
	}
	part, err := shards.RunShard(ctx, engine.Plan{Scenario: tenHitsOneView, Targets: []string{db}, Requests: 3, Trials: 1},
		engine.Sharding{Of: 1, RunID: "fuzz"})
	if err != nil {
		f.Fatal(err)
	}
	loadPart, err := shards.LoadShard(ctx, load.LoadPlan{Scenario: tenHitsOneView, Targeting: engine.Targeting{Targets: []string{db}}, Requests: 20, Concurrency: 2, Keys: 2},
		engine.Sharding{Of: 1, RunID: "fuzz-load"})
	if err != nil {
		f.Fatal(err)
	}
	saved, err := engine.Run(ctx, engine.Plan{Scenario: tenHitsOneView, Targets: []string{"kv"}, Requests: 3, Trials: 2, Seed: 1})
	if err != nil {
		f.Fatal(err)
	}
	for _, seed := range [][]byte{marshal(part), marshal(loadPart), marshal(saved), marshal(loadPart.Load)} {
		f.Add(seed)
	}
	f.Add(bytes.Replace(marshal(part), []byte(`"kind":"run"`), []byte(`"kind":"load"`), 1))
	f.Add(bytes.Replace(marshal(loadPart), []byte(`"kind":"load"`), []byte(`"kind":"run"`), 1))
	f.Add(bytes.Replace(marshal(loadPart), []byte(`"keys":2`), []byte(`"keys":1000000000000`), 1))
	f.Fuzz(func(t *testing.T, b []byte) {
		var r results.Result
		if json.Unmarshal(b, &r) == nil {
			_ = Check(&r, 10*time.Millisecond)
		}
		var l results.LoadResult
		if json.Unmarshal(b, &l) == nil {
			_ = shards.CheckLoad(&l, Find)
		}
		var p results.ShardResult
		if json.Unmarshal(b, &p) != nil || shards.CheckShard(&p, Find) != nil {
			return
		}
		ctx, cancel := context.WithTimeout(ctx, 5*time.Second)
		defer cancel()
		v := shards.VerifyPlan{Find: Find, Targeting: engine.Targeting{Timeout: time.Second}, Evidence: engine.Evidence{HistoryTimeout: 10 * time.Millisecond}}
		switch {
		case p.Run != nil:
			for range p.Run.Targets {
				v.Targets = append(v.Targets, db)
			}
			_, _ = shards.VerifyRun(ctx, []*results.ShardResult{&p}, v)
		case p.Load != nil:
			v.Targets = []string{db}
			_, _ = shards.VerifyLoad(ctx, []*results.ShardResult{&p}, v)
		}
	})
}
