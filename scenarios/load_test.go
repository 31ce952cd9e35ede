package scenarios

import (
	"context"
	"encoding/json"
	"fmt"
	"net"
	"net/http"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/racelab/racelab/scenarios/engine"
	"github.com/racelab/racelab/scenarios/load"
	"github.com/racelab/racelab/scenarios/pace"
	"github.com/racelab/racelab/scenarios/results"
	"github.com/racelab/racelab/targets"
	"github.com/racelab/racelab/targets/httpapi"
	"github.com/racelab/racelab/targets/httpapi/burst"
	"github.com/racelab/racelab/targets/httpapi/httpapitest"
	"github.com/racelab/racelab/targets/httpapi/server"
)

// serveContract runs the HTTP contract over a store of spec on a loopback
// port, HTTP/1.1 and h2c, as `racelab serve` does.
func serveContract(t *testing.T, spec string) string {
	t.Helper()
	tg, err := targets.Open(context.Background(), spec, targets.WithVirtualTime(false))
	if err != nil {
		t.Fatal(err)
	}
	return serveHandler(t, server.New(tg.Store), func() { tg.Close() })
}

func serveHandler(t *testing.T, h http.Handler, after func()) string {
	t.Helper()
	if after != nil {
		t.Cleanup(after) // registered first, so it runs once the server has stopped
	}
	return httpapitest.Serve(t, h)
}

func mustLoad(t *testing.T, p load.LoadPlan) *results.LoadResult {
	t.Helper()
	if p.Scenario == nil {
		p.Scenario = tenHitsOneView
	}
	res, err := load.Load(context.Background(), p)
	if err != nil {
		t.Fatal(err)
	}
	ranEveryTarget(t, res.Shortfalls())
	return res
}

// ranEveryTarget fails t at the first target racelab could not run or load,
// as a run's or a load's Shortfalls say it: what such a target did proves
// nothing for the test.
func ranEveryTarget(t *testing.T, shortfalls []results.Shortfall) {
	t.Helper()
	for _, s := range shortfalls {
		if s.Kind == results.ErrorShortfall {
			t.Fatal(s.Why)
		}
	}
}

func rate(r pace.Rate) *pace.Schedule {
	return &pace.Schedule{Start: r, Spacing: pace.Even}
}

// TestLoadOpenModelSendsExactlyNAndAtomicStoresCountEvery: the open model
// with --requests sends exactly N; SQLite's upsert and the actor count
// every one, on every key; the verdict holds and nothing falls short.
func TestLoadOpenModelSendsExactlyNAndAtomicStoresCountEvery(t *testing.T) {
	// A request is given a minute: on a busy machine the open model queues
	// on SQLite for seconds, and what this checks is the count, not speed.
	res := mustLoad(t, load.LoadPlan{Targeting: engine.Targeting{Targets: []string{"sqlite", "actor"}, Timeout: time.Minute}, Schedule: rate(2000), Requests: 600, Keys: 7, Seed: 3})
	for _, tg := range res.Targets {
		if tg.Sent != 600 || tg.Allowed != 600 || tg.Counted != 600 || tg.Errors != 0 {
			t.Errorf("%s: sent %d, allowed %d, counted %d, errors %d; want 600, 600, 600, 0", tg.Target, tg.Sent, tg.Allowed, tg.Counted, tg.Errors)
		}
		if tg.Keys.Trials != 7 || tg.Keys.Broken != 0 || tg.Keys.Lost != 0 || tg.Verdict() != "holds" {
			t.Errorf("%s: keys %+v, verdict %s", tg.Target, tg.Keys, tg.Verdict())
		}
		if tg.Latency.Count != 600 || tg.Latency.P50 <= 0 || tg.Latency.P99 < tg.Latency.P50 || tg.Latency.Max < tg.Latency.P99 {
			t.Errorf("%s: latency %+v", tg.Target, tg.Latency)
		}
		if len(tg.Series) == 0 || tg.Histogram == "" {
			t.Errorf("%s: no series or histogram", tg.Target)
		}
	}
	if fs := res.Shortfalls(); len(fs) != 0 {
		t.Errorf("shortfalls %v", fs)
	}
}

// TestLoadShowsLostUpdatesOnKV: under load the naive KV store loses
// updates on hot keys, the judge says so per key, and a target made to
// hold fails the load as a run would (exit 3's shortfall).
func TestLoadShowsLostUpdatesOnKV(t *testing.T) {
	res := mustLoad(t, load.LoadPlan{Targeting: engine.Targeting{Targets: []string{"kv"}}, Concurrency: 20, Requests: 300, Keys: 3, Seed: 1})
	tg := res.Targets[0]
	if tg.Keys.Lost == 0 || tg.Counted >= tg.Allowed || tg.Verdict() != "broken" {
		t.Fatalf("kv under load: allowed %d, counted %d, lost %d, verdict %s; want updates lost", tg.Allowed, tg.Counted, tg.Keys.Lost, tg.Verdict())
	}
	if !strings.Contains(tg.WorstKey.Why, "lost") || tg.WorstKey.Lost <= 0 {
		t.Errorf("worst key %+v", tg.WorstKey)
	}
	if fs := res.Shortfalls(); len(fs) != 0 {
		t.Errorf("kv is expected to break, yet %v", fs)
	}
	res = mustLoad(t, load.LoadPlan{Targeting: engine.Targeting{Targets: []string{"kv"}, Expect: engine.OverrideHold}, Concurrency: 20, Requests: 300, Keys: 3, Seed: 1})
	if fs := res.Shortfalls(); len(fs) != 1 || fs[0].Kind != results.RuleShortfall || !strings.Contains(fs[0].Why, "the rule broke on") {
		t.Errorf("kv made to hold: shortfalls %v", fs)
	}
}

// TestLoadQuotaOverHTTPNeverOverGrants is the six-become-four
// check, smaller: a closed load on the contract served over the actor
// grants each visitor exactly its five downloads and refuses the rest.
func TestLoadQuotaOverHTTPNeverOverGrants(t *testing.T) {
	base := serveContract(t, "actor")
	for _, h2 := range []bool{false, true} {
		res := mustLoad(t, load.LoadPlan{Scenario: sixBecomeFour, Targeting: engine.Targeting{Targets: []string{base}, Options: []targets.Option{targets.WithHTTP(httpapi.Config{Wire: burst.Config{Sync: httpapi.SyncNone, HTTP2: h2}})}}, Concurrency: 16, Requests: 400, Keys: 10, Seed: 2})
		tg := res.Targets[0]
		if tg.Keys.Over != 0 || tg.Allowed != 10*dailyLimit || tg.Refused != 400-10*dailyLimit || tg.Errors != 0 {
			t.Errorf("h2=%t: allowed %d, refused %d, over %d, errors %d (%v); want 50 granted, 350 refused, none over",
				h2, tg.Allowed, tg.Refused, tg.Keys.Over, tg.Errors, tg.ErrorKinds)
		}
		if fs := res.Shortfalls(); len(fs) != 0 {
			t.Errorf("h2=%t: %v", h2, fs)
		}
	}
}

// TestLoadOpenModelCorrectsCoordinatedOmission: a server that stalls
// every request arriving in a window holds the closed model's workers,
// which then send nothing; the open model keeps its schedule, so every
// arrival due during the stall waits and its latency says so. The
// assertion is a lower bound: a slower machine only makes it larger.
func TestLoadOpenModelCorrectsCoordinatedOmission(t *testing.T) {
	const stall = 400 * time.Millisecond
	var start atomic.Int64
	h := server.New(mustOpen(t, "actor"))
	base := serveHandler(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method == http.MethodPost {
			s := start.Load()
			if s == 0 {
				start.CompareAndSwap(0, time.Now().UnixNano())
				s = start.Load()
			}
			// Requests from 200 ms after the first one wait until the stall ends.
			from, until := time.Unix(0, s).Add(200*time.Millisecond), time.Unix(0, s).Add(200*time.Millisecond+stall)
			if now := time.Now(); now.After(from) && now.Before(until) {
				time.Sleep(time.Until(until))
			}
		}
		h.ServeHTTP(w, r)
	}), nil)
	res := mustLoad(t, load.LoadPlan{Targeting: engine.Targeting{Targets: []string{base}, Options: []targets.Option{targets.WithHTTP(httpapi.Config{Wire: burst.Config{Sync: httpapi.SyncNone}})}}, Schedule: rate(200), Requests: 200, Keys: 5, Seed: 4})
	tg := res.Targets[0]
	// 200/s over a 400 ms stall is 80 arrivals due during it; the first
	// of them waits the whole stall, the one due 100 ms before its end at
	// least 100 ms. So at least 60 answers (30%) took 100 ms or more, and
	// the p90 shows it.
	if tg.Latency.P90 < 100*time.Millisecond || tg.Latency.Max < stall*3/4 {
		t.Errorf("open model through a %s stall: p90 %s, max %s; want p90 ≥ 100ms and max ≥ 300ms", stall, tg.Latency.P90, tg.Latency.Max)
	}
	if tg.Sent != 200 {
		t.Errorf("sent %d, want 200", tg.Sent)
	}
}

func mustOpen(t *testing.T, spec string) any {
	t.Helper()
	tg, err := targets.Open(context.Background(), spec, targets.WithVirtualTime(false))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { tg.Close() })
	return tg.Store
}

// TestLoadSortsErrorsByKind: a service answering 503 to some requests and
// garbage to others, then one that is gone: each failure counted under its
// kind, none passing for an answer, and the keys inconclusive.
func TestLoadSortsErrorsByKind(t *testing.T) {
	var n atomic.Int64
	h := server.New(mustOpen(t, "actor"))
	base := serveHandler(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method == http.MethodPost {
			switch n.Add(1) % 10 {
			case 3:
				http.Error(w, "busy", http.StatusServiceUnavailable)
				return
			case 7:
				w.Header().Set("Content-Type", "application/json")
				fmt.Fprint(w, `{"views": "many"}`)
				return
			}
		}
		h.ServeHTTP(w, r)
	}), nil)
	opts := []targets.Option{targets.WithHTTP(httpapi.Config{Wire: burst.Config{Sync: httpapi.SyncNone}})}
	res := mustLoad(t, load.LoadPlan{Targeting: engine.Targeting{Targets: []string{base}, Options: opts}, Concurrency: 4, Requests: 100, Keys: 2})
	tg := res.Targets[0]
	kinds := map[string]int64{}
	for _, k := range tg.ErrorKinds {
		kinds[k.Kind] = k.Count
	}
	if kinds["status 503"] != 10 || kinds[load.KindContract] != 10 || tg.Errors != 20 || tg.Answered != 80 {
		t.Errorf("error kinds %v, errors %d, answered %d; want 10 status 503, 10 outside the contract", tg.ErrorKinds, tg.Errors, tg.Answered)
	}
	if tg.Verdict() != "inconclusive" {
		t.Errorf("verdict %s: keys with failed requests prove nothing", tg.Verdict())
	}
	res, err := load.Load(context.Background(), load.LoadPlan{Scenario: tenHitsOneView, Targeting: engine.Targeting{Targets: []string{"http://127.0.0.1:1"}, Options: opts}, Concurrency: 2, Requests: 4})
	if err != nil {
		t.Fatal(err)
	}
	if tg := res.Targets[0]; tg.Error == "" || !strings.Contains(tg.Error, "refused") {
		t.Errorf("nothing listening: error %q", tg.Error)
	}
}

// TestLoadThresholds parses, judges and re-checks thresholds.
func TestLoadThresholds(t *testing.T) {
	tg := &results.LoadTarget{Sent: 1000, Answered: 990, Allowed: 990, Errors: 10, Elapsed: 10 * time.Second,
		Latency: results.Latency{Count: 990, P50: 3 * time.Millisecond, P99: 260 * time.Millisecond, Max: time.Second},
		Keys:    results.Tally{Trials: 4, Lost: 2, Broken: 1}}
	for expr, want := range map[string]bool{
		"p99<250ms": false, "p99<=260ms": true, "p50 < 5ms": true, "errors<1%": false, "errors<=1%": true,
		"errors<11": true, "lost==0": false, "lost<=2": true, "rps>=99": true, "rps>100": false, "broken!=0": true, "max>1s": false,
	} {
		th, err := results.ParseThreshold(expr)
		if err != nil {
			t.Errorf("%s: %v", expr, err)
			continue
		}
		r := th.Check(tg, "x")
		if r.Passed != want {
			t.Errorf("%s on p99 260ms, 1%% errors, 2 lost, 99/s: passed %t, want %t (%s)", expr, r.Passed, want, r.Actual)
		}
		if !r.Passed && !strings.Contains(r.Why, th.Expr) {
			t.Errorf("%s: why %q does not name it", expr, r.Why)
		}
	}
	for _, bad := range []string{"", "p99", "p99<", "p101<1s", "p99<fast", "errors<101%", "lost==-1", "rps>=x", "<5"} {
		if _, err := results.ParseThreshold(bad); err == nil {
			t.Errorf("%q was taken", bad)
		}
	}
	// No answers at all must not pass a latency bound.
	th, _ := results.ParseThreshold("p99<1s")
	if th.Check(&results.LoadTarget{Sent: 5, Errors: 5}, "x").Passed {
		t.Error("p99<1s passed with no answers")
	}
}

// TestLoadResultChecks: a saved load result whose verdicts contradict its
// figures is refused.
func TestLoadResultChecks(t *testing.T) {
	res := mustLoad(t, load.LoadPlan{Targeting: engine.Targeting{Targets: []string{"kv"}}, Concurrency: 8, Requests: 100, Keys: 2, Seed: 5,
		Thresholds: []results.Threshold{mustThreshold(t, "lost==0"), mustThreshold(t, "errors<1%")}})
	if err := res.Check(); err != nil {
		t.Fatalf("a fresh result: %v", err)
	}
	tg := res.Targets[0]
	if tg.Thresholds[0].Passed || !tg.Thresholds[1].Passed {
		t.Fatalf("thresholds %+v: want lost==0 missed, errors<1%% met", tg.Thresholds)
	}
	if fs := res.Shortfalls(); len(fs) != 1 || fs[0].Kind != results.ThresholdShortfall {
		t.Fatalf("shortfalls %v: want the missed threshold", fs)
	}
	b, _ := json.Marshal(res)
	for name, edit := range map[string]func(*results.LoadResult){
		"threshold forged":  func(r *results.LoadResult) { r.Targets[0].Thresholds[0].Passed = true },
		"lost hidden":       func(r *results.LoadResult) { r.Targets[0].Keys.Broken = 0 },
		"answers invented":  func(r *results.LoadResult) { r.Targets[0].Answered++ },
		"latencies dropped": func(r *results.LoadResult) { r.Targets[0].Latency.Count = 0 },
	} {
		var r results.LoadResult
		if err := json.Unmarshal(b, &r); err != nil {
			t.Fatal(err)
		}
		edit(&r)
		if err := r.Check(); err == nil {
			t.Errorf("%s: taken", name)
		}
	}
}

func mustThreshold(t *testing.T, s string) results.Threshold {
	t.Helper()
	th, err := results.ParseThreshold(s)
	if err != nil {
		t.Fatal(err)
	}
	return th
}

// TestLoadUsage: what cannot be loaded is refused before anything runs.
func TestLoadUsage(t *testing.T) {
	for name, p := range map[string]load.LoadPlan{
		"no scenario":    {},
		"negative keys":  {Scenario: tenHitsOneView, Keys: -1},
		"too many keys":  {Scenario: tenHitsOneView, Keys: load.MaxLoadKeys + 1},
		"empty schedule": {Scenario: tenHitsOneView, Schedule: &pace.Schedule{Start: 0.01, Stages: []pace.Stage{{Duration: time.Second, Target: 0.01}}}},
		"unknown target": {Scenario: tenHitsOneView, Targeting: engine.Targeting{Targets: []string{"nosuch"}}},
	} {
		if _, err := load.Load(context.Background(), p); err == nil {
			t.Errorf("%s: taken", name)
		}
	}
	if _, err := results.ParseKeyDist("zipf:1"); err == nil {
		t.Error("zipf:1 taken (rand.Zipf needs s > 1)")
	}
	if d, err := results.ParseKeyDist("zipf:1.5"); err != nil || d.Zipf != 1.5 {
		t.Errorf("zipf:1.5 = %v, %v", d, err)
	}
}

// BenchmarkLoadClosedHTTP is the closed model's cost per request against
// the contract over SQLite on loopback, client and server in one process:
// go test -run '^$' -bench LoadClosedHTTP -cpuprofile cpu.out ./scenarios
func BenchmarkLoadClosedHTTP(b *testing.B) {
	tg, err := targets.Open(context.Background(), "sqlite")
	if err != nil {
		b.Fatal(err)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		b.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- server.Server{Handler: server.New(tg.Store)}.Serve(ctx, ln) }()
	defer func() { cancel(); <-done; tg.Close() }()
	b.ResetTimer()
	res, err := load.Load(context.Background(), load.LoadPlan{Scenario: tenHitsOneView, Targeting: engine.Targeting{Targets: []string{"http://" + ln.Addr().String()}, Options: []targets.Option{targets.WithHTTP(httpapi.Config{Wire: burst.Config{Sync: httpapi.SyncNone}})}},
		Concurrency: 50, Requests: int64(b.N), Keys: 1000,
	})
	if err != nil || res.Targets[0].Error != "" {
		b.Fatal(err, res.Targets[0].Error)
	}
	b.ReportMetric(res.Targets[0].Throughput(), "req/s")
}
