package results

import (
	"fmt"
	"strings"

	"github.com/racelab/racelab/internal/usage"
)

// KeyChars says what the fresh keys of a run are made of. A store must
// hand every key back as it was given; keys of plain ASCII never show a
// service that decodes a key twice, or splits a list on a comma that was
// inside a key, so the other alphabets are for finding exactly that.
type KeyChars string

// The key alphabets.
const (
	// KeyASCII keys are letters, digits and hyphens: slug-s7-0-0.
	KeyASCII KeyChars = "ascii"
	// KeyUnicode keys carry Arabic letters and the characters a URL
	// reserves (/ , % + and a space): a service must round-trip them all.
	KeyUnicode KeyChars = "unicode"
	// KeyPercent keys are Arabic slugs stored percent-encoded, as
	// WordPress stores them (%d9%85%d9%82…): sent in a URL they are
	// encoded once more (%25d9…), and a service that decodes twice looks
	// up another string.
	KeyPercent KeyChars = "percent"
)

// keyCharsNames lists the alphabets as a user types them.
var keyCharsNames = []string{string(KeyASCII), string(KeyUnicode), string(KeyPercent)}

// ParseKeyChars reads a --key-chars value; empty means KeyASCII.
func ParseKeyChars(s string) (KeyChars, error) {
	switch k := KeyChars(s); k {
	case "":
		return KeyASCII, nil
	case KeyASCII, KeyUnicode, KeyPercent:
		return k, nil
	}
	return "", usage.Fieldf("KeyChars", "{} %q; want %s", s, strings.Join(keyCharsNames, ", "))
}

// arabicSlug is "مقالة-عربية" (an Arabic post), the kind of slug seed 002's
// blog kept percent-encoded.
const arabicSlug = "مقالة-عربية"

// reserved carries the characters a URL gives a meaning to, which a key
// must keep: a path separator, the batch read's list separator, an escape
// that decodes to a comma (%2C: a second decoding turns it into one), the
// form encoding of a space, and a space.
const reserved = "/a,b%2Cc+d e"

// Key is a trial's key in the alphabet: prefix and id (the run, target
// and trial) keep it fresh, and the alphabet says what else it carries.
func (k KeyChars) Key(prefix, id string) string {
	switch k {
	case KeyUnicode:
		return fmt.Sprintf("%s-%s-%s%s", prefix, id, arabicSlug, reserved)
	case KeyPercent:
		return fmt.Sprintf("%s-%s-%s", prefix, id, wordpressEncode(arabicSlug))
	}
	return prefix + "-" + id
}

// wordpressEncode percent-encodes every byte of s that is not ASCII, in
// lower-case hex, as WordPress writes a post's slug.
func wordpressEncode(s string) string {
	var b strings.Builder
	for i := range len(s) {
		c := s[i]
		if c < 0x80 {
			b.WriteByte(c)
			continue
		}
		fmt.Fprintf(&b, "%%%02x", c)
	}
	return b.String()
}
