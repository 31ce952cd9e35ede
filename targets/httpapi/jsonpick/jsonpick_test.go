package jsonpick_test

import (
	"bytes"
	"encoding/json"
	"io"
	"strings"
	"testing"

	"github.com/racelab/racelab/targets/httpapi/jsonpick"
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
		paths := [jsonpick.MaxPaths]string{p1, p2, "ok", "slug"}
		var got [jsonpick.MaxPaths]jsonpick.Value
		if !jsonpick.Pick(body, &paths, &got) {
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
				if g.Kind != jsonpick.Number || string(g.Raw) != string(w) {
					t.Fatalf("%q at %q: Pick %c %q, want the number %s", body, path, g.Kind, g.Raw, w)
				}
			case string:
				if g.Kind != jsonpick.String || string(g.Raw) != w {
					t.Fatalf("%q at %q: Pick %c %q, want the string %q", body, path, g.Kind, g.Raw, w)
				}
			case bool:
				if w && g.Kind != jsonpick.True || !w && g.Kind != jsonpick.False {
					t.Fatalf("%q at %q: Pick %c, want %t", body, path, g.Kind, w)
				}
			case nil:
				if g.Kind != jsonpick.Null {
					t.Fatalf("%q at %q: Pick %c, want null", body, path, g.Kind)
				}
			case map[string]any:
				if g.Kind != jsonpick.Object {
					t.Fatalf("%q at %q: Pick %c, want an object", body, path, g.Kind)
				}
			case []any:
				if g.Kind != jsonpick.Array {
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
	deep := strings.Repeat(`{"a":`, jsonpick.MaxDepth+1) + "1" + strings.Repeat("}", jsonpick.MaxDepth+1)
	for _, body := range []string{`{"a":"\n"}`, "{\"a\":\"\xff\"}", deep, `[1]`, `{"a":1}x`, `{"a":1,}`, `{"a" 1}`, ``} {
		paths := [jsonpick.MaxPaths]string{"a"}
		var got [jsonpick.MaxPaths]jsonpick.Value
		if jsonpick.Pick([]byte(body), &paths, &got) {
			t.Errorf("Pick took %.40q; want it declined", body)
		}
	}
	paths := [jsonpick.MaxPaths]string{"a"}
	var got [jsonpick.MaxPaths]jsonpick.Value
	shallow := strings.Repeat(`{"a":`, jsonpick.MaxDepth-1) + "1" + strings.Repeat("}", jsonpick.MaxDepth-1)
	if !jsonpick.Pick([]byte(shallow), &paths, &got) || got[0].Kind != jsonpick.Object {
		t.Errorf("Pick declined nesting within MaxDepth, or misread it: %+v", got[0])
	}
}
