package scenarios

import (
	"cmp"
	"context"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/racelab/racelab/scenarios/engine"
	"github.com/racelab/racelab/scenarios/results"
	"github.com/racelab/racelab/targets/kv"
	"github.com/racelab/racelab/targets/shop"
)

// The 24-hour sold mark of five-checkouts: a completed payment turns the item
// into "sold" at the lock for shop.SoldHold, which is meant to cover the
// time until the KV sold mark has reached every location. After the hold
// the lock forgets the item and only the KV mark, read where the buyer is,
// stands between it and a second sale. Each script is seeded and played in
// virtual time against the fixed shop (expire-first):
//
//   - buyer A checks out painting-2 at 0:00 and pays within half an hour;
//     the shop hears "completed" up to a minute and a half later, marks
//     the painting sold at the lock and writes the KV mark from A's
//     location;
//   - buyer C's page, in one location, reads the mark in the first minutes
//     with the platform's default cacheTtl, before A pays; buyer D's page, in another,
//     does too, or (the stale case) with a cacheTtl longer than the hold;
//   - a minute before the hold ends every location reads the mark;
//   - C checks out inside the hold (the lock refuses: sold, until when),
//     then again after it; D checks out after it and pays if served.
//
// A checkout asks the lock first, then reads the KV mark at the buyer's
// location, the later layer behind it; a mark found there expires the
// session just opened and refuses the sale.

// SoldMarkStaleCache is the cacheTtl of D's page read in the stale case:
// longer than the hold, so that location still says unsold when the lock
// forgets the painting.
const SoldMarkStaleCache = shop.SoldHold + 2*time.Hour

// soldMarkItem is the painting the script sells.
const soldMarkItem = "painting-2"

// playSoldMark plays trial i of the sold-mark script of seed; stale gives
// D's location the long cache.
func playSoldMark(ctx context.Context, seed int64, i int, stale bool) (results.Trial, error) {
	// The stale and the propagated case face the same script.
	ks, err := newKVScript(seed, i, 0x24)
	if err != nil {
		return results.Trial{}, err
	}
	rng, cfg, ns := ks.rng, ks.cfg, ks.ns
	caches := cfg.Locations * cfg.Machines
	at := func(k int) kv.Location { return kv.Location{Site: k / cfg.Machines, Machine: k % cfg.Machines} }
	// Three different sites: D's must be neither A's (a write refreshes
	// the caches of the site that made it) nor C's.
	site := rng.Perm(cfg.Locations)
	spot := func(k int) int { return site[k]*cfg.Machines + rng.IntN(cfg.Machines) }
	locA, locC, locD := at(spot(0)), spot(1), spot(2)
	pay := randMinutes(rng, 2, 30)
	heard := pay + time.Duration(2+rng.IntN(88))*time.Second
	viewC, viewD := randMinutes(rng, 0, 2), randMinutes(rng, 0, 2) // before A can pay
	// The hold runs from the moment the shop hears "completed".
	hold := heard + shop.SoldHold
	insideC := hold - randMinutes(rng, 2, 120)
	afterC, afterD := hold+randMinutes(rng, 1, 60), hold+randMinutes(rng, 1, 60)
	payD := randMinutes(rng, 1, 4)
	dCache := cfg.CacheTTL
	if stale {
		dCache = SoldMarkStaleCache
	}

	s := shop.New(shop.DesignExpireFirst, ks.v.Now)
	key := "sold:" + soldMarkItem
	const (
		laneA = iota
		laneCIn
		laneCAfter
		laneD
	)
	reqs := []results.Request{
		{Index: laneA, Invoke: 0, Outcome: results.Refused},
		{Index: laneCIn, Invoke: insideC, Outcome: results.Refused},
		{Index: laneCAfter, Invoke: afterC, Outcome: results.Refused},
		{Index: laneD, Invoke: afterD, Outcome: results.Refused},
	}
	since := ks.since
	step := func(j int, op, value, note string) {
		reqs[j].Steps = append(reqs[j].Steps, results.Step{At: since(), Op: op, Key: soldMarkItem, Value: value, Note: note})
	}
	deliver := func() {
		for _, e := range s.Provider.Outbox {
			s.Deliver(e)
		}
		s.Provider.Outbox = nil
	}
	sessions := make([]string, len(reqs))
	// checkout is one buyer's checkout: the lock, then the KV mark as
	// the buyer's location reads it.
	checkout := func(j int, name string, loc kv.Location) error {
		a := s.Checkout(name, []string{soldMarkItem})
		reqs[j].Return = since()
		if a.Status != 200 {
			reqs[j].Answer = "refused: 409"
			step(j, "refuse", "409", "lock: "+a.Reason)
			return nil
		}
		reqs[j].Answer = "payment page, never paid"
		step(j, "checkout", a.Session, "lock: "+soldMarkItem+" reserved")
		mark, found, err := ns.Get(ctx, loc, key)
		if err != nil {
			return err
		}
		reqs[j].Return = since()
		if found {
			step(j, "read", soldMarkItem+" sold to "+mark, fmt.Sprintf("KV sold mark at %s", locationWords(loc)))
			_ = s.Provider.Expire(a.Session) // just opened, so open
			deliver()
			reqs[j].Answer = "refused: 409"
			step(j, "refuse", "409", "KV: sold")
			return nil
		}
		step(j, "read", "no sold mark on "+soldMarkItem, fmt.Sprintf("KV sold mark at %s: none", locationWords(loc)))
		sessions[j] = a.Session
		return nil
	}
	paid := func(j int) {
		if sessions[j] == "" || !s.Provider.Pay(sessions[j]) {
			return
		}
		reqs[j].Outcome, reqs[j].Value, reqs[j].Return, reqs[j].Answer = results.Allowed, 1, since(), "paid: sold"
		step(j, "pay", sessions[j], "paid")
	}

	type event struct {
		at time.Duration
		do func() error
	}
	events := []event{
		{0, func() error { return checkout(laneA, "A", locA) }},
		{viewC, func() error { _, _, err := ns.Get(ctx, at(locC), key); return err }},
		{viewD, func() error { _, _, err := ns.GetCached(ctx, at(locD), key, dCache); return err }},
		{pay, func() error { paid(laneA); return nil }},
		{heard, func() error {
			deliver()
			step(laneA, "event", "completed", fmt.Sprintf("the lock marks %s sold until +%v", soldMarkItem, hold))
			return ns.Put(ctx, locA, key, "A")
		}},
		{hold - time.Minute, func() error {
			var unsold []string
			for k := range caches {
				if _, found, err := ns.Get(ctx, at(k), key); err != nil {
					return err
				} else if !found {
					unsold = append(unsold, locationWords(at(k)))
				}
			}
			value := fmt.Sprintf("KV mark sold at %d of %d locations", caches-len(unsold), caches)
			note := "the KV mark has reached every location"
			if len(unsold) > 0 {
				value += fmt.Sprintf(", still unsold at %s", strings.Join(unsold, "; "))
				note = fmt.Sprintf("the cache read at +%s keeps its answer", clockText(viewD))
			}
			reqs[laneA].Steps = append(reqs[laneA].Steps, results.Step{At: since(), Op: "read", Key: key, Value: value, Note: note})
			return nil
		}},
		{insideC, func() error { return checkout(laneCIn, "C", at(locC)) }},
		{afterC, func() error { return checkout(laneCAfter, "C", at(locC)) }},
		{afterD, func() error { return checkout(laneD, "D", at(locD)) }},
		{afterD + payD, func() error { paid(laneD); return nil }},
	}
	slices.SortStableFunc(events, func(a, b event) int { return cmp.Compare(a.at, b.at) })
	for _, e := range events {
		if err := ks.sleepUntil(ctx, e.at); err != nil {
			return results.Trial{}, err
		}
		if err := e.do(); err != nil {
			return results.Trial{}, err
		}
	}

	t := results.Trial{Index: i, Key: fmt.Sprintf("sold-mark-%d-%d", seed, i), Requests: reqs}
	t.Count()
	t.Counted = int64(s.Provider.Completed(soldMarkItem))
	if judgePayment(&t) {
		t.Why = fmt.Sprintf("shop:expire-first: %s sold %d times: the lock forgot it at +%v, and %s still read unsold from the cache it filled at +%s",
			soldMarkItem, t.Counted, hold, locationWords(at(locD)), clockText(viewD))
	}
	return t, nil
}

// soldMarkReplay is the payment part's last replay in `racelab explain`:
// the seed's first sold-mark script, in the stale case, with what the
// propagated case did with the same script.
func soldMarkReplay(ctx context.Context, seed int64) (engine.Replay, error) {
	stale, err := playSoldMark(ctx, seed, 0, true)
	if err != nil {
		return engine.Replay{}, err
	}
	fresh, err := playSoldMark(ctx, seed, 0, false)
	if err != nil {
		return engine.Replay{}, err
	}
	outcome := stale.Why
	if !stale.Broken {
		outcome = "shop:expire-first: " + soldMarkItem + " sold once, though one location's cache outlived the hold"
	}
	if fresh.Broken {
		outcome += ". With the default cacheTtl: " + fresh.Why
	} else {
		outcome += fmt.Sprintf(". With the default cacheTtl at every location the mark had propagated long before the hold ended, and the same script sold %s once", soldMarkItem)
	}
	return engine.Replay{
		Heading: "The 24-hour sold mark: A buys (#1); C checks out inside the hold (#2) and after it (#3); D after it (#4), where a cache outlives the hold",
		Target:  "shop:expire-first", Clock: results.ClockVirtual, Trial: &stale, Outcome: outcome,
	}, nil
}

// locationWords names a KV location for a reader: a site and one of its
// machines, each with its own cache, counted from 1 ("site 1, machine 2"),
// where kv.Location prints the simulator's "0/1".
func locationWords(l kv.Location) string {
	return fmt.Sprintf("site %d, machine %d", l.Site+1, l.Machine+1)
}
