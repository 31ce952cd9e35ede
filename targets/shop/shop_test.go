package shop

import (
	"errors"
	"testing"
	"time"
)

// fakeNow is a hand-wound clock for the shop's pure logic.
type fakeNow struct{ t time.Time }

func (f *fakeNow) now() time.Time          { return f.t }
func (f *fakeNow) advance(d time.Duration) { f.t = f.t.Add(d) }

func newShop(d Design) (*Shop, *fakeNow) {
	c := &fakeNow{time.Date(2026, 3, 14, 9, 0, 0, 0, time.UTC)}
	return New(d, c.now), c
}

func TestReserveIsAllOrNone(t *testing.T) {
	s, _ := newShop(DesignExpireFirst)
	if a := s.Checkout("A", []string{"p1", "p2"}); a.Status != 200 {
		t.Fatalf("A: %+v, want 200", a)
	}
	// B wants p2 (taken) and p3 (free): nothing is reserved for B.
	if a := s.Checkout("B", []string{"p3", "p2"}); a.Status != 409 {
		t.Fatalf("B: %+v, want 409", a)
	}
	if a := s.Checkout("C", []string{"p3"}); a.Status != 200 {
		t.Errorf("C after B's refused order: %+v, want 200 (p3 must not have been held for B)", a)
	}
}

func TestRefusalSaysWhenFree(t *testing.T) {
	s, c := newShop(DesignReserveOnly)
	s.Checkout("A", []string{"p1"})
	a := s.Checkout("B", []string{"p1"})
	if a.Status != 409 || a.Reason != "p1 is being checked out: reserved until 09:07:00 UTC, free again in 7m0s" {
		t.Errorf("B: %+v, want 409 naming 09:07:00 and 7m0s", a)
	}
	// The count-down follows the clock; the instant stays put.
	c.advance(2*time.Minute + 20*time.Second)
	a = s.Checkout("C", []string{"p1"})
	if a.Status != 409 || a.Reason != "p1 is being checked out: reserved until 09:07:00 UTC, free again in 4m40s" {
		t.Errorf("C: %+v, want 409 naming 09:07:00 and 4m40s", a)
	}
	c.advance(4*time.Minute + 40*time.Second)
	if a := s.Checkout("D", []string{"p1"}); a.Status != 200 {
		t.Errorf("D at 09:07:00: %+v, want 200: the reservation has ended when the 409 said", a)
	}
}

func TestSessionsLastAtLeastThirtyMinutes(t *testing.T) {
	s, c := newShop(DesignReserveOnly)
	a := s.Checkout("A", []string{"p1"})
	c.advance(29 * time.Minute)
	if !s.Provider.Pay(a.Session) {
		t.Fatal("pay after 29 min refused; the session must last 30")
	}
	b := s.Checkout("B", []string{"p2"})
	c.advance(MinSession)
	if s.Provider.Pay(b.Session) {
		t.Error("pay after 30 min accepted; the session should have expired")
	}
}

// TestTheGap is the story's gap: after seven minutes the reservation lapses
// while the first payment page stays open. Reserve-only sells twice; the
// fix expires the first session, so only the second buyer can pay.
func TestTheGap(t *testing.T) {
	for _, tt := range []struct {
		design   Design
		wantSold int
		aPays    bool
	}{
		{DesignReserveOnly, 2, true},
		{DesignExpireFirst, 1, false},
	} {
		s, c := newShop(tt.design)
		a := s.Checkout("A", []string{"p1"})
		c.advance(8 * time.Minute)
		b := s.Checkout("B", []string{"p1"})
		if b.Status != 200 {
			t.Fatalf("%s: B after 8 min: %+v, want 200", tt.design, b)
		}
		c.advance(time.Minute)
		if got := s.Provider.Pay(a.Session); got != tt.aPays {
			t.Errorf("%s: A pays at 9 min: %v, want %v", tt.design, got, tt.aPays)
		}
		s.Provider.Pay(b.Session)
		if got := s.Provider.Completed("p1"); got != tt.wantSold {
			t.Errorf("%s: p1 sold %d times, want %d", tt.design, got, tt.wantSold)
		}
	}
}

// TestPaidButNotYetHeard: A paid, but the "completed" event has not reached
// the shop when B checks out after the reservation lapsed. The fix asks the
// provider to expire A's session, hears it is complete, and refuses B as sold.
func TestPaidButNotYetHeard(t *testing.T) {
	s, c := newShop(DesignExpireFirst)
	a := s.Checkout("A", []string{"p1"})
	c.advance(6 * time.Minute)
	s.Provider.Pay(a.Session) // its event is still in the outbox
	c.advance(2 * time.Minute)
	if b := s.Checkout("B", []string{"p1"}); b.Status != 409 || b.Reason != "sold: the earlier session was already paid" {
		t.Errorf("B: %+v, want 409 sold", b)
	}
	if err := s.Provider.Expire(a.Session); !errors.Is(err, ErrCompleted) {
		t.Errorf("expire a paid session: %v, want ErrCompleted", err)
	}
}

func TestEventsCloseTheLoop(t *testing.T) {
	s, c := newShop(DesignExpireFirst)
	a := s.Checkout("A", []string{"p1"})
	// "expired" releases the reservation at once, before its seven minutes.
	s.Provider.Expire(a.Session)
	for _, e := range s.Provider.Outbox {
		s.Deliver(e)
	}
	s.Provider.Outbox = nil
	b := s.Checkout("B", []string{"p1"})
	if b.Status != 200 {
		t.Fatalf("B right after A's session expired: %+v, want 200", b)
	}
	// "completed" marks the item sold for 24 hours.
	s.Provider.Pay(b.Session)
	for _, e := range s.Provider.Outbox {
		s.Deliver(e)
	}
	c.advance(23 * time.Hour)
	if got := s.Checkout("C", []string{"p1"}); got.Status != 409 || got.Reason != "p1 is sold: the lock holds it until 2026-03-15 09:00:00 UTC (1h0m0s from now), then the catalogue's sold mark decides" {
		t.Errorf("C after 23 h: %+v, want 409 sold", got)
	}
	// After the hold the lock forgets the item altogether, session and
	// all: from then on only the catalogue's sold mark can refuse it.
	c.advance(time.Hour)
	if got := s.Checkout("D", []string{"p1"}); got.Status != 200 {
		t.Errorf("D at 24 h: %+v, want 200: the lock's hold is over", got)
	}
}
