package results

import (
	"fmt"
	"strings"
	"time"
)

// Plural writes "1 hit", "2 hits", "3 retries".
func Plural(n int64, word string) string {
	if n == 1 {
		return fmt.Sprintf("%d %s", n, word)
	}
	if strings.HasSuffix(word, "y") && !strings.ContainsAny(word[max(len(word)-2, 0):len(word)-1], "aeiou") {
		return fmt.Sprintf("%d %sies", n, strings.TrimSuffix(word, "y"))
	}
	return fmt.Sprintf("%d %ss", n, word)
}

// DurationWords writes a duration the way people say it: "60s", "2m",
// "1h30m".
func DurationWords(d time.Duration) string {
	s := d.String()
	if strings.HasSuffix(s, "m0s") {
		s = strings.TrimSuffix(s, "0s")
	}
	if strings.HasSuffix(s, "h0m") {
		s = strings.TrimSuffix(s, "0m")
	}
	if d == time.Minute {
		return "60s"
	}
	return s
}
