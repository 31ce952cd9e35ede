package story

// The plan a paid subscription holds, and a cancelled one (stale-plan), as
// every store writes them: one declaration, so that a store that reads a
// plan another wrote, as the hybrid store does, cannot disagree on the
// word. The stores' SQL and Lua spell "paid" in their own text and must
// match Paid.
const (
	Paid      = "paid"
	Cancelled = "cancelled"
)
