package report

import (
	"testing"
	"time"
)

// A script that runs a day (the 24-hour sold mark) reads in hours, not in
// fourteen hundred minutes.
func TestFormatInstantHours(t *testing.T) {
	for _, tt := range []struct {
		d    time.Duration
		want string
	}{
		{1500 * time.Microsecond, "1.5ms"},
		{2500 * time.Millisecond, "2.500s"},
		{59*time.Minute + 59*time.Second, "59m59s"},
		{time.Hour, "1h00m00s"},
		{24*time.Hour + 22*time.Minute + 18*time.Second, "24h22m18s"},
	} {
		if got := formatInstant(tt.d); got != tt.want {
			t.Errorf("formatInstant(%v) = %q, want %q", tt.d, got, tt.want)
		}
	}
}
