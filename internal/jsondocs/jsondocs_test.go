package jsondocs

import (
	"encoding/json"
	"errors"
	"io"
	"strings"
	"testing"
)

// read returns every document of input, as Next finds them.
func read(t *testing.T, input string, limit int64) (*Reader, []string, error) {
	t.Helper()
	d := NewReader(&io.LimitedReader{R: strings.NewReader(input), N: limit})
	var docs []string
	var prev []byte
	for {
		doc, err := d.Next(prev)
		if err != nil {
			return d, docs, err
		}
		docs = append(docs, string(doc))
		prev = doc
	}
}

// Documents end at their closing bracket, not at a bracket inside a
// string, whatever whitespace lies between them.
func TestNextSplitsDocuments(t *testing.T) {
	input := "{\"a\": \"}{\"}\n\n[1, {\"b\": \"\\\"]\"}]  {}\t7 \"s\"\n"
	_, docs, err := read(t, input, 1<<20)
	if !errors.Is(err, io.EOF) {
		t.Fatalf("Next = %v, want io.EOF after the last document", err)
	}
	want := []string{`{"a": "}{"}`, `[1, {"b": "\"]"}]`, `{}`, `7`, `"s"`}
	if strings.Join(docs, "|") != strings.Join(want, "|") {
		t.Fatalf("documents %q, want %q", docs, want)
	}
	for _, doc := range docs {
		if !json.Valid([]byte(doc)) {
			t.Errorf("document %q is not valid JSON", doc)
		}
	}
}

// A document the limit cuts short ends the stream without its bytes,
// so the caller can say the input was too large rather than malformed;
// one the input itself cuts short is returned for Unmarshal to refuse.
func TestNextAtTheEnd(t *testing.T) {
	if _, docs, err := read(t, `{"a": 1} {"b": "long enough to pass the limit"}`, 20); !errors.Is(err, io.EOF) || len(docs) != 1 {
		t.Fatalf("over the limit: documents %q, error %v; want the first document, then io.EOF", docs, err)
	}
	_, docs, err := read(t, `{"a": 1} {"b": `, 1<<20)
	if !errors.Is(err, io.EOF) || len(docs) != 2 || docs[1] != `{"b": ` {
		t.Fatalf("cut short: documents %q, error %v; want the cut document returned as it is", docs, err)
	}
	if json.Unmarshal([]byte(docs[1]), new(any)) == nil {
		t.Fatalf("Unmarshal accepted the cut document %q", docs[1])
	}
}

// Input that is not JSON stops at once instead of being read whole.
func TestNextStopsAtNonJSON(t *testing.T) {
	d := NewReader(&io.LimitedReader{R: strings.NewReader("\x00\x00\x00\x00"), N: 1 << 20})
	doc, err := d.Next(nil)
	if err != nil || string(doc) != "\x00" {
		t.Fatalf("Next = %q, %v; want the first byte alone", doc, err)
	}
}

// Line counts the lines of the documents before and of the one that
// failed, up to the error.
func TestLineNamesTheErrorsLine(t *testing.T) {
	d := NewReader(&io.LimitedReader{R: strings.NewReader("{\n\"a\": 1\n}\n\n{\n\"b\": ,\n}"), N: 1 << 20})
	first, err := d.Next(nil)
	if err != nil {
		t.Fatal(err)
	}
	second, err := d.Next(first)
	if err != nil {
		t.Fatal(err)
	}
	err = json.Unmarshal(second, new(any))
	if got := d.Line(second, err); got != " on line 6" {
		t.Fatalf("Line = %q for %v, want \" on line 6\"", got, err)
	}
	if got := d.Line(second, errors.New("not a syntax error")); got != "" {
		t.Fatalf("Line = %q for an error that has no offset, want \"\"", got)
	}
}

// Weigh grows with the objects and members outside strings, not with
// braces and colons inside them.
func TestWeigh(t *testing.T) {
	plain, objects, inString := Weigh([]byte(`["aaaaaaaaaaaa"]`)), Weigh([]byte(`[{"a":1},{"b":2}]`)), Weigh([]byte(`["{:}{:}{:}{:}"]`))
	if objects < plain+2*(objectCost+memberCost)-10 {
		t.Errorf("Weigh of two objects = %d, want at least %d above a string of the same size (%d)", objects, 2*(objectCost+memberCost), plain)
	}
	if inString != plain {
		t.Errorf("Weigh counted brackets inside a string: %d, want %d", inString, plain)
	}
}
