package output

import (
	"strings"
	"testing"
	"unicode/utf8"
)

// TestFitProgress: at 80 columns a load's progress line keeps a bar of at
// least minBar cells, dropping the least needed status first and cutting
// the name last; a wide terminal keeps every word.
func TestFitProgress(t *testing.T) {
	name := "ten-hits-one-view on http://127.0.0.1:8787"
	status := []string{"1993/s", "errors 0", "p99 12ms"}
	for _, tc := range []struct {
		width       int
		left, right string
	}{
		{200, name + " 10s/30s", "1993/s  errors 0  p99 12ms"},
		{0, name + " 10s/30s", "1993/s  errors 0  p99 12ms"},
		{100, name + " 10s/30s", "1993/s  errors 0  p99 12ms"},
		{90, name + " 10s/30s", "1993/s  errors 0"},
		{80, name + " 10s/30s", "1993/s"},
		{70, "ten-hits-one-view on http://127.0… 10s/30s", "1993/s"},
		{40, "ten… 10s/30s", "1993/s"},
	} {
		left, right := fitProgress(tc.width, name, "10s/30s", status...)
		if left != tc.left || right != tc.right {
			t.Errorf("width %d: %q | %q; want %q | %q", tc.width, left, right, tc.left, tc.right)
		}
		if bar := tc.width - utf8.RuneCountInString(left) - utf8.RuneCountInString(right) - 2; tc.width > 0 && bar < minBar {
			t.Errorf("width %d: the bar keeps %d cells, want at least %d", tc.width, bar, minBar)
		}
	}
	// A short name needs no cut at 80 columns, and keeps its errors.
	left, right := fitProgress(80, "ten-hits-one-view on sqlite", "1m0s/1m0s", status...)
	if strings.Contains(left, "…") || right != "1993/s  errors 0" {
		t.Errorf("80 columns, a short name: %q | %q", left, right)
	}
}
