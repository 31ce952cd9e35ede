package load

import (
	"encoding/base64"
	"strings"
	"testing"
)

// TestDecodeHistogramMalformed: a saved histogram is the reader's input.
// Ones the decoder panics on (a header shorter than 8 bytes, a negative
// length of contents) or refuses are one error saying what was wanted,
// never a panic and never a Go runtime error's text.
func TestDecodeHistogramMalformed(t *testing.T) {
	h := NewHistogram()
	_ = h.RecordValue(250)
	_, good, _ := Summarize(h)
	negative := base64.StdEncoding.EncodeToString([]byte{0x1c, 0x84, 0x93, 0x14, 0xff, 0xff, 0xff, 0xf0, 1, 2})
	for _, s := range []string{"AAAA", negative, "not base64!", good[:len(good)/2]} {
		got, err := DecodeHistogram(s)
		if err == nil || got != nil {
			t.Errorf("DecodeHistogram(%q) = %v, %v; want an error", s, got, err)
			continue
		}
		if msg := err.Error(); !strings.HasPrefix(msg, "latency histogram: malformed; want the base64 HdrHistogram") || strings.Contains(msg, "runtime error") {
			t.Errorf("DecodeHistogram(%q): %q; want it to say what was wanted, without the runtime's words", s, msg)
		}
	}
	if back, err := DecodeHistogram(good); err != nil || back.TotalCount() != 1 {
		t.Errorf("DecodeHistogram(what Summarize saved) = %v, %v; want the one value back", back, err)
	}
}
