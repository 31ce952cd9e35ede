package kv

import (
	"context"
	"encoding/json"
	"fmt"
	"strconv"
	"time"

	"github.com/racelab/racelab/targets/story"
)

// Key prefixes keep the stories apart when they share a namespace (the
// window's, the plan's and a stocked item's are in limits.go).
const (
	viewsPrefix = "views:"
	quotaPrefix = "quota:"
	soldPrefix  = "sold:"
)

// App is the Worker the stories' authors first wrote: every request reads a
// key, decides in code, and writes the key back, with nothing to stop
// another request doing the same in between. It is wrong on purpose; it is
// what racelab shows breaking.
type App struct {
	ns    *Namespace
	route func() Location
}

// NewApp runs the naive Worker on ns. Each request is routed to a location
// by ns.Route, and both its read and its write happen there, since one
// Worker invocation runs in one place.
func NewApp(ns *Namespace) *App {
	return &App{ns: ns, route: ns.Route}
}

// At returns the same Worker with every request served at loc, as happens
// when one visitor's requests all reach the nearest location and machine.
func (a *App) At(loc Location) *App {
	return &App{ns: a.ns, route: func() Location { return loc }}
}

// Hit counts one view of slug the way the blog counter did: read the count,
// add one in code, write it back. It answers the total it wrote.
func (a *App) Hit(ctx context.Context, slug string) (int64, error) {
	loc, key := a.route(), viewsPrefix+slug
	v, _, err := a.ns.Get(ctx, loc, key)
	if err != nil {
		return 0, fmt.Errorf("hit %q: read: %w", slug, err)
	}
	n := number(v) + 1
	if err := a.ns.Put(ctx, loc, key, strconv.FormatInt(n, 10)); err != nil {
		return 0, fmt.Errorf("hit %q: write: %w", slug, err)
	}
	return n, nil
}

// Views reads the settled count of slug, 0 if it has none.
func (a *App) Views(_ context.Context, slug string) (int64, error) {
	v, _ := a.ns.Settled(viewsPrefix + slug)
	return number(v), nil
}

// quota is the one value a visitor's key holds: the day it counts and the
// downloads granted that day. A new day starts over by itself, so nothing
// needs an expiry or a clean-up.
type quota struct {
	Day string `json:"day"`
	N   int64  `json:"n"`
}

// Consume grants a download when visitor has had fewer than limit today,
// the way the download quota did: read the count, compare, write count+1.
// A refused download is not written. It answers whether the download was
// granted and the count after it.
func (a *App) Consume(ctx context.Context, visitor string, limit int64) (granted bool, count int64, err error) {
	loc, key := a.route(), quotaPrefix+visitor
	today := a.today()
	v, found, err := a.ns.Get(ctx, loc, key)
	if err != nil {
		return false, 0, fmt.Errorf("consume %q: read: %w", visitor, err)
	}
	q, err := decodeQuota(v, found, today)
	if err != nil {
		return false, 0, fmt.Errorf("consume %q: %w", visitor, err)
	}
	if q.N >= limit {
		story.Trace(ctx, story.Step{At: a.ns.Now(), Op: story.OpRefuse, Key: key, Value: strconv.FormatInt(q.N, 10),
			Note: fmt.Sprintf("limit of %d reached", limit)})
		return false, q.N, nil
	}
	q.N++
	b, err := json.Marshal(q)
	if err != nil {
		return false, 0, fmt.Errorf("consume %q: %w", visitor, err)
	}
	if err := a.ns.Put(ctx, loc, key, string(b)); err != nil {
		return false, 0, fmt.Errorf("consume %q: write: %w", visitor, err)
	}
	return true, q.N, nil
}

// Count reads the settled count of visitor's downloads today.
func (a *App) Count(_ context.Context, visitor string) (int64, error) {
	v, found := a.ns.Settled(quotaPrefix + visitor)
	q, err := decodeQuota(v, found, a.today())
	if err != nil {
		return 0, fmt.Errorf("count %q: %w", visitor, err)
	}
	return q.N, nil
}

// Checkout sells item to buyer the way the gallery did: look for the sold
// mark, and if there is none, write one naming buyer and succeed.
func (a *App) Checkout(ctx context.Context, item, buyer string) (bool, error) {
	loc, key := a.route(), soldPrefix+item
	owner, sold, err := a.ns.Get(ctx, loc, key)
	if err != nil {
		return false, fmt.Errorf("checkout %q: read: %w", item, err)
	}
	if sold {
		story.Trace(ctx, story.Step{At: a.ns.Now(), Op: story.OpRefuse, Key: key, Value: owner, Note: "already sold"})
		return false, nil
	}
	if err := a.ns.Put(ctx, loc, key, buyer); err != nil {
		return false, fmt.Errorf("checkout %q: write: %w", item, err)
	}
	return true, nil
}

// Claims reads how many claims the store recorded on item. The sold mark
// names one buyer, so it is 0 or 1 however many checkouts succeeded: the
// other buyers' claims were overwritten.
func (a *App) Claims(_ context.Context, item string) (int64, error) {
	if _, sold := a.ns.Settled(soldPrefix + item); sold {
		return 1, nil
	}
	// An item of more than one copy counts its claims (CheckoutOf).
	v, _ := a.ns.Settled(claimsPrefix + item)
	return number(v), nil
}

// Buyer answers the buyer the settled sold mark names: the last writer.
func (a *App) Buyer(item string) (string, bool) {
	return a.ns.Settled(soldPrefix + item)
}

// today is the UTC date on the namespace's clock, the quota's day.
func (a *App) today() string { return a.ns.Now().UTC().Format(time.DateOnly) }

// number reads a stored count as the JavaScript did with Number(v) || 0:
// anything that is not a number counts as 0.
func number(v string) int64 {
	if v == "" { // "not found": the first hit's read, every trial
		return 0
	}
	n, err := strconv.ParseInt(v, 10, 64)
	if err != nil {
		return 0
	}
	return n
}

// decodeQuota reads a stored quota, starting over when there is none or it
// belongs to another day.
func decodeQuota(v string, found bool, today string) (quota, error) {
	if !found {
		return quota{Day: today}, nil
	}
	var q quota
	if err := json.Unmarshal([]byte(v), &q); err != nil {
		return quota{}, fmt.Errorf("stored quota %q: %w", v, err)
	}
	if q.Day != today {
		return quota{Day: today}, nil
	}
	return q, nil
}

// StartTrial marks the start of a trial for the namespace's faults: see
// targets.TrialStarter.
func (a *App) StartTrial() { a.ns.StartTrial() }

// Clock is the clock the namespace runs on, so that racelab can fire a
// burst in the namespace's virtual time.
func (a *App) Clock() Clock { return a.ns.Clock() }

// Forget drops what the namespace holds for key in every story: see
// targets.Forgetter.
func (a *App) Forget(key string) {
	for _, prefix := range []string{viewsPrefix, quotaPrefix, soldPrefix, planPrefix, claimsPrefix} {
		a.ns.Forget(prefix + key)
	}
	a.ns.ForgetPrefix(limitPrefix + key + ":")
}
