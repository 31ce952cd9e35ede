package httpapi_test

import (
	"bytes"
	"encoding/json"
	"io"
	"strings"
	"testing"

	"github.com/racelab/racelab/targets/httpapi"
)

// decoded reads body as encoding/json does, numbers as written, and
// walks path into it: the reading Pick must agree with.
func decoded(body []byte, path string) (v any, isObject, found bool) {
	dec := json.NewDecoder(bytes.NewReader(body))
	dec.UseNumber()
	var obj map[string]any
	if err := dec.Decode(&obj); err != nil || obj == nil {
		return nil, false, false
	}
	if _, err := dec.Token(); err != io.EOF {
		return nil, false, false
	}
	v = obj
	for name := range strings.SplitSeq(path, ".") {
		m, ok := v.(map[string]any)
		if !ok {
			return nil, true, false
		}
		if v, ok = m[name]; !ok {
			return nil, true, false
		}
	}
	return v, true, true
}

// FuzzPick: whatever Pick accepts, encoding/json reads as one object
// too, and finds the same thing at each path: the same kind, the same
// number as written, the same string, the same boolean.
//
//	go test -run '^$' -fuzz '^FuzzPick$' -fuzztime 10s ./targets/httpapi/jsonpick
func FuzzPick(f *testing.F) {
	for _, s := range []string{
		`{"slug":"a","views":3}`,
		` {"views":0 , "slug":"a"} `,
		`{"data":{"views":2},"data":{"x":1}}`,
		`{"data":{"views":2,"views":-1.5e+3},"ok":true}`,
		`{"views":[1,{"a":null},"x"],"ok":false}`,
		`{"a":1} {"a":2}`,
		`{"a":01}`,
		"{\"a\":\"\x01\"}",
		`{"a":"\u0041"}`,
		`[]`,
		`null`,
	} {
		f.Add([]byte(s), "views", "data.views")
	}
	f.Fuzz(func(t *testing.T, body []byte, p1, p2 string) {
		paths := [httpapi.MaxPaths]string{p1, p2, "ok", "slug"}
		var got [httpapi.MaxPaths]httpapi.Value
		if !httpapi.Pick(body, &paths, &got) {
			return
		}
		for i, path := range paths {
			if path == "" {
				continue
			}
			want, isObject, found := decoded(body, path)
			if !isObject {
				t.Fatalf("Pick took %q, which encoding/json does not read as one object", body)
			}
			g := got[i]
			if g.Found != found {
				t.Fatalf("%q at %q: Pick found %t, encoding/json %t", body, path, g.Found, found)
			}
			if !found {
				continue
			}
			switch w := want.(type) {
			case json.Number:
				if g.Kind != httpapi.Number || string(g.Raw) != string(w) {
					t.Fatalf("%q at %q: Pick %c %q, want the number %s", body, path, g.Kind, g.Raw, w)
				}
			case string:
				if g.Kind != httpapi.String || string(g.Raw) != w {
					t.Fatalf("%q at %q: Pick %c %q, want the string %q", body, path, g.Kind, g.Raw, w)
				}
			case bool:
				if w && g.Kind != httpapi.True || !w && g.Kind != httpapi.False {
					t.Fatalf("%q at %q: Pick %c, want %t", body, path, g.Kind, w)
				}
			case nil:
				if g.Kind != httpapi.Null {
					t.Fatalf("%q at %q: Pick %c, want null", body, path, g.Kind)
				}
			case map[string]any:
				if g.Kind != httpapi.Object {
					t.Fatalf("%q at %q: Pick %c, want an object", body, path, g.Kind)
				}
			case []any:
				if g.Kind != httpapi.Array {
					t.Fatalf("%q at %q: Pick %c, want an array", body, path, g.Kind)
				}
			}
		}
	})
}

// TestPickDeclines: what Pick leaves to encoding/json, it declines
// rather than reads: escapes, text that is not UTF-8, nesting past
// MaxDepth, and anything that is not one object.
func TestPickDeclines(t *testing.T) {
	deep := strings.Repeat(`{"a":`, httpapi.MaxDepth+1) + "1" + strings.Repeat("}", httpapi.MaxDepth+1)
	for _, body := range []string{`{"a":"\n"}`, "{\"a\":\"\xff\"}", deep, `[1]`, `{"a":1}x`, `{"a":1,}`, `{"a" 1}`, ``} {
		paths := [httpapi.MaxPaths]string{"a"}
		var got [httpapi.MaxPaths]httpapi.Value
		if httpapi.Pick([]byte(body), &paths, &got) {
			t.Errorf("Pick took %.40q; want it declined", body)
		}
	}
	paths := [httpapi.MaxPaths]string{"a"}
	var got [httpapi.MaxPaths]httpapi.Value
	shallow := strings.Repeat(`{"a":`, httpapi.MaxDepth-1) + "1" + strings.Repeat("}", httpapi.MaxDepth-1)
	if !httpapi.Pick([]byte(shallow), &paths, &got) || got[0].Kind != httpapi.Object {
		t.Errorf("Pick declined nesting within MaxDepth, or misread it: %+v", got[0])
	}
}
