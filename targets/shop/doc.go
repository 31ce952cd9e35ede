// Package shop simulates the whole checkout of a one-of-a-kind item, as the
// five-checkouts story tells it: a lock that reserves every item of an
// order for seven minutes, all or none; a payment provider whose checkout
// sessions cannot expire sooner than thirty minutes after they are created;
// and the shop that ties them together, in one of two designs.
//
// The gap it exists to show: the reservation lapses after seven minutes,
// but the first buyer's payment page stays open for thirty. With
// DesignReserveOnly, a second buyer who reserves after seven minutes gets a
// session of their own while the first one can still pay, and the item is
// sold twice. DesignExpireFirst closes the gap the way the story does: the
// shop expires the earlier session at the provider before opening a new
// one, and refuses the second buyer as sold if the provider answers that
// the earlier session already completed. The provider's events close the
// loop: "expired" releases a reservation at once, "completed" marks the
// items sold for 24 hours.
//
// Everything runs on a clock.Clock, so that a whole checkout of minutes
// replays in virtual time in microseconds. The types are not safe for
// concurrent use: callers drive them from one goroutine (one participant).
// The package knows nothing of racelab.
package shop
