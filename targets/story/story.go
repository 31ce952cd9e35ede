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
	// Stock is five-checkouts' stock: every item exists once.
	Stock = 1
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

// Op names one story's request, for targets that build requests
// themselves (a staged HTTP burst): the word is the request.
type Op string

// The stories' requests.
const (
	OpHit      Op = "hit"      // Counter's Hit
	OpDownload Op = "download" // Quota's Consume
	OpCheckout Op = "checkout" // Inventory's Checkout
)

// Reply is a staged request's answer.
type Reply struct {
	// OK is true for a counted hit, a granted download, a claimed item.
	OK bool
	// Value is the total, the count, or the claims the store answered.
	Value int64
	// Arrival is when the server says the request arrived, by its own
	// clock; zero when the server does not say.
	Arrival time.Time
	// Early says the answer came before the request's final part was
	// released: the burst was not synchronized and proves nothing.
	Early bool
}
