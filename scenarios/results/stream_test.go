package results

import (
	"errors"
	"fmt"
	"io"
	"strings"
	"testing"
	"time"
)

// countingReader counts what was read of it, to show what a refusal
// left unread.
type countingReader struct {
	r    io.Reader
	read int64
}

func (c *countingReader) Read(p []byte) (int, error) {
	n, err := c.r.Read(p)
	c.read += int64(n)
	return n, err
}

// An input refused for its size, or for what its documents would cost
// decoded, is refused without being read to its end; a syntax error
// still says its line.
func TestReadRefusesWhatWouldOutgrowItsMemory(t *testing.T) {
	none := Verifier{Run: func(*Result, time.Duration) error { return nil }}
	head := `{"schema": "racelab/result/v1", "targets": [{"trials": [{"requests": [`
	for _, tt := range []struct {
		name  string
		input io.Reader
		limit int64
		want  string
	}{
		{"an endless string", io.MultiReader(strings.NewReader(`{"schema": "racelab/result/v1", "x": "`), endless('A')), 1 << 20, "larger than 1 MiB"},
		// Whole documents, each under the size limit, refused before
		// they are decoded into many times their size.
		{"objects of three bytes", strings.NewReader(head + strings.Repeat("{},", 4_000_000) + "{}]}]}]}"), 64 << 20, "racelab holds of one input"},
		{"a map of many keys", strings.NewReader(head + `{"figures": {` + manyKeys(2_500_000) + `"z": 1}}]}]}]}`), 64 << 20, "racelab holds of one input"},
		{"a stream of tiny results", endlessRepeat(`{"schema": "racelab/result/v1"} `), 64 << 20, "racelab holds of one input"},
	} {
		in := &countingReader{r: tt.input}
		_, err := read(in, Verifier{Run: none.Run, Limit: tt.limit}, true)
		if !errors.Is(err, ErrNotResult) || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("%s: %v; want it refused with %q", tt.name, err, tt.want)
		}
		if in.read > tt.limit+1<<20 {
			t.Errorf("%s: read %d bytes; want at most the limit, %d, and a buffer", tt.name, in.read, tt.limit)
		}
	}
	_, err := read(strings.NewReader("{\"schema\": \"racelab/result/v1\"}\n\n{\"schema\":\n 5,,}"), none, true)
	if err == nil || !strings.Contains(err.Error(), "bad JSON on line 4") {
		t.Errorf("a syntax error: %v; want its line, 4", err)
	}
}

type repeatReader struct{ unit []byte }

func (r repeatReader) Read(p []byte) (int, error) {
	n := 0
	for n < len(p) {
		n += copy(p[n:], r.unit)
	}
	return n, nil
}

// endless is c without end; endlessRepeat s without end.
func endless(c byte) io.Reader         { return repeatReader{[]byte{c}} }
func endlessRepeat(s string) io.Reader { return repeatReader{[]byte(s)} }

// manyKeys are n distinct map entries.
func manyKeys(n int) string {
	var b strings.Builder
	for i := range n {
		fmt.Fprintf(&b, "\"%x\":1,", i)
	}
	return b.String()
}
