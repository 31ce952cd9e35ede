package results

import "testing"

// Plural is how every answer of a trial is said: the edges of its English
// (one, a consonant before y, a vowel before y, a one-letter word) and of
// its number (zero, negative, large) must read as they always have.
func TestPlural(t *testing.T) {
	for _, tc := range []struct {
		n    int64
		word string
		want string
	}{
		{1, "hit", "1 hit"},
		{2, "hit", "2 hits"},
		{0, "view", "0 views"},
		{-1, "view", "-1 views"},
		{1, "retry", "1 retry"},
		{3, "retry", "3 retries"},
		{2, "day", "2 days"},
		{2, "y", "2 ies"},
		{9223372036854775807, "download", "9223372036854775807 downloads"},
		{2, "a long word that does not fit the buffer on the stack", "2 a long word that does not fit the buffer on the stacks"},
	} {
		if got := Plural(tc.n, tc.word); got != tc.want {
			t.Errorf("Plural(%d, %q) = %q, want %q", tc.n, tc.word, got, tc.want)
		}
	}
}
