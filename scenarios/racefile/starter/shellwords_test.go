package starter

import (
	"slices"
	"strings"
	"testing"
)

func TestSplit(t *testing.T) {
	for _, tc := range []struct {
		line string
		want []string
	}{
		{"", nil},
		{"  # only a comment", nil},
		{`run six-of-five --rate 20/s -t 'kv?route=spread' -o "markdown" # a comment`,
			[]string{"run", "six-of-five", "--rate", "20/s", "-t", "kv?route=spread", "-o", "markdown"}},
		// A browser's copy as cURL (bash): continuations, $'…' with escapes,
		// a quote inside the other kind, JSON in single quotes.
		{"curl 'https://x.example/a?b=1' \\\n  -H 'content-type: application/json' \\\r\n  --data-raw $'{\"n\":\"it\\'s\\n\"}'",
			[]string{"curl", "https://x.example/a?b=1", "-H", "content-type: application/json", "--data-raw", "{\"n\":\"it's\n\"}"}},
		{`a "b \"c\" \$d" e\ f 'g''h' '' {x}`, []string{"a", `b "c" $d`, "e f", "gh", "", "{x}"}},
	} {
		got, err := Split(tc.line)
		if err != nil || !slices.Equal(got, tc.want) {
			t.Errorf("Split(%q) = %q, %v; want %q", tc.line, got, err, tc.want)
		}
	}
}

// TestSplitRefuses: whatever a shell would expand or run is an error in
// one line that names it, never words that differ from what was written.
func TestSplitRefuses(t *testing.T) {
	for _, tc := range []struct{ line, says string }{
		{`run x -o markdown+="$GITHUB_STEP_SUMMARY"`, "$ parameter"},
		{"curl $URL", "$ parameter"},
		{"curl $(cat url)", "command substitution"},
		{"curl `cat url`", "command substitution"},
		{"curl x/$((1+1))", "arithmetic"},
		{"curl ~/x", "~"},
		{"curl x | jq .", "plain command"},
		{"curl x > out", "plain command"},
		{"A=1 curl x", "plain command"},
		{"curl x; curl y", "several commands"},
		{"curl x\ncurl y", "several commands"},
		{`curl -d {"a":1,"b":2}`, "brace expansion"},
		{"curl x/{1..99999999}", "brace expansion"},
		{"curl 'x", "not a command"},
		{`curl "x`, "not a command"},
	} {
		got, err := Split(tc.line)
		if err == nil {
			t.Errorf("Split(%q) = %q; want an error", tc.line, got)
			continue
		}
		if msg := err.Error(); !strings.Contains(msg, tc.says) || strings.Contains(msg, "\n") {
			t.Errorf("Split(%q): %q; want one line saying %q", tc.line, msg, tc.says)
		}
	}
}

// FuzzSplit feeds Split any line: it never panics, an error is one line,
// and words it gives, quoted back in single quotes, split to themselves.
//
//	go test -run '^$' -fuzz '^FuzzSplit$' -fuzztime 10s ./scenarios/racefile
func FuzzSplit(f *testing.F) {
	for _, seed := range []string{
		`curl 'https://x.example/a?b=1' -H 'a: b' --data-raw $'{"n":"it\'s"}'`,
		"curl x \\\n -d \"a\\\"b\" # done",
		`a "$b" $(c) ~d {e,f} 'g`,
	} {
		f.Add(seed)
	}
	f.Fuzz(func(t *testing.T, line string) {
		words, err := Split(line)
		if err != nil {
			if strings.Contains(err.Error(), "\n") {
				t.Fatalf("Split(%q): an error of several lines: %q", line, err)
			}
			return
		}
		quoted := make([]string, len(words))
		for i, w := range words {
			quoted[i] = "'" + strings.ReplaceAll(w, "'", `'\''`) + "'"
		}
		again, err := Split(strings.Join(quoted, " "))
		if err != nil || !slices.Equal(again, words) {
			t.Fatalf("Split(%q) = %q; quoted back, %q, %v", line, words, again, err)
		}
	})
}
