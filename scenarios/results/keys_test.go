package results

import (
	"errors"
	"net/url"
	"strings"
	"testing"
	"unicode/utf8"
)

// Each alphabet's keys carry what they are for, and stay fresh by id.
func TestKeyChars(t *testing.T) {
	tests := []struct {
		chars     KeyChars
		want      []string // substrings the key must hold
		wantASCII bool
	}{
		{KeyASCII, []string{"slug-s7-0-1"}, true},
		{"", []string{"slug-s7-0-1"}, true},
		{KeyUnicode, []string{"slug-s7-0-1-", "مقالة", "/", ",", "%2C", "+", " "}, false},
		{KeyPercent, []string{"slug-s7-0-1-", "%d9%85%d9%82"}, true},
	}
	for _, tt := range tests {
		t.Run(string(tt.chars), func(t *testing.T) {
			k := tt.chars.Key("slug", "s7-0-1")
			for _, w := range tt.want {
				if !strings.Contains(k, w) {
					t.Errorf("key %q lacks %q", k, w)
				}
			}
			ascii := !strings.ContainsFunc(k, func(r rune) bool { return r >= utf8.RuneSelf })
			if ascii != tt.wantASCII {
				t.Errorf("key %q: all ASCII = %v, want %v", k, ascii, tt.wantASCII)
			}
			if k == tt.chars.Key("slug", "s7-0-2") {
				t.Errorf("two ids gave the same key %q", k)
			}
		})
	}
}

// A percent key is the Arabic slug as WordPress stores it: decoding it
// once more, the bug, gives another string.
func TestPercentKeyDecodesToArabic(t *testing.T) {
	k := KeyPercent.Key("slug", "x")
	once, err := url.PathUnescape(k)
	if err != nil {
		t.Fatal(err)
	}
	if once != "slug-x-"+arabicSlug || once == k {
		t.Errorf("decoding %q once gives %q, want %q", k, once, "slug-x-"+arabicSlug)
	}
	if strings.ToLower(k) != k {
		t.Errorf("key %q: want lower-case hex, as WordPress writes it", k)
	}
}

func TestParseKeyChars(t *testing.T) {
	for _, ok := range []string{"", "ascii", "unicode", "percent"} {
		if _, err := ParseKeyChars(ok); err != nil {
			t.Errorf("ParseKeyChars(%q) = %v", ok, err)
		}
	}
	_, err := ParseKeyChars("utf8")
	if !errors.Is(err, ErrUsage) || !strings.Contains(err.Error(), `KeyChars "utf8"; want ascii, unicode, percent`) {
		t.Errorf("ParseKeyChars(utf8) = %v", err)
	}
}
