package scenarios

import (
	"context"
	"errors"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/racelab/racelab/internal/testwait"
	"github.com/racelab/racelab/scenarios/engine"
	"github.com/racelab/racelab/scenarios/load"
	"github.com/racelab/racelab/scenarios/pace"
	"github.com/racelab/racelab/scenarios/results"
	"github.com/racelab/racelab/scenarios/shards"
)

func TestParseShard(t *testing.T) {
	env := func(vars map[string]string) func(string) string {
		return func(k string) string { return vars[k] }
	}
	tests := []struct {
		in        string
		env       map[string]string
		index, of int
		err       string
	}{
		{in: "0/4", index: 0, of: 4},
		{in: "3/4", index: 3, of: 4},
		{in: " 1/1 ", index: 0, of: 1, err: "want 0 to 0"},
		{in: "0/1", index: 0, of: 1},
		{in: "auto/8", env: map[string]string{"JOB_COMPLETION_INDEX": "5"}, index: 5, of: 8},
		{in: "auto", env: map[string]string{"JOB_COMPLETION_INDEX": "2", "RACELAB_SHARDS": "3"}, index: 2, of: 3},
		{in: "auto", env: map[string]string{"JOB_COMPLETION_INDEX": "2"}, err: "RACELAB_SHARDS"},
		{in: "auto/4", err: "JOB_COMPLETION_INDEX"},
		{in: "auto/4", env: map[string]string{"JOB_COMPLETION_INDEX": "4"}, err: "want 0 to 3"},
		{in: "auto/4", env: map[string]string{"JOB_COMPLETION_INDEX": "x"}, err: "not a whole number"},
		{in: "4/4", err: "want 0 to 3 (shards count from 0)"},
		{in: "-1/4", err: "want 0 to 3"},
		{in: "1/0", err: "1 or more"},
		{in: "1", err: "want I/N"},
		{in: "a/4", err: "from 0 to N-1"},
	}
	for _, tt := range tests {
		i, n, err := shards.ParseShard(tt.in, env(tt.env))
		if tt.err != "" {
			if err == nil || !strings.Contains(err.Error(), tt.err) || !errors.Is(err, results.ErrUsage) {
				t.Errorf("ParseShard(%q) = %d, %d, %v; want a usage error containing %q", tt.in, i, n, err, tt.err)
			}
			continue
		}
		if err != nil || i != tt.index || n != tt.of {
			t.Errorf("ParseShard(%q) = %d, %d, %v; want %d, %d", tt.in, i, n, err, tt.index, tt.of)
		}
	}
}

func TestParseStartAt(t *testing.T) {
	now := time.Date(2026, 5, 1, 12, 0, 0, 0, time.UTC)
	got, err := shards.ParseStartAt("+30s", now)
	if err != nil || !got.Equal(now.Add(30*time.Second)) {
		t.Errorf("+30s = %v, %v; want %v", got, err, now.Add(30*time.Second))
	}
	got, err = shards.ParseStartAt("2026-05-01T12:00:01.5+02:00", now)
	if want := time.Date(2026, 5, 1, 10, 0, 1, 5e8, time.UTC); err != nil || !got.Equal(want) {
		t.Errorf("RFC 3339 = %v, %v; want %v", got, err, want)
	}
	for _, bad := range []string{"", "30s", "+-1s", "+soon", "2026-05-01 12:00:00", "tomorrow"} {
		if _, err := shards.ParseStartAt(bad, now); !errors.Is(err, results.ErrUsage) {
			t.Errorf("ParseStartAt(%q) = %v; want a usage error", bad, err)
		}
	}
}

// TestCheckStartAt: an instant up to a day past is a shard started late
// and is taken (Late says how late), one a day and a nanosecond past is
// refused; a day ahead is taken, a day and a nanosecond needs Wait.
func TestCheckStartAt(t *testing.T) {
	now := time.Date(2026, 5, 1, 12, 0, 0, 0, time.UTC)
	tests := []struct {
		at   time.Time
		wait bool
		says string // "" for none
	}{
		{now.Add(-time.Nanosecond), false, ""},
		{now.Add(-90 * time.Second), true, ""},
		{now.Add(-shards.MaxStartAhead), false, ""},
		{now.Add(-shards.MaxStartAhead - time.Nanosecond), false, "StartAt 2026-04-30T11:59:59.999999999Z is 24h in the past, more than a day; give an instant to come"},
		{now, false, ""},
		{now.Add(shards.MaxStartAhead), false, ""},
		{now.Add(shards.MaxStartAhead + time.Nanosecond), false, "StartAt 2026-05-02T12:00:00.000000001Z is 24h ahead, more than a day; add Wait"},
		{now.Add(shards.MaxStartAhead + time.Nanosecond), true, ""},
		{now.Add(400 * 24 * time.Hour), true, ""},
		{now.Add(-50 * time.Hour), true, "StartAt 2026-04-29T10:00:00Z is 2 days in the past"},
	}
	for at, want := range map[time.Time]string{now: "", now.Add(time.Nanosecond): "", now.Add(-time.Nanosecond): "0s",
		now.Add(-1500 * time.Millisecond): "2s", now.Add(-90 * time.Second): "1m30s"} {
		if got := shards.Late(at, now); got != want {
			t.Errorf("Late(%s) = %q; want %q", at.Format(time.RFC3339Nano), got, want)
		}
	}
	for _, tt := range tests {
		err := shards.CheckStartAt(tt.at, now, tt.wait)
		if tt.says == "" && err != nil || tt.says != "" && (err == nil || !strings.HasPrefix(err.Error(), tt.says) || !errors.Is(err, results.ErrUsage)) {
			t.Errorf("CheckStartAt(%s, wait %t) = %v; want %q", tt.at.Format(time.RFC3339Nano), tt.wait, err, tt.says)
		}
	}
}

// playShards runs of shards of plan concurrently, as separate processes
// would, with one run id and one start, and returns their parts.
func playShards(t *testing.T, p engine.Plan, of int, runID string) []*results.ShardResult {
	t.Helper()
	// A second ahead and apart: time to open, warm and stage even under
	// the race detector on a loaded machine, where a share fired late
	// would make the burst not simultaneous (and the trial inconclusive).
	start := time.Now().Add(time.Second)
	parts := make([]*results.ShardResult, of)
	errs := make([]error, of)
	var wg sync.WaitGroup
	for i := range of {
		wg.Go(func() {
			parts[i], errs[i] = shards.RunShard(context.Background(), p, engine.Sharding{Index: i, Of: of, RunID: runID, StartAt: start,
				Period: time.Second, Host: "here"})
		})
	}
	wg.Wait()
	for i, err := range errs {
		if err != nil {
			t.Fatalf("shard %d: %v", i, err)
		}
		for _, tg := range parts[i].Run.Targets {
			if tg.Error != "" {
				t.Fatalf("shard %d: %s: %s", i, tg.Target, tg.Error)
			}
		}
		if err := shards.CheckShard(parts[i], Find); err != nil {
			t.Fatalf("shard %d: %v", i, err)
		}
	}
	return parts
}

// Four shards of 25 make one burst of 100 on one key: an atomic store
// counts every one of them, and the merge judges it as one trial.
func TestShardsMergeIntoOneBurst(t *testing.T) {
	var cases []testwait.Case // each mostly waits for its shards' start
	for _, store := range []string{"sqlite", "actor"} {
		cases = append(cases, testwait.Case{Name: store, Test: func(t *testing.T) {
			url := serveContract(t, store)
			// A minute a request: on a loaded machine, under the race
			// detector, 100 writes to SQLite took more than 10 s.
			p := engine.Plan{Scenario: tenHitsOneView, Targets: []string{url}, Requests: 100, Trials: 2, Timeout: time.Minute}
			parts := playShards(t, p, 4, "merge-"+store)
			for i, part := range parts {
				if got := len(part.Run.Targets[0].Trials[0].Requests); got != 25 {
					t.Errorf("shard %d fired %d requests a burst, want 25", i, got)
				}
			}
			// The merge is under test, not simultaneity (evidence_test.go):
			// under the race detector a trial's answers can outlast the
			// period and the next share fire late.
			res, err := shards.VerifyRun(context.Background(), parts, shards.VerifyPlan{Find: Find, Evidence: engine.Evidence{MaxSpread: time.Minute}})
			if err != nil {
				t.Fatal(err)
			}
			tr := res.Targets[0]
			s := tr.Summary()
			if tr.Error != "" || s.Trials != 2 || s.Allowed.Min != 100 || s.Allowed.Max != 100 || s.CountedMin != 100 || s.CountedMax != 100 || s.Broken != 0 {
				t.Fatalf("merged: error %q, %d trials, allowed %d..%d, counted %d..%d, broken %d, first request error %q; want 2 trials of 100 allowed and counted",
					tr.Error, s.Trials, s.Allowed.Min, s.Allowed.Max, s.CountedMin, s.CountedMax, s.Broken, s.FirstError)
			}
			if tr.Verdict() != "holds" || len(res.Shortfalls()) != 0 {
				t.Errorf("verdict %q, shortfalls %v; want holds", tr.Verdict(), res.Shortfalls())
			}
			// Shards on one machine share a clock: the history is checked.
			if s.HistoryChecked != 2 || s.NotLinearizable != 0 {
				t.Errorf("history checked %d, not linearizable %d; want 2 and 0", s.HistoryChecked, s.NotLinearizable)
			}
			if len(s.ArrivalSpreads) != 2 {
				t.Errorf("%d arrival spreads; want one per merged burst", len(s.ArrivalSpreads))
			}
			for _, trial := range tr.Trials {
				for j, r := range trial.Requests {
					if r.Index != j {
						t.Fatalf("trial %d: request %d has index %d", trial.Index, j, r.Index)
					}
				}
			}
			// What the merge wrote is a result like any other.
			if err := Check(res, time.Second); err != nil {
				t.Errorf("merged result fails its own check: %v", err)
			}
		}})
	}
	testwait.SideBySide(t, cases...)
}

// On the KV store the shards' hits meet on one key and the loss shows, in
// one trial of the whole burst.
func TestShardsShowTheLossOnKV(t *testing.T) {
	url := serveContract(t, "kv")
	p := engine.Plan{Scenario: tenHitsOneView, Targets: []string{url}, Requests: 40, Trials: 1, Timeout: 10 * time.Second}
	parts := playShards(t, p, 4, "kv-loss")
	res, err := shards.VerifyRun(context.Background(), parts, shards.VerifyPlan{Find: Find})
	if err != nil {
		t.Fatal(err)
	}
	tr := res.Targets[0]
	s := tr.Summary()
	if s.Trials != 1 || s.Allowed.Sum != 40 || s.Lost == 0 || s.Lost != 40-s.CountedSum || s.Broken != 1 {
		t.Fatalf("kv: %d trials, %d allowed, %d counted, %d lost, %d broken; want one broken trial of 40 with the loss", s.Trials, s.Allowed.Sum, s.CountedSum, s.Lost, s.Broken)
	}
	if fs := res.Shortfalls(); len(fs) != 1 || fs[0].Kind != results.RuleShortfall {
		t.Errorf("shortfalls %v; want the rule broken (a service is expected to hold)", fs)
	}
}

func TestMergeRefusesPartsOfDifferentRuns(t *testing.T) {
	url := serveContract(t, "sqlite")
	p := engine.Plan{Scenario: tenHitsOneView, Targets: []string{url}, Requests: 8, Trials: 1}
	a := playShards(t, p, 2, "run-a")
	b := playShards(t, p, 2, "run-b")
	p.Requests = 10
	c := playShards(t, p, 2, "run-c")
	p.Scenario, p.Requests = fiveCheckouts, 8
	d := playShards(t, p, 2, "run-d")
	three := playShards(t, engine.Plan{Scenario: tenHitsOneView, Targets: []string{url}, Requests: 9, Trials: 1}, 3, "run-e")
	// Each posing as part of run-a, so that only what is checked differs.
	for _, s := range []*results.ShardResult{c[1], d[1], three[1]} {
		s.RunID, s.StartAt = a[0].RunID, a[0].StartAt
	}
	tests := []struct {
		name  string
		parts []*results.ShardResult
		want  string
	}{
		{"other run id", []*results.ShardResult{a[0], b[1]}, "run ids run-a and run-b"},
		{"other N", []*results.ShardResult{a[0], c[1]}, "N=8"},
		{"other scenario", []*results.ShardResult{a[0], d[1]}, "five-checkouts"},
		{"missing shard", []*results.ShardResult{a[0]}, "shard 1 missing"},
		{"other shard count", []*results.ShardResult{a[0], three[1]}, "shard counts"},
		{"none", nil, "no shard results"},
	}
	for _, tt := range tests {
		_, err := shards.VerifyRun(context.Background(), tt.parts, shards.VerifyPlan{Find: Find})
		if !errors.Is(err, results.ErrUsage) || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("%s: %v; want a usage error containing %q", tt.name, err, tt.want)
		}
	}
	// A part given twice is its requests counted twice: a replay, not a
	// slip of the command line (exit 1).
	_, err := shards.VerifyRun(context.Background(), []*results.ShardResult{a[0], a[0], a[1]}, shards.VerifyPlan{Find: Find})
	if !errors.Is(err, results.ErrReplayed) || errors.Is(err, results.ErrUsage) || !strings.Contains(err.Error(), "shard 0 of run run-a is given twice") {
		t.Errorf("a part twice: %v; want it refused as a replay", err)
	}
	if _, err := shards.VerifyRun(context.Background(), []*results.ShardResult{a[0], a[1]}, shards.VerifyPlan{Find: Find}); err != nil {
		t.Errorf("the parts of one run: %v", err)
	}
}

func TestShardRefusesWhatCannotBeShared(t *testing.T) {
	s := engine.Sharding{Index: 0, Of: 2, RunID: "x"}
	for _, spec := range []string{"kv", "actor", "sqlite"} {
		_, err := shards.RunShard(context.Background(), engine.Plan{Scenario: tenHitsOneView, Targets: []string{spec}, Requests: 4}, s)
		if !errors.Is(err, results.ErrUsage) || !strings.Contains(err.Error(), "lives inside each racelab process") {
			t.Errorf("%s: %v; want a usage error", spec, err)
		}
	}
	path := filepath.Join(t.TempDir(), "db.sqlite")
	streamed := new(*tenHitsOneView)
	streamed.Stream = stalePlan.Stream // a story fired as arrivals over time
	for _, tt := range []struct {
		p    engine.Plan
		s    engine.Sharding
		want string
	}{
		{engine.Plan{Scenario: tenHitsOneView, Targets: []string{"sqlite?path=" + path}, Requests: 1}, s, "cannot share 1 requests"},
		{engine.Plan{Scenario: tenHitsOneView, Targets: []string{"sqlite?path=" + path}, Sequential: true}, s, "Sequential fires"},
		{engine.Plan{Scenario: tenHitsOneView, Targets: []string{"sqlite?path=" + path}}, engine.Sharding{Of: 2, RunID: "a b"}, "RunID \"a b\""},
		{engine.Plan{Scenario: streamed, Targets: []string{"sqlite?path=" + path}}, s, "stream of arrivals"},
	} {
		if _, err := shards.RunShard(context.Background(), tt.p, tt.s); !errors.Is(err, results.ErrUsage) || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("%v; want a usage error containing %q", err, tt.want)
		}
	}
}

// A part whose requests lie outside its share is refused before any
// merge.
func TestCheckShardRefusesDamagedParts(t *testing.T) {
	url := serveContract(t, "sqlite")
	p := engine.Plan{Scenario: tenHitsOneView, Targets: []string{url}, Requests: 6, Trials: 1}
	parts := playShards(t, p, 2, "damaged")
	for name, damage := range map[string]func(s *results.ShardResult){
		"span":    func(s *results.ShardResult) { s.Run.Lo++ },
		"index":   func(s *results.ShardResult) { s.Run.Targets[0].Trials[0].Requests[0].Index = 0 },
		"outcome": func(s *results.ShardResult) { s.Run.Targets[0].Trials[0].Requests[1].Outcome = "maybe" },
		"shard":   func(s *results.ShardResult) { s.Shard = 2 },
		"run id":  func(s *results.ShardResult) { s.RunID = "../x" },
	} {
		c := *parts[1]
		run := *c.Run
		run.Targets = []results.ShardTarget{run.Targets[0]}
		trial := run.Targets[0].Trials[0]
		trial.Requests = append([]results.Request(nil), trial.Requests...)
		run.Targets[0].Trials = []results.ShardTrial{trial}
		c.Run = &run
		damage(&c)
		if err := shards.CheckShard(&c, Find); !errors.Is(err, engine.ErrInconsistent) {
			t.Errorf("%s: %v; want it refused", name, err)
		}
	}
}

// Four shards of one load send exactly the requests asked, their counts
// are summed per key before each key is judged, and their latency
// histograms merge into one that holds every answer.
func TestLoadShardsMergeIntoOneLoad(t *testing.T) {
	url := serveContract(t, "actor")
	start := time.Now().Add(200 * time.Millisecond)
	sched := pace.Constant(200, time.Second)
	parts := make([]*results.ShardResult, 4)
	errs := make([]error, 4)
	var wg sync.WaitGroup
	for i := range 4 {
		wg.Go(func() {
			parts[i], errs[i] = shards.LoadShard(context.Background(), load.LoadPlan{Scenario: tenHitsOneView, Targeting: engine.Targeting{Targets: []string{url}},
				Schedule: &sched, Keys: 10, Seed: 3}, engine.Sharding{Index: i, Of: 4, RunID: "load-merge", StartAt: start})
		})
	}
	wg.Wait()
	var sent, latencies int64
	for i, err := range errs {
		if err != nil {
			t.Fatalf("shard %d: %v", i, err)
		}
		if err := shards.CheckShard(parts[i], Find); err != nil {
			t.Fatalf("shard %d: %v", i, err)
		}
		lt := parts[i].Load.Targets[0]
		if lt.Error != "" || lt.Keys.Trials != 0 || len(lt.KeyCounts) == 0 {
			t.Fatalf("shard %d: error %q, %d keys judged, %d key counts; want no judgement and the counts", i, lt.Error, lt.Keys.Trials, len(lt.KeyCounts))
		}
		sent += lt.Sent
		latencies += lt.Latency.Count
	}
	if sent != 200 {
		t.Errorf("the shards sent %d; a second of 200/s is 200", sent)
	}
	res, err := shards.VerifyLoad(context.Background(), parts, shards.VerifyPlan{Find: Find})
	if err != nil {
		t.Fatal(err)
	}
	lt := res.Targets[0]
	if lt.Error != "" || lt.Sent != 200 || lt.Allowed != 200 || lt.Counted != 200 || lt.Keys.Lost != 0 || lt.Verdict() != "holds" {
		t.Fatalf("merged: error %q, sent %d, allowed %d, counted %d, lost %d, verdict %s (errors %+v); want 200 counted of 200",
			lt.Error, lt.Sent, lt.Allowed, lt.Counted, lt.Keys.Lost, lt.Verdict(), lt.ErrorKinds)
	}
	if lt.Latency.Count != latencies || lt.Latency.Count != lt.Answered {
		t.Errorf("merged histogram holds %d latencies; the shards %d, answers %d", lt.Latency.Count, latencies, lt.Answered)
	}
	// The service answered every hit 200: the merged breakdown by status
	// holds all of them, not the first shard's.
	if got := lt.StatusCodes[200]; got != 200 {
		t.Errorf("merged status codes %v; want 200 ×200, the four shards' together", lt.StatusCodes)
	}
	if err := res.Check(); err != nil {
		t.Errorf("merged load fails its own check: %v", err)
	}
	if res.Sharded == nil || res.Sharded.Shards != 4 || res.Sharded.RunID != "load-merge" {
		t.Errorf("sharded = %+v", res.Sharded)
	}
}
