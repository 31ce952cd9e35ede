// Package plan names the two states of a subscription plan (stale-plan) as
// every store writes them: one declaration, so that a store that reads a
// plan another wrote, as the hybrid store does, cannot disagree on the
// word. The stores' SQL and Lua spell "paid" in their own text and must
// match Paid.
package story

// The plan a paid subscription holds, and a cancelled one.
const (
	Paid      = "paid"
	Cancelled = "cancelled"
)
