package shards

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"reflect"
	"slices"
	"strings"
	"time"

	hdrhistogram "github.com/HdrHistogram/hdrhistogram-go"

	"github.com/racelab/racelab/internal/usage"
	"github.com/racelab/racelab/scenarios/engine"
	"github.com/racelab/racelab/scenarios/load"
	"github.com/racelab/racelab/scenarios/results"
	"github.com/racelab/racelab/targets"
)

// LoadShard plays shard s of a load: its share of the workers, requests
// or rate, from the agreed start, with no read-back and no verdict.
func LoadShard(ctx context.Context, p load.LoadPlan, s engine.Sharding) (*results.ShardResult, error) {
	p.Sharding = &s
	res, err := load.Load(ctx, p)
	if err != nil {
		return nil, err
	}
	out := &results.ShardResult{Schema: results.ShardSchemaVersion, Kind: results.ShardLoad, RunID: s.RunID, Shard: s.Index, Shards: s.Of, Host: s.Host, Load: res}
	if !s.StartAt.IsZero() {
		at := s.StartAt
		out.StartAt = &at
	}
	return out, nil
}

// VerifyPlan says how to read a sharded run's keys back.
type VerifyPlan struct {
	// Targeting's Targets, when set, replace the specs the shards
	// recorded, one for each of their targets, in order: the service as
	// the verifier reaches it, or a URL with the password the parts left
	// out. Its Timeout bounds each read-back, and its Expect and
	// ExpectOf are the verifier's expectations of the targets: what a
	// part claims it expected is never taken, since a part can be edited
	// and the verifier is the one CI trusts.
	engine.Targeting
	// Evidence and Keep are a run's (Plan.Evidence, Plan.Keep).
	Evidence engine.Evidence
	Keep     results.Keep
	// Find looks the parts' story up by name.
	Find engine.Finder
}

// gather puts the parts of one sharded run in shard order, refusing parts
// that do not make one run together: other kinds, other run ids, other
// shard counts or starts, a shard given twice or missing. Every such
// refusal is a usage error that names the two parts that differ. same
// then checks each part against shard 0 for what the parts of its kind
// share (a run's scenario and targets, a load's plan).
func gather(parts []*results.ShardResult, kind results.ShardKind, same func(first, s *results.ShardResult) error) ([]*results.ShardResult, error) {
	if len(parts) == 0 {
		return nil, fmt.Errorf("%w: no shard results to merge", results.ErrUsage)
	}
	first := parts[0]
	byIndex := make([]*results.ShardResult, first.Shards)
	for _, s := range parts {
		differ := func(what, a, b string) error {
			return fmt.Errorf("%w: cannot merge shard %d of %s with shard %d of %s: %s %s and %s; merge the parts of one run",
				results.ErrUsage, first.Shard, first.RunID, s.Shard, s.RunID, what, a, b)
		}
		switch {
		case s.Kind != kind:
			return nil, fmt.Errorf("%w: shard %d of run %s is a %s part; want the parts of a %s", results.ErrUsage, s.Shard, s.RunID, s.Kind, kind)
		case kind == results.ShardRun && s.Run == nil, kind == results.ShardLoad && (s.Load == nil || len(s.Load.Targets) != 1):
			// Unchecked parts (CheckShard refuses these) must not panic.
			return nil, fmt.Errorf("%w: shard %d of run %s is labelled %s but does not hold one", engine.ErrInconsistent, s.Shard, s.RunID, kind)
		case s.Shards != first.Shards:
			return nil, differ("shard counts", fmt.Sprint(first.Shards), fmt.Sprint(s.Shards))
		case s.Shard < 0 || s.Shard >= first.Shards:
			return nil, fmt.Errorf("%w: shard %d of %d", engine.ErrInconsistent, s.Shard, first.Shards)
		case s.RunID != first.RunID:
			return nil, differ("run ids", first.RunID, s.RunID)
		case s.Shards != first.Shards:
			return nil, differ("shard counts", fmt.Sprint(first.Shards), fmt.Sprint(s.Shards))
		case !sameInstant(s.StartAt, first.StartAt) || s.Period != first.Period:
			return nil, differ("starts", startOf(first), startOf(s))
		case byIndex[s.Shard] != nil:
			// Not a slip of the command line only: a part counted twice
			// is evidence counted twice, refused as a replay.
			return nil, fmt.Errorf("%w: shard %d of run %s is given twice; each part counts once", results.ErrReplayed, s.Shard, s.RunID)
		}
		byIndex[s.Shard] = s
	}
	var missing []string
	for i, s := range byIndex {
		if s == nil {
			missing = append(missing, fmt.Sprint(i))
		}
	}
	if len(missing) > 0 {
		return nil, fmt.Errorf("%w: run %s has %d shards; shard %s missing: a merge needs every part to judge whole bursts",
			results.ErrUsage, first.RunID, first.Shards, strings.Join(missing, ", "))
	}
	for _, s := range byIndex[1:] {
		if err := same(byIndex[0], s); err != nil {
			return nil, err
		}
	}
	return byIndex, nil
}

func sameInstant(a, b *time.Time) bool {
	return a == nil && b == nil || a != nil && b != nil && a.Equal(*b)
}

func startOf(s *results.ShardResult) string {
	if s.StartAt == nil {
		return "none"
	}
	return fmt.Sprintf("%s every %s", s.StartAt.Format(time.RFC3339Nano), s.Period)
}

func originOf(ps []*results.ShardResult) *results.ShardOrigin {
	o := &results.ShardOrigin{RunID: ps[0].RunID, Shards: ps[0].Shards, StartAt: ps[0].StartAt}
	for _, s := range ps {
		if s.Host != "" && !slices.Contains(o.Hosts, s.Host) {
			o.Hosts = append(o.Hosts, s.Host)
		}
	}
	return o
}

// oneHost reports whether every shard ran on the same named machine, so
// that their instants were read off one clock.
func oneHost(ps []*results.ShardResult) bool {
	for _, s := range ps {
		if s.Host == "" || s.Host != ps[0].Host {
			return false
		}
	}
	return true
}

// verifySpecs is the target specs to read back: the parts' own, or the
// plan's in their place, one for one.
func verifySpecs(recorded []string, v VerifyPlan) ([]string, error) {
	if len(v.Targets) == 0 {
		return recorded, nil
	}
	if len(v.Targets) != len(recorded) {
		return nil, usage.Fieldf("Targets", "the shards ran %d targets (%s); give {} once for each, in order, or not at all",
			len(recorded), strings.Join(recorded, ", "))
	}
	return v.Targets, nil
}

// sameTargets refuses a read-back target that is not the one the parts
// ran, seen from here: a URL for a URL (the service as this machine
// reaches it), the same store and strategy for a store (its password or
// address may differ). Reading a URL's keys back from an in-process kv
// would find nothing and judge an empty store.
func sameTargets(cat *targets.Catalog, recorded []string, given []engine.Resolved) error {
	if cat == nil {
		cat = targets.Builtin()
	}
	for i, r := range given {
		spec, _, err := cat.Lookup(recorded[i])
		if err != nil {
			return fmt.Errorf("%w: the parts ran target %q, which this racelab does not know: %v", engine.ErrInconsistent, recorded[i], err)
		}
		if (spec.URL != nil) != (r.Spec.URL != nil) || spec.URL == nil && spec.Name() != r.Spec.Name() {
			return usage.Fieldf("Targets", "{} %s: the parts ran %s there; read back from the same target as this machine reaches it", cmp.Or(r.Raw, r.Spec.Name()), spec.Name())
		}
	}
	return nil
}

// openFor opens the targets the keys are read back from: the specs the
// parts recorded, or the plan's in their place (verifySpecs).
func openFor(ctx context.Context, sc *engine.Scenario, recorded []string, v VerifyPlan) ([]engine.Resolved, []*targets.Target, []error, error) {
	specs, err := verifySpecs(recorded, v)
	if err != nil {
		return nil, nil, nil, err
	}
	plan := engine.Plan{Scenario: sc, Catalog: v.Catalog, Targets: specs, Expect: v.Expect, ExpectOf: v.ExpectOf}
	rs, err := plan.Resolve()
	if err != nil {
		return nil, nil, nil, err
	}
	if err := sameTargets(v.Catalog, recorded, rs); err != nil {
		return nil, nil, nil, err
	}
	opts := append([]targets.Option{targets.WithVirtualTime(false)}, v.Options...)
	opened := make([]*targets.Target, len(rs))
	openErr := make([]error, len(rs))
	for i, r := range rs {
		opened[i], openErr[i] = targets.OpenEntry(ctx, r.Spec, r.Entry, r.Options(opts)...)
		if errors.Is(openErr[i], targets.ErrBadSpec) {
			engine.CloseAll(opened)
			return nil, nil, nil, openErr[i]
		}
	}
	return rs, opened, openErr, nil
}

// VerifyRun merges the parts of a sharded run into one result, as one
// process would have written it: each trial's requests from every shard
// make one burst of N, every key is read back against the target, and
// each trial is judged by the story's Judge (and its history checked,
// when every shard ran on one machine: across machines the requests'
// instants come from different clocks, and a clock error would pass for
// a break). A part's target error, or a trial some shard did not finish,
// makes the target an error, as in a run.
func VerifyRun(ctx context.Context, parts []*results.ShardResult, v VerifyPlan) (*results.Result, error) {
	ps, err := gather(parts, results.ShardRun, sameRun)
	if err != nil {
		return nil, err
	}
	first := ps[0].Run
	sc, err := v.Find(first.Scenario, first.Settings)
	if err != nil {
		return nil, err
	}
	rs, opened, openErr, err := openFor(ctx, sc, Recorded(ps[0]), v)
	if err != nil {
		return nil, err
	}
	defer engine.CloseAll(opened)
	timeout := cmp.Or(v.Timeout, first.Timeout, engine.DefaultTimeout)
	res := &results.Result{Schema: results.SchemaVersion, RunID: results.NewRunID(), Scenario: sc.Name, Rule: sc.Rule, Requests: first.Requests, Trials: first.Trials,
		Seed: first.Seed, Confidence: v.Evidence.Level(), Sharded: originOf(ps), Figures: sc.Figures, MaxSpread: v.Evidence.SpreadBound()}
	history := oneHost(ps)
	for ti := range first.Targets {
		t0 := &first.Targets[ti]
		tr := results.TargetResult{Target: t0.Target, Spec: t0.Spec, Guarantee: t0.Guarantee, Clock: results.ClockReal}
		tr.Expect, tr.Strict = engine.ExpectationOf(rs[ti].Entry, rs[ti].Expect)
		complete := first.Trials
		var errs []string
		for _, s := range ps {
			t := &s.Run.Targets[ti]
			complete = min(complete, len(t.Trials))
			if t.Error != "" {
				errs = append(errs, fmt.Sprintf("shard %d: %s", s.Shard, t.Error))
			}
		}
		rec := results.NewRecorder(&tr, v.Keep)
		err := openErr[ti]
		if err == nil {
			pl, ok := sc.Bind(opened[ti].Store)
			if !ok {
				return nil, sc.CannotPlay(rs[ti].Spec.Name())
			}
			err = mergeTrials(ctx, sc, pl, ps, ti, complete, timeout, history, v.Evidence, rec)
		}
		if err != nil {
			errs = append(errs, err.Error())
		} else if complete < first.Trials && len(errs) == 0 && ctx.Err() == nil && !slices.ContainsFunc(ps, func(s *results.ShardResult) bool { return s.Run.Interrupted }) {
			errs = append(errs, fmt.Sprintf("only %d of %d trials were fired by every shard", complete, first.Trials))
		}
		tr.Error = strings.Join(errs, "; ")
		rec.Finish(v.Evidence.Level(), 0)
		res.Targets = append(res.Targets, tr)
	}
	for _, s := range ps {
		res.Interrupted = res.Interrupted || s.Run.Interrupted
	}
	res.Interrupted = res.Interrupted || ctx.Err() != nil
	return res, nil
}

// Recorded is the target specs a part ran, in order: where a merge reads
// its keys back unless told otherwise.
func Recorded(p *results.ShardResult) []string {
	var out []string
	switch {
	case p.Run != nil:
		for _, t := range p.Run.Targets {
			out = append(out, t.Spec)
		}
	case p.Load != nil:
		for _, t := range p.Load.Targets {
			out = append(out, t.Spec)
		}
	}
	return out
}

// sameRun refuses to merge a run's part s with shard 0's, first, unless
// they played one plan: the same story, burst, trials and targets.
func sameRun(first, s *results.ShardResult) error {
	a, r := first.Run, s.Run
	if r.Scenario != a.Scenario || !reflect.DeepEqual(r.Settings, a.Settings) || r.Requests != a.Requests || r.Trials != a.Trials || len(r.Targets) != len(a.Targets) {
		return fmt.Errorf("%w: cannot merge shard %d (%s, N=%d, %d trials, %d targets) with shard %d (%s, N=%d, %d trials, %d targets) of run %s",
			results.ErrUsage, first.Shard, a.Scenario, a.Requests, a.Trials, len(a.Targets),
			s.Shard, r.Scenario, r.Requests, r.Trials, len(r.Targets), s.RunID)
	}
	for i := range r.Targets {
		if ta, tb := a.Targets[i], r.Targets[i]; ta.Spec != tb.Spec {
			return fmt.Errorf("%w: shard %d ran target %s where shard %d ran %s", results.ErrUsage, s.Shard, tb.Spec, first.Shard, ta.Spec)
		}
	}
	return nil
}

// mergeTrials makes the first complete trials of target ti whole, reads
// each key back and judges it into rec.
func mergeTrials(ctx context.Context, sc *engine.Scenario, pl engine.Player, ps []*results.ShardResult, ti, complete int, timeout time.Duration, history bool, ev engine.Evidence, rec *results.Recorder) error {
	n := ps[0].Run.Requests
	for i := range complete {
		k := ps[0].Run.Targets[ti].Trials[i].Key
		trial := results.Trial{Index: i, Key: k, Requests: make([]results.Request, 0, n)}
		var arrivals []time.Time
		withArrivals := true
		for _, s := range ps {
			st := &s.Run.Targets[ti].Trials[i]
			if st.Key != k {
				return fmt.Errorf("trial %d: shard %d fired on %s, shard %d on %s: not one run", i, ps[0].Shard, k, s.Shard, st.Key)
			}
			trial.Requests = append(trial.Requests, st.Requests...)
			trial.Retries += st.Retries
			withArrivals = withArrivals && st.Arrivals != nil
			for _, a := range st.Arrivals {
				arrivals = append(arrivals, time.Unix(0, a))
			}
		}
		if !withArrivals {
			arrivals = nil
		}
		if pl.Rejoin != nil {
			whole, err := rejoin(ps, ti, i)
			if err != nil {
				return err
			}
			pl.Rejoin(k, whole)
		}
		trial.ReleaseSpread = engine.ReleaseSpread(trial.Requests)
		trial.ArrivalSpread = engine.ArrivalSpread(arrivals)
		trial.Count()
		trial.NotSimultaneous = ev.Scattered(trial.ReleaseSpread)
		if trial.Errors == n {
			return &engine.TargetError{Stage: "every request failed; first: " + trial.Requests[0].Error}
		}
		rctx, cancel := context.WithTimeout(ctx, timeout)
		counted, err := pl.Read(rctx, k)
		cancel()
		if err != nil {
			if ctx.Err() != nil {
				return nil
			}
			return &engine.TargetError{Stage: "read back " + k, Err: err}
		}
		trial.Counted = counted
		if pl.Readback != nil {
			trial.Readback = pl.Readback(k)
		}
		label := ps[0].Run.Targets[ti].Target
		sc.Judge(&trial, label)
		if history {
			engine.RecordHistory(sc, &trial, label, ev)
		}
		rec.Add(trial)
	}
	return nil
}

// rejoin puts trial i's shares of target ti together, in shard order as
// the requests are: every shard's answers, and what the setup captured
// (shard 0 ran it). A share missing, or short of its shard's requests,
// would have the rule judge answers that are not the burst's.
func rejoin(ps []*results.ShardResult, ti, i int) (*results.Readback, error) {
	whole := &results.Readback{Bodies: map[string]json.RawMessage{}}
	for _, s := range ps {
		part := s.Run.Targets[ti].Trials[i].Readback
		if part == nil {
			part = &results.Readback{}
		}
		if n := s.Run.Hi - s.Run.Lo; len(part.Answers) != n {
			return nil, fmt.Errorf("%w: shard %d: trial %d keeps %d answers of its %d requests; the rule judges them all",
				engine.ErrInconsistent, s.Shard, i, len(part.Answers), n)
		}
		whole.Answers = append(whole.Answers, part.Answers...)
		maps.Copy(whole.Bodies, part.Bodies)
	}
	return whole, nil
}

// VerifyLoad merges the parts of a sharded load into one result: the
// counts summed, the latency histograms merged exactly (HdrHistogram), the
// seconds added up, and every key's counts summed over the shards before
// it is read back and judged, as one process's load would be. The
// thresholds the parts carry are checked again on the whole.
func VerifyLoad(ctx context.Context, parts []*results.ShardResult, v VerifyPlan) (*results.LoadResult, error) {
	ps, err := gather(parts, results.ShardLoad, sameLoad)
	if err != nil {
		return nil, err
	}
	first := ps[0].Load
	sc, err := v.Find(first.Scenario, nil)
	if err != nil {
		return nil, err
	}
	var ths []results.Threshold
	for _, expr := range first.Thresholds {
		th, err := results.ParseThreshold(expr)
		if err != nil {
			return nil, err
		}
		ths = append(ths, th)
	}
	rs, opened, openErr, err := openFor(ctx, sc, Recorded(ps[0]), v)
	if err != nil {
		return nil, err
	}
	defer engine.CloseAll(opened)
	res := *first
	res.Targets, res.Sharded = nil, originOf(ps)
	res.RunID, res.RunIDs = results.NewRunID(), nil // a part's id is not the merged load's
	res.Uncounted = sc.Settings.Uncounted()         // the file's, not what a part says
	for _, s := range ps[1:] {
		res.Interrupted = res.Interrupted || s.Load.Interrupted
	}
	lt, counts, err := sumLoads(ps)
	if err != nil {
		return nil, err
	}
	lt.Expect, lt.Strict = engine.ExpectationOf(rs[0].Entry, rs[0].Expect)
	if lt.Error == "" && openErr[0] != nil {
		lt.Error = openErr[0].Error()
	}
	if lt.Error == "" && !res.Interrupted {
		pl, ok := sc.Bind(opened[0].Store)
		if !ok {
			return nil, sc.CannotPlay(rs[0].Spec.Name())
		}
		runID := ps[0].RunID
		kr := load.KeyReadback{Scenario: sc, Player: pl, Store: opened[0].Store, Label: lt.Target, Keys: first.Keys,
			Timeout: cmp.Or(v.Timeout, first.Timeout, engine.DefaultTimeout),
			Key:     func(k int) string { return load.KeyName(sc, runID, 0, k) },
			Count:   func(k int) (int64, int64, int64) { c := counts[k]; return c.Allowed, c.Refused, c.Errors }}
		if err := kr.Run(ctx, &lt); err != nil {
			lt.Error = err.Error()
		}
	}
	res.Interrupted = res.Interrupted || ctx.Err() != nil
	if lt.Error == "" && !res.Interrupted {
		for _, th := range ths {
			lt.Thresholds = append(lt.Thresholds, th.Check(&lt, lt.Target))
		}
	}
	res.Targets = []results.LoadTarget{lt}
	return &res, nil
}

// sameLoad refuses to merge a load's part s with shard 0's, first,
// unless they played one plan.
func sameLoad(first, s *results.ShardResult) error {
	a, l := first.Load, s.Load
	if l.Scenario != a.Scenario || l.Model != a.Model || l.Keys != a.Keys || l.KeyDist != a.KeyDist ||
		l.Duration != a.Duration || l.Requests != a.Requests || l.Concurrency != a.Concurrency ||
		!slices.Equal(l.Thresholds, a.Thresholds) || len(l.Targets) != 1 || l.Targets[0].Spec != a.Targets[0].Spec {
		return fmt.Errorf("%w: cannot merge shard %d (%s) with shard %d (%s) of run %s: the parts of one load share its scenario, model, keys, length, target and thresholds",
			results.ErrUsage, first.Shard, describeLoad(a), s.Shard, describeLoad(l), s.RunID)
	}
	return nil
}

func describeLoad(l *results.LoadResult) string {
	spec := ""
	if len(l.Targets) > 0 {
		spec = l.Targets[0].Spec
	}
	return fmt.Sprintf("%s %s load, %d keys %s, %s, %d requests, %d workers, on %s, thresholds %v",
		l.Scenario, l.Model, l.Keys, l.KeyDist, l.Duration, l.Requests, l.Concurrency, spec, l.Thresholds)
}

// sumLoads adds up the shards' figures of their one target, and each
// key's counts.
func sumLoads(ps []*results.ShardResult) (results.LoadTarget, map[int]results.KeyCount, error) {
	t0 := ps[0].Load.Targets[0]
	lt := results.LoadTarget{Target: t0.Target, Spec: t0.Spec, Guarantee: t0.Guarantee}
	// A map, not a slice of every key: a part says how many keys there
	// were, and only the keys it counted are worth the memory.
	counts := map[int]results.KeyCount{}
	var hist *hdrhistogram.Histogram
	kinds := map[string]*results.ErrorCount{}
	var kindOrder []string
	var errs []string
	for _, s := range ps {
		t := &s.Load.Targets[0]
		if t.Error != "" {
			errs = append(errs, fmt.Sprintf("shard %d: %s", s.Shard, t.Error))
		}
		lt.Elapsed, lt.Sending = max(lt.Elapsed, t.Elapsed), max(lt.Sending, t.Sending)
		lt.Sent += t.Sent
		lt.Answered += t.Answered
		lt.Allowed += t.Allowed
		lt.Refused += t.Refused
		lt.Errors += t.Errors
		lt.Late += t.Late
		lt.Dropped += t.Dropped
		for _, c := range t.KeyCounts {
			sum := counts[c.Key]
			sum.Allowed += c.Allowed
			sum.Refused += c.Refused
			sum.Errors += c.Errors
			counts[c.Key] = sum
		}
		for _, k := range t.ErrorKinds {
			if kinds[k.Kind] == nil {
				c := k
				c.Count = 0
				kinds[k.Kind] = &c
				kindOrder = append(kindOrder, k.Kind)
			}
			kinds[k.Kind].Count += k.Count
		}
		lt.Series = addSeconds(lt.Series, t.Series)
		for code, n := range t.StatusCodes {
			if lt.StatusCodes == nil {
				lt.StatusCodes = map[int]int64{}
			}
			lt.StatusCodes[code] += n
		}
		// Each shard's samples are its own requests: together, a sample of
		// the whole load, each shard's share in its own order.
		lt.Samples = append(lt.Samples, t.Samples...)
		if t.Histogram == "" {
			continue
		}
		h, err := load.DecodeHistogram(t.Histogram)
		if err != nil {
			return lt, nil, fmt.Errorf("%w: shard %d: histogram: %w", engine.ErrInconsistent, s.Shard, err)
		}
		if hist == nil {
			hist = load.NewHistogram()
		}
		hist.Merge(h)
	}
	if hist != nil {
		lt.Latency, lt.Histogram, lt.Buckets = load.Summarize(hist)
	}
	for _, k := range kindOrder {
		lt.ErrorKinds = append(lt.ErrorKinds, *kinds[k])
	}
	slices.SortStableFunc(lt.ErrorKinds, func(a, b results.ErrorCount) int { return cmp.Compare(b.Count, a.Count) })
	lt.Error = strings.Join(errs, "; ")
	return lt, counts, nil
}

// addSeconds adds one shard's seconds into the sum so far. Answers and
// errors add up exactly; a second's percentiles cannot be merged from
// percentiles, so each is the highest of the shards' (an upper bound, as
// Max is exact), while the load's own percentiles come from the merged
// histogram and are exact.
func addSeconds(sum, part []results.Second) []results.Second {
	for _, s := range part {
		for len(sum) <= s.At {
			sum = append(sum, results.Second{At: len(sum)})
		}
		d := &sum[s.At]
		d.Answered += s.Answered
		d.Errors += s.Errors
		d.P50, d.P99, d.Max = max(d.P50, s.P50), max(d.P99, s.P99), max(d.Max, s.Max)
	}
	return sum
}
