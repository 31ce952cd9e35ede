package story

import (
	"context"
	"errors"
	"time"
)

// The stories' shared figures.
const (
	// DailyLimit is six-become-four's quota: 5 downloads a visitor a UTC
	// day.
	DailyLimit = 5
	// Stock is five-checkouts' stock: every item exists once, unless
	// the run asks for more (--stock).
	Stock = 1
	// WindowLimit and WindowLength are six-of-five's rate limit: 5
	// requests a caller per fixed window of 60 seconds.
	WindowLimit  = 5
	WindowLength = 60 * time.Second
	// MinExpiry is the shortest expiry a key-value store accepts for a
	// key (expirationTtl): a window's key lives max(MinExpiry, window).
	MinExpiry = 60 * time.Second
	// PlanCacheTTL is how long a server's read of a subscription plan is
	// cached: a cancel reaches the server "about 45 seconds later".
	PlanCacheTTL = 45 * time.Second
	// Revalidation is how often the browser extension asks the server
	// again: it learns of a cancel "at most twelve hours after that".
	Revalidation = 12 * time.Hour
)

// Counter is a store that counts views per slug (ten-hits-one-view).
type Counter interface {
	// Hit records one view of slug and answers the total it stored.
	Hit(ctx context.Context, slug string) (int64, error)
	// Views reads the total stored for slug, 0 if it has none.
	Views(ctx context.Context, slug string) (int64, error)
}

// BatchCounter is a Counter that also reads many totals in one request, as
// a blog's index page does (GET /get?slugs=a,b,c). Each key's total must be
// the one Views answers: a batch read that decodes its keys a second time
// looks up other strings and answers 0 for them, with no error anywhere.
type BatchCounter interface {
	Counter
	// ViewsMany reads the totals of slugs in one read, in their order. A
	// store that turns out to offer no batch read answers an error
	// wrapping ErrNoBatch.
	ViewsMany(ctx context.Context, slugs []string) ([]int64, error)
}

// ErrNoBatch says a store offers no batch read after all.
var ErrNoBatch = errors.New("no batch read")

// ErrKeyRefused is wrapped by a store's error when the key itself is what
// it refuses (longer than the store takes once its own prefix is added,
// or a name it reserves): the sender's mistake, which a server answers
// 400 rather than as a failure of the store.
var ErrKeyRefused = errors.New("key refused by the store")

// Quota is a store that grants at most limit downloads a visitor a UTC day
// (six-become-four). A refused download must not be counted.
type Quota interface {
	// Consume asks for one download and answers whether it was granted and
	// the count the store answered with.
	Consume(ctx context.Context, visitor string, limit int64) (granted bool, count int64, err error)
	// Count reads the visitor's count for today.
	Count(ctx context.Context, visitor string) (int64, error)
}

// Inventory is a store of one-of-a-kind items (five-checkouts): every item
// has a stock of exactly one.
type Inventory interface {
	// Checkout tries to claim item for buyer and answers whether this
	// request got it.
	Checkout(ctx context.Context, item, buyer string) (bool, error)
	// Claims reads how many claims the store recorded on item.
	Claims(ctx context.Context, item string) (int64, error)
}

// Stocked is an Inventory whose items may exist more than once
// (five-checkouts --stock K): a checkout succeeds while claims are below
// the stock, and never takes it below zero.
type Stocked interface {
	Inventory
	// CheckoutOf tries to claim one of stock copies of item for buyer;
	// Checkout is CheckoutOf with a stock of one.
	CheckoutOf(ctx context.Context, item, buyer string, stock int64) (bool, error)
}

// Window is a fixed-window rate limit: Limit requests a caller in every
// window of Length, the windows numbered floor(now / Length).
type Window struct {
	Limit  int64
	Length time.Duration
}

// Number is the window that holds t.
func (w Window) Number(t time.Time) int64 { return t.UnixNano() / int64(w.Length) }

// Expiry is how long a window's record is kept after its last write:
// max(MinExpiry, Length), as the KV limiter wrote it.
func (w Window) Expiry() time.Duration { return max(MinExpiry, w.Length) }

// Admission is a rate limiter's answer to one request.
type Admission struct {
	// Allowed says the request was let through.
	Allowed bool
	// Count is the window's count the store answered with: after the
	// request when it was allowed, the count that refused it otherwise.
	Count int64
	// Window is the number of the window the request was counted in.
	Window int64
}

// Limiter is a store that rate-limits callers in fixed windows
// (six-of-five). A refused request is not counted.
type Limiter interface {
	// Admit counts one request of caller against w in the window that
	// holds the store's now.
	Admit(ctx context.Context, caller string, w Window) (Admission, error)
	// Admitted reads what the store counted for caller in window number n:
	// 0 when it holds nothing for it (never written, or expired).
	Admitted(ctx context.Context, caller string, w Window, n int64) (int64, error)
	// Records counts the window records the store still holds for caller,
	// to show what expiry (or its absence) leaves behind.
	Records(ctx context.Context, caller string, w Window) (int64, error)
}

// Plans is a store of subscriptions whose paid plan unlocks original
// downloads, at most a daily limit of them (stale-plan).
type Plans interface {
	// Subscribe starts subscriber's paid plan; Cancel ends it.
	Subscribe(ctx context.Context, subscriber string) error
	Cancel(ctx context.Context, subscriber string) error
	// Paid reads the plan as the server sees it when it serves a page:
	// possibly from a cache.
	Paid(ctx context.Context, subscriber string) (bool, error)
	// Download grants an original download when the plan, as the server
	// reads it, is paid and today's count is below limit, and counts it.
	Download(ctx context.Context, subscriber string, limit int64) (granted bool, count int64, err error)
	// Downloads reads the subscriber's count of granted downloads today.
	Downloads(ctx context.Context, subscriber string) (int64, error)
}

// Capped is a store that plays an op of the ops table that has no
// interface of its own, such as a story's own op defined beside the story
// (a test's): it keeps a count per op and key, grants a request while the
// count is below the request's limit and counts it then, and refuses it,
// uncounted, at the limit. Each op's counts are its own: key "a" of one op
// is not key "a" of another, nor the key of any story above.
type Capped interface {
	// Take asks for one request of op on key, held to limit, and answers
	// whether it was granted and the count the store answered with: the
	// count after it when granted, the count that refused it otherwise.
	Take(ctx context.Context, op Op, key string, limit int64) (granted bool, count int64, err error)
	// Taken reads op's count on key.
	Taken(ctx context.Context, op Op, key string) (int64, error)
}

// Op names one story's request, for targets that build requests
// themselves (a staged HTTP burst): the word is the request.
type Op string

// The stories' requests; Ops holds what each side knows of them.
const (
	OpHit      Op = "hit"      // Counter's Hit
	OpDownload Op = "download" // Quota's Consume
	OpCheckout Op = "checkout" // Inventory's Checkout
	OpLimit    Op = "limit"    // Limiter's Admit
	OpOriginal Op = "original" // Plans' Download
)

// Reply is a staged request's answer.
type Reply struct {
	// OK is true for a counted hit, a granted download, a claimed item.
	OK bool
	// Value is the total, the count, or the claims the store answered.
	Value int64
	// Window is the rate limiter's window number (OpLimit only).
	Window int64
	// Arrival is when the server says the request arrived, by its own
	// clock; zero when the server does not say.
	Arrival time.Time
	// Early says the answer came before the request's final part was
	// released: the burst was not synchronized and proves nothing.
	Early bool
}
