package kv

import (
	"cmp"
	"context"
	"fmt"
	"strconv"

	"github.com/racelab/racelab/targets/story"
)

// Key prefixes of the stories added after the first three.
const (
	limitPrefix  = "rl:"
	planPrefix   = "plan:"
	claimsPrefix = "claims:"
)

// PlanCacheTTL is how long a server's read of a plan is cached: the
// subscription's author found the server stopped validating a cancelled
// licence "about 45 seconds later".
const PlanCacheTTL = story.PlanCacheTTL

// windowKey is the rate limiter's key, as the limiter's author wrote it:
// rl:{caller}:{window number}.
func windowKey(caller string, n int64) string {
	return limitPrefix + caller + ":" + strconv.FormatInt(n, 10)
}

// Admit counts one request of caller the way the KV rate limiter did: read
// the window's count, refuse at the limit, otherwise write count+1 with an
// expiry of max(60 s, window). The increment is not atomic: two requests
// that read the same count both pass and both write count+1.
func (a *App) Admit(ctx context.Context, caller string, w story.Window) (story.Admission, error) {
	loc := a.route()
	n := w.Number(a.ns.Now())
	key := windowKey(caller, n)
	v, _, err := a.ns.Get(ctx, loc, key)
	if err != nil {
		return story.Admission{}, fmt.Errorf("admit %q: read: %w", caller, err)
	}
	count := number(v)
	if count >= w.Limit {
		story.Trace(ctx, story.Step{At: a.ns.Now(), Op: story.OpRefuse, Key: key, Value: strconv.FormatInt(count, 10),
			Note: fmt.Sprintf("limit of %d reached", w.Limit)})
		return story.Admission{Count: count, Window: n}, nil
	}
	count++
	if err := a.ns.PutExpiring(ctx, loc, key, strconv.FormatInt(count, 10), w.Expiry()); err != nil {
		return story.Admission{}, fmt.Errorf("admit %q: write: %w", caller, err)
	}
	return story.Admission{Allowed: true, Count: count, Window: n}, nil
}

// Admitted reads the settled count of caller's window n: 0 once its key
// has expired.
func (a *App) Admitted(_ context.Context, caller string, _ story.Window, n int64) (int64, error) {
	v, _ := a.ns.Settled(windowKey(caller, n))
	return number(v), nil
}

// Records counts caller's window keys still in the store: expiry removes
// each one max(60 s, window) after its last write.
func (a *App) Records(ctx context.Context, caller string, _ story.Window) (int64, error) {
	keys, err := a.ns.List(ctx, a.route(), limitPrefix+caller+":")
	if err != nil {
		return 0, fmt.Errorf("records of %q: %w", caller, err)
	}
	return int64(len(keys)), nil
}

// Subscribe writes subscriber's plan as paid, from the webhook's location.
func (a *App) Subscribe(ctx context.Context, subscriber string) error {
	return a.setPlan(ctx, subscriber, story.Paid)
}

// Cancel writes subscriber's plan as cancelled. Locations that read the
// plan recently go on answering "paid" until their cached copy expires.
func (a *App) Cancel(ctx context.Context, subscriber string) error {
	return a.setPlan(ctx, subscriber, story.Cancelled)
}

func (a *App) setPlan(ctx context.Context, subscriber, state string) error {
	if err := a.ns.Put(ctx, a.webhook(), planPrefix+subscriber, state); err != nil {
		return fmt.Errorf("plan of %q: write: %w", subscriber, err)
	}
	return nil
}

// webhook is where a plan change is written: it arrives as the payment
// provider's webhook, which reaches the location nearest the provider,
// not the subscriber's, so the subscriber's location learns of it only
// when its cached read of the plan expires.
func (a *App) webhook() Location {
	cfg := a.ns.Config()
	return Location{Site: (a.ns.Home() + 1) % cfg.Locations}
}

// Paid reads subscriber's plan as a server does when it serves a page: a
// read cached for Config.PlanCacheTTL (PlanCacheTTL unless set) where it
// was made.
func (a *App) Paid(ctx context.Context, subscriber string) (bool, error) {
	return a.PaidAt(ctx, a.route(), subscriber)
}

// PaidAt is Paid, read at loc: the hybrid store reads the plan here and
// leaves the quota to a strong store.
func (a *App) PaidAt(ctx context.Context, loc Location, subscriber string) (bool, error) {
	ttl := cmp.Or(a.ns.Config().PlanCacheTTL, PlanCacheTTL)
	v, _, err := a.ns.getCached(ctx, loc, planPrefix+subscriber, ttl)
	if err != nil {
		return false, fmt.Errorf("plan of %q: read: %w", subscriber, err)
	}
	if v != story.Paid {
		story.Trace(ctx, story.Step{At: a.ns.Now(), Op: story.OpRefuse, Key: planPrefix + subscriber, Value: v, Note: "no paid plan"})
	}
	return v == story.Paid, nil
}

// Download grants an original when the plan reads paid and the daily
// quota allows it, both read from KV: a stale plan and a stale count.
func (a *App) Download(ctx context.Context, subscriber string, limit int64) (bool, int64, error) {
	loc := a.route()
	paid, err := a.PaidAt(ctx, loc, subscriber)
	if err != nil || !paid {
		return false, 0, err
	}
	return a.At(loc).Consume(ctx, subscriber, limit)
}

// Downloads reads the settled count of subscriber's downloads today.
func (a *App) Downloads(ctx context.Context, subscriber string) (int64, error) {
	return a.Count(ctx, subscriber)
}

// Route picks the location of the next request, from the namespace's
// seeded routing.
func (a *App) Route() Location { return a.route() }

// CheckoutOf sells one of stock copies of item for buyer the way a KV
// shop would: read the claims, refuse at the stock, write claims+1. A
// stock of one is Checkout's sold mark.
func (a *App) CheckoutOf(ctx context.Context, item, buyer string, stock int64) (bool, error) {
	if stock == 1 {
		return a.Checkout(ctx, item, buyer)
	}
	loc, key := a.route(), claimsPrefix+item
	v, _, err := a.ns.Get(ctx, loc, key)
	if err != nil {
		return false, fmt.Errorf("checkout %q: read: %w", item, err)
	}
	claims := number(v)
	if claims >= stock {
		story.Trace(ctx, story.Step{At: a.ns.Now(), Op: story.OpRefuse, Key: key, Value: v, Note: "sold out"})
		return false, nil
	}
	if err := a.ns.Put(ctx, loc, key, strconv.FormatInt(claims+1, 10)); err != nil {
		return false, fmt.Errorf("checkout %q: write: %w", item, err)
	}
	return true, nil
}
