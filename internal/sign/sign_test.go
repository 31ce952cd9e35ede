package sign

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"testing"
)

const doc = `{
  "schema": "racelab/shard/v1",
  "run": {"targets": [{"expect": "holds", "strict": true, "n": 12345678901234567890}]},
  "spread": 0.1
}`

func TestSignThenCheck(t *testing.T) {
	key := []byte("k3y")
	signed, err := Sign([]byte(doc), key)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(string(signed), "{\n  \"signature\": \"hmac-sha256:") {
		t.Errorf("signed document starts %.40q; want the signature first, indented as the rest", signed)
	}
	if err := Check(signed, key); err != nil {
		t.Errorf("the signed document: %v", err)
	}
	// Re-indented, it is the same document.
	var compact bytes.Buffer
	if err := json.Compact(&compact, signed); err != nil {
		t.Fatal(err)
	}
	if err := Check(compact.Bytes(), key); err != nil {
		t.Errorf("compacted: %v", err)
	}
	for name, d := range map[string][]byte{
		"an edited value":   bytes.Replace(signed, []byte(`"holds", "strict": true`), []byte(`"breaks", "strict": false`), 1),
		"a number edited":   bytes.Replace(signed, []byte("12345678901234567890"), []byte("12345678901234567891"), 1),
		"a field added":     bytes.Replace(signed, []byte(`"spread"`), []byte(`"x": 1, "spread"`), 1),
		"the signature cut": bytes.Replace(signed, []byte(`"signature": "hmac-sha256:`), []byte(`"signature": "hmac-sha256:0`), 1),
	} {
		if bytes.Equal(d, signed) {
			t.Fatalf("%s: the edit did not apply", name)
		}
		if err := Check(d, key); !errors.Is(err, ErrAltered) {
			t.Errorf("%s: %v; want ErrAltered", name, err)
		}
	}
	if err := Check(signed, []byte("other")); !errors.Is(err, ErrAltered) {
		t.Errorf("another key: %v; want ErrAltered", err)
	}
	if err := Check([]byte(doc), key); !errors.Is(err, ErrUnsigned) {
		t.Errorf("unsigned: %v; want ErrUnsigned", err)
	}
	if _, err := Sign(signed, key); err == nil {
		t.Errorf("signing twice: no error")
	}
}

func TestAllSignsEachDocument(t *testing.T) {
	var out bytes.Buffer
	if err := All(&out, []byte(doc+"\n{}\n"+doc), []byte("k")); err != nil {
		t.Fatal(err)
	}
	dec := json.NewDecoder(&out)
	n := 0
	for dec.More() {
		var raw json.RawMessage
		if err := dec.Decode(&raw); err != nil {
			t.Fatal(err)
		}
		if err := Check(raw, []byte("k")); err != nil {
			t.Errorf("document %d: %v", n, err)
		}
		n++
	}
	if n != 3 {
		t.Errorf("%d documents; want 3", n)
	}
}

func FuzzCheck(f *testing.F) {
	f.Add([]byte(doc))
	f.Add([]byte(`{"signature": 5}`))
	f.Add([]byte(`[]`))
	f.Fuzz(func(t *testing.T, b []byte) {
		_ = Check(b, []byte("k"))
		if s, err := Sign(b, []byte("k")); err == nil {
			if err := Check(s, []byte("k")); err != nil {
				t.Errorf("signed %q: %v", s, err)
			}
		}
	})
}

// A reader that holds a key takes only documents signed by it: unsigned,
// with an empty signature, stripped of it, altered, or signed with
// another key, each is refused for what it is.
func TestCheckerRefusesEveryDocumentNotSignedByTheKey(t *testing.T) {
	key := []byte("k3y")
	signed, err := Sign([]byte(doc), key)
	if err != nil {
		t.Fatal(err)
	}
	other, err := Sign([]byte(doc), []byte("another"))
	if err != nil {
		t.Fatal(err)
	}
	stripped := bytes.Replace(signed, []byte(`"signature": "`+mac(key, mustCanonical(t, signed))+`",`), nil, 1)
	check := Checker(key)
	if err := check(signed); err != nil {
		t.Errorf("the key's own document: %v", err)
	}
	for _, tt := range []struct {
		name string
		doc  []byte
		want error
	}{
		{"unsigned", []byte(doc), ErrUnsigned},
		{"an empty signature", []byte(`{"signature": "", ` + doc[1:]), ErrUnsigned},
		{"stripped of its signature", stripped, ErrUnsigned},
		{"altered", bytes.Replace(signed, []byte(`"holds"`), []byte(`"breaks"`), 1), ErrAltered},
		{"another key's", other, ErrAltered},
	} {
		if bytes.Equal(tt.doc, signed) {
			t.Fatalf("%s: the edit did not apply", tt.name)
		}
		err := check(tt.doc)
		if !errors.Is(err, tt.want) || !strings.HasPrefix(fmt.Sprint(err), "signature: ") {
			t.Errorf("%s: %v; want %q after \"signature: \"", tt.name, err, tt.want)
		}
	}
}

func mustCanonical(t *testing.T, doc []byte) []byte {
	t.Helper()
	rest, _, err := canonical(doc)
	if err != nil {
		t.Fatal(err)
	}
	return rest
}

// mapCanonical is the canonical form as signatures were first made: the
// document decoded into a map and encoded again.
func mapCanonical(doc []byte) ([]byte, bool) {
	dec := json.NewDecoder(bytes.NewReader(doc))
	dec.UseNumber()
	var m map[string]any
	if err := dec.Decode(&m); err != nil || m == nil {
		return nil, false
	}
	delete(m, Field)
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(m); err != nil {
		return nil, false
	}
	return b.Bytes(), true
}

// The streamed canonical form is the map form byte for byte, so that
// documents signed before it still check.
func FuzzCanonicalIsTheMapForm(f *testing.F) {
	f.Add([]byte(doc))
	f.Add([]byte(`{"b": [1, 2.50, {"z": null, "a": "\u2028<>&\"\\ é \u0001"}], "a": true, "a": false, "signature": "x"}`))
	f.Add([]byte("{\"k\": \"\xff\xfe\", \"n\": -0.0e+3}"))
	f.Fuzz(func(t *testing.T, b []byte) {
		want, ok := mapCanonical(b)
		if !ok {
			return
		}
		got, _, err := canonical(b)
		if err != nil {
			t.Fatalf("%q: %v; the map form reads it", b, err)
		}
		if !bytes.Equal(got, want) {
			t.Errorf("%q:\n got %s\nwant %s", b, got, want)
		}
	})
}
