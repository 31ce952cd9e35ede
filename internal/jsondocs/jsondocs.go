package jsondocs

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
)

// Costs of decoded values beyond their bytes, as weigh counts them: a
// request decoded is some 130 bytes; a member of an object costs nothing
// more in a struct, and some 40 bytes as an entry of a map (figures,
// answers read back), 24 a compromise that keeps honest results in.
const (
	objectCost = 160
	memberCost = 24
)

// documentCost is what a document costs beside its objects: a result
// decoded is some 500 bytes, and the checks of each are kept until every
// document of the input has been read. A caller adds up the weights of
// an input's documents against its own bound, so that a pipe of a
// million tiny documents is refused like one large one.
const documentCost = 2 << 10

// Weigh estimates the memory doc takes once decoded: its bytes, and a
// cost for each object and each member of one, counted outside strings.
func Weigh(doc []byte) int64 {
	w := int64(len(doc)) + documentCost
	var q quoted
	for _, c := range doc {
		switch {
		case q.inside(c):
		case c == '{':
			w += objectCost
		case c == ':':
			w += memberCost
		}
	}
	return w
}

// quoted follows a JSON text byte by byte to tell its strings from the
// rest: the brackets and colons that count are the ones outside strings.
type quoted struct{ in, esc bool }

// inside takes the next byte c and reports whether it belongs to a
// string, its quotes included.
func (q *quoted) inside(c byte) bool {
	switch {
	case q.in && q.esc:
		q.esc = false
	case q.in && c == '\\':
		q.esc = true
	case c == '"':
		q.in = !q.in
		return true
	}
	return q.in
}

// Reader reads the documents of a stream one at a time, each as its
// bytes and no more: encoding/json's Decoder would hold a buffer of
// twice the largest document, and a copy of it, for the whole read. It
// only finds where a document ends (its brackets, outside strings);
// json.Unmarshal checks its syntax, and Line says where an error is.
type Reader struct {
	r *bufio.Reader
	// over reports whether the input went past its limit: what was read
	// of a document then is dropped, not joined, and next ends.
	over func() bool
	// lines counts the newlines before the current document.
	lines int
}

// NewReader reads the documents of r, which bounds the input: once r
// has no bytes left, a document it cut short ends the stream.
func NewReader(r *io.LimitedReader) *Reader {
	return &Reader{r: bufio.NewReaderSize(r, 64<<10), over: func() bool { return r.N <= 0 }}
}

// Next is the next document's bytes, io.EOF after the last. A document
// cut short is returned as it is, for json.Unmarshal to refuse; a
// top-level value that is not an object or array ends at the first byte
// that cannot be part of it, so that input that is not JSON (/dev/zero)
// stops at once. prev is the document before, whose lines it counts.
func (d *Reader) Next(prev []byte) ([]byte, error) {
	d.lines += bytes.Count(prev, []byte("\n"))
	var doc blocks
	for {
		c, err := d.r.ReadByte()
		if err != nil {
			return nil, err
		}
		if c == '\n' {
			d.lines++
		}
		if c != ' ' && c != '\t' && c != '\r' && c != '\n' {
			doc.add(c)
			break
		}
	}
	if c := doc.first(); c != '{' && c != '[' {
		for {
			c, err := d.r.ReadByte()
			if err == io.EOF {
				return doc.join(), nil
			}
			if err != nil {
				return nil, err
			}
			if !bytes.ContainsRune([]byte(`"\+-.0123456789abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ`), rune(c)) {
				_ = d.r.UnreadByte()
				return doc.join(), nil
			}
			doc.add(c)
		}
	}
	depth := 1
	var q quoted
	for depth > 0 {
		c, err := d.r.ReadByte()
		if err == io.EOF && d.over() {
			return nil, io.EOF // the caller says how large it was
		}
		if err == io.EOF {
			return doc.join(), nil // cut short: Unmarshal says so
		}
		if err != nil {
			return nil, err
		}
		doc.add(c)
		switch {
		case q.inside(c):
		case c == '{' || c == '[':
			depth++
		case c == '}' || c == ']':
			depth--
		}
	}
	return doc.join(), nil
}

// blocks holds a document as it is read in blocks of up to blockSize, joined
// once at its end into exactly its size: a slice grown by append would
// hold its old and its new array at once, near twice the document, at
// every growth.
type blocks struct {
	full [][]byte
	last []byte
}

const blockSize = 1 << 20

func (b *blocks) add(c byte) {
	if len(b.last) == cap(b.last) {
		if b.last != nil {
			b.full = append(b.full, b.last)
		}
		// Small at first, so that a small document costs little.
		b.last = make([]byte, 0, min(blockSize, max(4<<10, 2*cap(b.last))))
	}
	b.last = append(b.last, c)
}

func (b *blocks) first() byte {
	if len(b.full) > 0 {
		return b.full[0][0]
	}
	return b.last[0]
}

func (b *blocks) join() []byte {
	if len(b.full) == 0 {
		return b.last
	}
	n := len(b.last)
	for _, f := range b.full {
		n += len(f)
	}
	out := make([]byte, 0, n)
	for _, f := range b.full {
		out = append(out, f...)
	}
	return append(out, b.last...)
}

// Line says on which line of the stream a syntax error of doc is.
func (d *Reader) Line(doc []byte, err error) string {
	var syn *json.SyntaxError
	if !errors.As(err, &syn) {
		return ""
	}
	return fmt.Sprintf(" on line %d", 1+d.lines+bytes.Count(doc[:min(int(syn.Offset), len(doc))], []byte("\n")))
}
