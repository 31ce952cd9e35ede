package scenarios

import (
	"cmp"
	"context"
	"fmt"
	"slices"
	"time"

	"github.com/racelab/racelab/scenarios/engine"
	"github.com/racelab/racelab/scenarios/results"
	"github.com/racelab/racelab/targets/faults"
	"github.com/racelab/racelab/targets/kv"
)

// The fail-open lesson of five-checkouts: the gallery's checkout has two
// safety nets behind the payment, the lock object and then the KV sold
// mark, and both are best-effort. What a failing net does is the shop's
// policy:
//
//   - fail-open skips it and logs the failure: the shop stays open, and an
//     item is sold twice only when the lock is down and the KV mark, read
//     from a location's cache, is stale;
//   - fail-closed refuses the sale: nothing is sold twice, and nothing at
//     all is sold while the net is down.
//
// Each trial is one seeded script in virtual time: OutageItems
// one-of-a-kind paintings, each wanted by OutageBuyers visitors behind
// random locations of a simulated KV namespace (route spread). A painting
// is featured at a random instant in the first OutageSpan; each of its
// visitors opens its page within half a minute of that (the page reads the
// KV sold mark, as the catalogue does, and the location caches what it
// read) and checks out 5 to 60 seconds later. The lock is down for
// OutageWindow from the start. Both policies face the same script.

// The script's figures, in one place.
const (
	OutageItems     = 8
	OutageBuyers    = 3
	OutageCheckouts = OutageItems * OutageBuyers
	OutageSpan      = 8 * time.Minute
)

// OutageWindow is when the lock object is down, from the start of a trial:
// the example, 2m-5m.
var OutageWindow = faults.Window{From: 2 * time.Minute, To: 5 * time.Minute}

// Policy is what a checkout does when a safety net fails.
type Policy string

// The policies.
const (
	FailOpen   Policy = "fail-open"
	FailClosed Policy = "fail-closed"
)

// outagePolicies are compared side by side, the seed's choice first.
var outagePolicies = []Policy{FailOpen, FailClosed}

const (
	outageScenario = "five-checkouts (outage)"
	outageRule     = "every painting is sold at most once, while the lock object is down"
)

// runOutages plays trials of the outage script under both policies and
// returns them as a Result, one target per policy: ALLOWED is the sales
// served (availability), LOST/OVER the items oversold (safety).
func runOutages(ctx context.Context, trials int, seed int64, onTrial func(string, int, int)) (*results.Result, error) {
	res := &results.Result{Schema: results.SchemaVersion, Scenario: outageScenario, Rule: outageRule,
		Requests: OutageCheckouts, Trials: trials, Seed: seed,
		Script: fmt.Sprintf("%d checkouts of %d paintings, the lock object down %v, in virtual time", OutageCheckouts, OutageItems, OutageWindow)}
	sides := make([]scriptedSide, 0, len(outagePolicies))
	for _, p := range outagePolicies {
		sides = append(sides, shopSide(string(p), policyGuarantee(p), p == FailClosed,
			func(ctx context.Context, i int) (results.Trial, error) { return playOutage(ctx, p, seed, i) }))
	}
	return runScripted(ctx, res, sides, onTrial)
}

func policyGuarantee(p Policy) string {
	if p == FailClosed {
		return "a failing net refuses the sale"
	}
	return "none: a failing net is skipped"
}

// playOutage plays trial i of the outage script of seed under policy p.
func playOutage(ctx context.Context, p Policy, seed int64, i int) (results.Trial, error) {
	ks, err := newKVScript(seed, i, 0x5bd1e995)
	if err != nil {
		return results.Trial{}, err
	}
	rng, cfg, ns := ks.rng, ks.cfg, ks.ns
	type checkout struct {
		view, at time.Duration // when the page is opened, when the checkout is sent
		item     string
		loc      kv.Location
	}
	script := make([]checkout, 0, OutageCheckouts)
	for k := range OutageItems {
		featured := time.Duration(rng.Int64N(int64(OutageSpan)))
		for range OutageBuyers {
			view := featured + time.Duration(rng.Int64N(int64(30*time.Second)))
			script = append(script, checkout{
				view: view.Truncate(time.Second),
				at:   (view + 5*time.Second + time.Duration(rng.Int64N(int64(55*time.Second)))).Truncate(time.Second),
				item: fmt.Sprintf("painting-%d", k+1),
				loc:  kv.Location{Site: rng.IntN(cfg.Locations), Machine: rng.IntN(cfg.Machines)},
			})
		}
	}
	// Every page view and checkout in the order they happen; a page view
	// is event 2j, checkout j's is 2j+1, and ties keep that order.
	events := make([]int, 2*len(script))
	for e := range events {
		events[e] = e
	}
	when := func(e int) time.Duration {
		if e%2 == 0 {
			return script[e/2].view
		}
		return script[e/2].at
	}
	slices.SortStableFunc(events, func(a, b int) int { return cmp.Compare(when(a), when(b)) })

	lockSold := map[string]bool{} // the lock object's own record, while it is up
	sales := map[string]int{}
	reqs := make([]results.Request, len(script))
	for _, e := range events {
		j, c := e/2, script[e/2]
		if err := ks.sleepUntil(ctx, when(e)); err != nil {
			return results.Trial{}, err
		}
		if e%2 == 0 {
			// The painting's page: it shows the sold mark as this
			// location reads it, and the location caches the answer.
			if _, _, err := ns.Get(ctx, c.loc, "sold:"+c.item); err != nil {
				return results.Trial{}, err
			}
			continue
		}
		r := results.Request{Index: j, Invoke: ks.since(), Outcome: results.Refused}
		step := func(op, value, note string) {
			r.Steps = append(r.Steps, results.Step{At: ks.since(), Op: op, Key: c.item, Value: value, Note: note})
		}
		sell := func() {
			r.Outcome = results.Allowed
			sales[c.item]++
			if err := ns.Put(ctx, c.loc, "sold:"+c.item, fmt.Sprintf("buyer-%d", j+1)); err != nil {
				step("write", "sold", "KV write failed, logged: "+err.Error())
			}
		}
		since := ks.since()
		lockDown := since >= OutageWindow.From && since < OutageWindow.To
		switch {
		case lockDown && p == FailClosed:
			r.Answer = "refused: 503"
			step("refuse", "", "lock object down: sale refused (503)")
		case !lockDown && lockSold[c.item]:
			r.Answer = "refused: 409"
			step("refuse", "", "lock: sold (409)")
		default:
			if lockDown {
				step("fetch", "", "lock object down: skipped and logged")
			} else {
				lockSold[c.item] = true
				step("write", c.item+" reserved", "lock: reserved")
			}
			mark, found, err := ns.Get(ctx, c.loc, "sold:"+c.item)
			switch {
			case err != nil:
				return results.Trial{}, err // the KV namespace has no faults here
			case found:
				step("read", c.item+" sold to "+mark, fmt.Sprintf("KV sold mark at %s", locationWords(c.loc)))
				r.Answer = "refused: 409"
				step("refuse", "", "KV: sold (409)")
			default:
				step("read", "no sold mark on "+c.item, fmt.Sprintf("KV sold mark at %s: none", locationWords(c.loc)))
				sell()
			}
		}
		r.Return = ks.since()
		if r.Outcome == results.Allowed {
			r.Value = int64(sales[c.item])
			r.Answer = fmt.Sprintf("sold, sale %d of %s", r.Value, c.item)
		}
		reqs[j] = r
	}
	t := results.Trial{Index: i, Key: fmt.Sprintf("outage-%d-%d", seed, i), Requests: reqs}
	t.Count()
	for _, n := range sales {
		t.Counted++ // items sold at least once
		t.Over += int64(max(0, n-1))
	}
	if t.Over > 0 {
		t.Broken = true
		t.Why = fmt.Sprintf("shop:%s: %s served, %s oversold while the lock was down and a KV sold mark stale",
			p, results.Plural(int64(t.Allowed), "sale"), results.Plural(t.Over, "painting"))
	}
	return t, nil
}

// outageReplays shows, in `racelab explain five-checkouts`, the first
// outage script of the seed in which failing open sold a painting twice,
// as a timeline, then what failing closed did with the same script.
func outageReplays(ctx context.Context, x *engine.Explainer) ([]engine.Replay, error) {
	const search = 1000
	for i := range search {
		open, err := playOutage(ctx, FailOpen, x.Seed, i)
		if err != nil {
			return nil, err
		}
		if !open.Broken {
			continue
		}
		closed, err := playOutage(ctx, FailClosed, x.Seed, i)
		if err != nil {
			return nil, err
		}
		return []engine.Replay{{
			Heading: fmt.Sprintf("A safety net down: the lock object out from %v to %v, script %d, failing open", OutageWindow.From, OutageWindow.To, i+1),
			Target:  "shop:" + string(FailOpen), Clock: results.ClockVirtual, Trial: &open,
			Outcome: fmt.Sprintf("%s. Failing closed, the same script served %s and oversold none: the trade the seed chose is availability.",
				open.Why, results.Plural(int64(closed.Allowed), "sale")),
		}}, nil
	}
	return nil, fmt.Errorf("no painting oversold in %d outage scripts of seed %d", search, x.Seed)
}
