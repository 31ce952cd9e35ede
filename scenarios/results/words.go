package results

import (
	"strconv"
	"strings"
	"time"
)

// Plural writes "1 hit", "2 hits", "3 retries".
func Plural(n int64, word string) string {
	// Appended rather than formatted with fmt: a trial says every answer
	// this way ("3 views"), and fmt's boxing of n was most of the
	// allocations of a virtual trial's words (issue 24).
	var buf [48]byte
	b := strconv.AppendInt(buf[:0], n, 10)
	b = append(b, ' ')
	switch {
	case n == 1:
		b = append(b, word...)
	case strings.HasSuffix(word, "y") && !strings.ContainsAny(word[max(len(word)-2, 0):len(word)-1], "aeiou"):
		b = append(append(b, word[:len(word)-1]...), "ies"...)
	default:
		b = append(append(b, word...), 's')
	}
	return string(b)
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

// OrList writes "a, b or c".
func OrList(words []string) string {
	if len(words) <= 1 {
		return strings.Join(words, "")
	}
	return strings.Join(words[:len(words)-1], ", ") + " or " + words[len(words)-1]
}

// Roughly writes a long wait as a person would say it: "50 minutes",
// "2 hours 5 minutes", "40 seconds".
func Roughly(d time.Duration) string {
	switch {
	case d < time.Minute:
		return Plural(int64(d.Round(time.Second)/time.Second), "second")
	case d < time.Hour:
		return Plural(int64(d.Round(time.Minute)/time.Minute), "minute")
	}
	d = d.Round(time.Minute)
	h, m := int(d/time.Hour), int(d%time.Hour/time.Minute)
	if m == 0 {
		return Plural(int64(h), "hour")
	}
	return Plural(int64(h), "hour") + " " + Plural(int64(m), "minute")
}
