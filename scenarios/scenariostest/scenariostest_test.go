package scenariostest

import "testing"

// Lookup finds a built-in story and a race file, each by the name a test
// gives it.
func TestLookup(t *testing.T) {
	for name, want := range map[string]string{
		"five-checkouts":            "five-checkouts",
		"../races/coupon.race.yaml": "coupon-once",
	} {
		if got := Lookup(t, name).Name; got != want {
			t.Errorf("Lookup(%q).Name = %q, want %q", name, got, want)
		}
	}
}
