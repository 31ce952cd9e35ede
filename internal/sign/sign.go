package sign

import (
	"bytes"
	"cmp"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"maps"
	"os"
	"slices"
	"strconv"
	"strings"
)

// Field is the top-level field that holds a document's signature.
const Field = "signature"

// prefix names the algorithm in the signature, so that another one can
// follow without a new field.
const prefix = "hmac-sha256:"

// ErrUnsigned is the error of a document without a signature, when one
// is required.
var ErrUnsigned = errors.New("not signed")

// ErrAltered is the error of a document whose signature is not the key's
// over its content: it was edited after it was signed, or signed with
// another key.
var ErrAltered = errors.New("signature does not match: the document was altered, or signed with another key")

// canonical is the document without its signature, keys sorted, numbers
// as written: what encoding/json writes of the document decoded into a
// map[string]any with UseNumber (the form signatures have always been
// made over), built from the document's tokens instead, so that checking
// a document holds its canonical bytes once rather than a map per object
// (ten times the document, for a result of a hundred thousand requests).
func canonical(doc []byte) (rest []byte, sig string, err error) {
	dec := json.NewDecoder(bytes.NewReader(doc))
	dec.UseNumber()
	tok, err := dec.Token()
	if err != nil || tok != json.Delim('{') {
		return nil, "", fmt.Errorf("not one JSON object: %w", cmp.Or(err, errors.New("not an object")))
	}
	members, err := objectMembers(dec)
	if err != nil {
		return nil, "", fmt.Errorf("not one JSON object: %w", err)
	}
	if s, ok := members[Field]; ok {
		if err := json.Unmarshal(s, &sig); err != nil {
			return nil, "", fmt.Errorf("%q is not a string", Field)
		}
		delete(members, Field)
	}
	// As Decode into a map did, what follows the object is not read.
	out := writeObject(nil, members)
	return append(out, '\n'), sig, nil
}

// plain reports whether s is printable ASCII without a quote or a
// backslash: a string encoding/json writes as it is.
func plain(s string) bool {
	for i := range len(s) {
		if c := s[i]; c < 0x20 || c >= 0x7f || c == '"' || c == '\\' {
			return false
		}
	}
	return true
}

// objectMembers reads an object's members after its '{', each value in
// canonical form; a key given twice keeps its last value, as a map does.
func objectMembers(dec *json.Decoder) (map[string][]byte, error) {
	members := map[string][]byte{}
	for {
		tok, err := dec.Token()
		if err != nil {
			return nil, err
		}
		if tok == json.Delim('}') {
			return members, nil
		}
		key, ok := tok.(string)
		if !ok {
			return nil, fmt.Errorf("an object key that is not a string")
		}
		v, err := value(dec, nil)
		if err != nil {
			return nil, err
		}
		members[key] = v
	}
}

// value appends the canonical form of the next value to out.
func value(dec *json.Decoder, out []byte) ([]byte, error) {
	tok, err := dec.Token()
	if err != nil {
		return nil, err
	}
	switch t := tok.(type) {
	case json.Delim:
		if t == '{' {
			members, err := objectMembers(dec)
			if err != nil {
				return nil, err
			}
			return writeObject(out, members), nil
		}
		out = append(out, '[')
		for i := 0; dec.More(); i++ {
			if i > 0 {
				out = append(out, ',')
			}
			if out, err = value(dec, out); err != nil {
				return nil, err
			}
		}
		if _, err := dec.Token(); err != nil { // the ']'
			return nil, err
		}
		return append(out, ']'), nil
	case json.Number:
		return append(out, t...), nil
	case string:
		return appendString(out, t), nil
	case bool:
		return strconv.AppendBool(out, t), nil
	default: // nil
		return append(out, "null"...), nil
	}
}

// writeObject appends an object of canonical members, keys sorted.
func writeObject(out []byte, members map[string][]byte) []byte {
	out = append(out, '{')
	for i, k := range slices.Sorted(maps.Keys(members)) {
		if i > 0 {
			out = append(out, ',')
		}
		out = appendString(out, k)
		out = append(out, ':')
		out = append(out, members[k]...)
	}
	return append(out, '}')
}

// appendString appends s quoted as encoding/json quotes it without HTML
// escaping, the encoder's own work so that the bytes stay its bytes.
func appendString(out []byte, s string) []byte {
	if plain(s) {
		out = append(out, '"')
		out = append(out, s...)
		return append(out, '"')
	}
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	_ = enc.Encode(s) // a string always encodes
	return append(out, bytes.TrimSuffix(b.Bytes(), []byte("\n"))...)
}

func mac(key, data []byte) string {
	h := hmac.New(sha256.New, key)
	h.Write(data)
	return prefix + hex.EncodeToString(h.Sum(nil))
}

// Sign returns doc, one JSON object, with its signature under key as its
// first field; a signature it had is replaced.
func Sign(doc, key []byte) ([]byte, error) {
	rest, old, err := canonical(doc)
	if err != nil {
		return nil, err
	}
	if old != "" {
		return nil, fmt.Errorf("already signed")
	}
	i := bytes.IndexByte(doc, '{')
	field := fmt.Sprintf("%q: %q", Field, mac(key, rest))
	sep := ","
	if bytes.TrimSpace(doc[i+1:])[0] == '}' {
		sep = "" // an empty object
	}
	indent := "\n  "
	if !bytes.HasPrefix(doc[i+1:], []byte("\n")) {
		indent = ""
	}
	out := append([]byte{}, doc[:i+1]...)
	out = append(out, indent+field+sep...)
	return append(out, doc[i+1:]...), nil
}

// IfKey is Sign when there is a key, else doc as it is.
func IfKey(doc, key []byte) ([]byte, error) {
	if key == nil {
		return doc, nil
	}
	return Sign(doc, key)
}

// Check checks doc's signature under key. An unsigned document is
// ErrUnsigned; one whose signature is not key's over its content is
// ErrAltered.
func Check(doc, key []byte) error {
	rest, sig, err := canonical(doc)
	if err != nil {
		return err
	}
	if sig == "" {
		return ErrUnsigned
	}
	if !strings.HasPrefix(sig, prefix) || !hmac.Equal([]byte(sig), []byte(mac(key, rest))) {
		return ErrAltered
	}
	return nil
}

// All signs every document of a stream (JSON objects one after the
// other, as racelab writes several results) and writes them to w, each
// followed by a newline.
func All(w io.Writer, stream, key []byte) error {
	dec := json.NewDecoder(bytes.NewReader(stream))
	for {
		var raw json.RawMessage
		err := dec.Decode(&raw)
		if errors.Is(err, io.EOF) {
			return nil
		}
		if err != nil {
			return err
		}
		signed, err := Sign(raw, key)
		if err != nil {
			return err
		}
		if _, err := w.Write(append(signed, '\n')); err != nil {
			return err
		}
	}
}

// Key is the key given, else the environment's RACELAB_SIGN_KEY (getenv,
// os.Getenv when nil); nil when neither is set.
func Key(given string, getenv func(string) string) []byte {
	if getenv == nil {
		getenv = os.Getenv
	}
	if k := cmp.Or(given, getenv("RACELAB_SIGN_KEY")); k != "" {
		return []byte(k)
	}
	return nil
}

// Render writes what render writes, every document of it signed under
// key: JSON documents one after the other.
func Render(w io.Writer, key []byte, render func(io.Writer) error) error {
	var b bytes.Buffer
	if err := render(&b); err != nil {
		return err
	}
	return All(w, b.Bytes(), key)
}

// Checker is the check of each document read under key: every one must
// be signed (ErrUnsigned), and signed by key over its content
// (ErrAltered). A reader that holds a key takes no unsigned document: an
// unsigned part beside signed ones, or a signed document stripped of its
// signature, would otherwise be read as if no key had been given, and
// could change a verdict the signed ones make.
func Checker(key []byte) func(doc []byte) error {
	return func(doc []byte) error {
		if err := Check(doc, key); err != nil {
			return fmt.Errorf("signature: %w", err)
		}
		return nil
	}
}
