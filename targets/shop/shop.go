package shop

import (
	"errors"
	"fmt"
	"maps"
	"slices"
	"time"
)

// Durations from the story.
const (
	// Reservation is how long the lock holds an order's items.
	Reservation = 7 * time.Minute
	// MinSession is the earliest a payment session may expire after it is
	// created: the provider refuses anything shorter.
	MinSession = 30 * time.Minute
	// SoldHold is how long a completed payment marks its items sold at the
	// lock, until the catalogue itself says so.
	SoldHold = 24 * time.Hour
)

// Design is how the shop opens a checkout.
type Design string

// The designs.
const (
	// DesignReserveOnly reserves the items and opens a session: nothing
	// stops an earlier buyer's still-open session from completing after
	// the reservation has lapsed and passed to someone else.
	DesignReserveOnly Design = "reserve-only"
	// DesignExpireFirst expires the earlier buyer's session at the
	// provider before opening a new one, and refuses the checkout as sold
	// when that session has already completed.
	DesignExpireFirst Design = "expire-first"
)

// ErrCompleted is the provider's answer to expiring a session that has
// already been paid.
var ErrCompleted = errors.New("session already completed")

// Session is a payment session at the provider.
type Session struct {
	ID        string
	Buyer     string
	Items     []string
	Created   time.Time
	ExpiresAt time.Time
	State     string // "open", "completed", "expired"
}

// Event is a webhook the provider sends to the shop.
type Event struct {
	Kind    string // "completed" or "expired"
	Session string
}

// Provider is the payment provider: sessions and their webhooks. Events are
// queued for the caller to deliver, after whatever delay it models.
type Provider struct {
	now      func() time.Time
	sessions map[string]*Session
	next     int
	Outbox   []Event
}

// NewProvider returns a provider reading the time from now.
func NewProvider(now func() time.Time) *Provider {
	return &Provider{now: now, sessions: map[string]*Session{}}
}

// Create opens a session for buyer's order, expiring MinSession from now.
func (p *Provider) Create(buyer string, items []string) *Session {
	p.next++
	now := p.now()
	s := &Session{ID: fmt.Sprintf("cs_%d", p.next), Buyer: buyer, Items: slices.Clone(items),
		Created: now, ExpiresAt: now.Add(MinSession), State: "open"}
	p.sessions[s.ID] = s
	return s
}

// Session returns the session with id, or nil.
func (p *Provider) Session(id string) *Session { return p.sessions[id] }

// Expire closes an open session and queues its "expired" event; a
// completed one answers ErrCompleted; an expired one is left as it is.
func (p *Provider) Expire(id string) error {
	s := p.sessions[id]
	switch {
	case s == nil:
		return fmt.Errorf("no session %s", id)
	case s.State == "completed":
		return ErrCompleted
	case s.State == "open":
		s.State = "expired"
		p.Outbox = append(p.Outbox, Event{"expired", id})
	}
	return nil
}

// Lapse expires every open session whose time has come, as the provider
// does on its own.
func (p *Provider) Lapse() {
	now := p.now()
	for _, id := range slices.Sorted(maps.Keys(p.sessions)) {
		if s := p.sessions[id]; s.State == "open" && !now.Before(s.ExpiresAt) {
			s.State = "expired"
			p.Outbox = append(p.Outbox, Event{"expired", id})
		}
	}
}

// Pay is the buyer completing the payment page: it succeeds on an open
// session whose time has not run out, and queues "completed".
func (p *Provider) Pay(id string) bool {
	p.Lapse()
	s := p.sessions[id]
	if s == nil || s.State != "open" {
		return false
	}
	s.State = "completed"
	p.Outbox = append(p.Outbox, Event{"completed", id})
	return true
}

// Completed counts the completed sessions whose order holds item: how many
// times it was sold.
func (p *Provider) Completed(item string) int {
	n := 0
	for _, s := range p.sessions {
		if s.State == "completed" && slices.Contains(s.Items, item) {
			n++
		}
	}
	return n
}

// hold is what the lock knows of one item.
type hold struct {
	session string    // the reserving checkout's session, once opened
	until   time.Time // reserved until
	sold    time.Time // sold until
}

// Lock is the single-threaded object that reserves items, all or none.
type Lock struct {
	now   func() time.Time
	items map[string]*hold
}

// NewLock returns an empty lock reading the time from now.
func NewLock(now func() time.Time) *Lock { return &Lock{now: now, items: map[string]*hold{}} }

// Refusal says why the lock refused an order.
type Refusal struct {
	Item   string
	Sold   bool      // sold, rather than being checked out
	FreeAt time.Time // when the reservation, or the sold hold, ends
}

// Text is the refusal as the buyer reads it at now: what holds the item and
// the instant that ends, so a second buyer knows when to come back.
func (r *Refusal) Text(now time.Time) string {
	left := r.FreeAt.Sub(now).Round(time.Second)
	if r.Sold {
		return fmt.Sprintf("%s is sold: the lock holds it until %s UTC (%s from now), then the catalogue's sold mark decides",
			r.Item, r.FreeAt.UTC().Format("2006-01-02 15:04:05"), left)
	}
	return fmt.Sprintf("%s is being checked out: reserved until %s UTC, free again in %s",
		r.Item, r.FreeAt.UTC().Format("15:04:05"), left)
}

// Reserve reserves every item of an order for Reservation, or none. It
// answers the sessions of lapsed reservations it took over, so that the
// shop can deal with them, or why it refused.
func (l *Lock) Reserve(items []string) (previous []string, refused *Refusal) {
	now := l.now()
	for _, it := range items {
		h := l.items[it]
		switch {
		case h == nil:
		case !h.sold.IsZero() && !now.Before(h.sold):
			// The hold has ended: the lock forgets the item, and the
			// catalogue's own sold mark is all that is left.
			delete(l.items, it)
		case now.Before(h.sold):
			return nil, &Refusal{Item: it, Sold: true, FreeAt: h.sold}
		case now.Before(h.until):
			return nil, &Refusal{Item: it, FreeAt: h.until}
		case h.session != "":
			previous = append(previous, h.session)
		}
	}
	for _, it := range items {
		l.items[it] = &hold{until: now.Add(Reservation)}
	}
	return dedupe(previous), nil
}

// Attach records the session opened for a reservation of items.
func (l *Lock) Attach(items []string, session string) {
	for _, it := range items {
		if h := l.items[it]; h != nil {
			h.session = session
		}
	}
}

// Release ends the reservations held by session at once.
func (l *Lock) Release(session string) {
	for _, h := range l.items {
		if h.session == session && l.now().Before(h.until) {
			h.until = l.now()
		}
	}
}

// MarkSold marks items sold for SoldHold.
func (l *Lock) MarkSold(items []string) {
	now := l.now()
	for _, it := range items {
		h := l.items[it]
		if h == nil {
			h = &hold{}
			l.items[it] = h
		}
		h.sold = now.Add(SoldHold)
	}
}

// Shop is the Worker: it takes checkouts and the provider's webhooks.
type Shop struct {
	Design   Design
	Lock     *Lock
	Provider *Provider
}

// New returns a shop of design whose lock and provider read time from now.
func New(design Design, now func() time.Time) *Shop {
	return &Shop{Design: design, Lock: NewLock(now), Provider: NewProvider(now)}
}

// Answer is what a checkout request is told.
type Answer struct {
	Status  int    // 200, or 409
	Session string // the payment session opened, on 200
	Reason  string // why not, on 409
}

// Checkout reserves the order's items and opens a payment session for it.
func (s *Shop) Checkout(buyer string, items []string) Answer {
	s.Provider.Lapse()
	prev, refused := s.Lock.Reserve(items)
	if refused != nil {
		return Answer{Status: 409, Reason: refused.Text(s.Lock.now())}
	}
	if s.Design == DesignExpireFirst {
		for _, id := range prev {
			if err := s.Provider.Expire(id); errors.Is(err, ErrCompleted) {
				// Paid, but its "completed" event has not reached us yet.
				s.Lock.MarkSold(s.Provider.Session(id).Items)
				return Answer{Status: 409, Reason: "sold: the earlier session was already paid"}
			}
		}
	}
	sess := s.Provider.Create(buyer, items)
	s.Lock.Attach(items, sess.ID)
	return Answer{Status: 200, Session: sess.ID}
}

// Deliver is a webhook from the provider reaching the shop.
func (s *Shop) Deliver(e Event) {
	sess := s.Provider.Session(e.Session)
	if sess == nil {
		return
	}
	switch e.Kind {
	case "expired":
		s.Lock.Release(e.Session)
	case "completed":
		s.Lock.MarkSold(sess.Items)
	}
}

func dedupe(ids []string) []string {
	slices.Sort(ids)
	return slices.Compact(ids)
}
