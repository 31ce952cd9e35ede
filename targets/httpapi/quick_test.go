package httpapi

import (
	"net/http"
	"reflect"
	"testing"

	"github.com/racelab/racelab/targets/httpapi/burst"
)

// FuzzDecodeQuick: whatever decodeQuick accepts, decodeJSON reads the
// same way, to the same reply and no error: the quick reading never
// passes an answer the decoded one would refuse, nor reads it otherwise.
// Half the routes are mapped onto nested fields (data.…) so that the walk
// into objects is fuzzed too.
//
//	go test -run '^$' -fuzz '^FuzzDecodeQuick$' -fuzztime 10s ./targets/httpapi
func FuzzDecodeQuick(f *testing.F) {
	for _, s := range []struct {
		which  uint8
		status int
		key    string
		body   string
	}{
		{0, 200, "slug-1", `{"slug":"slug-1","views":3}`},
		{1, 200, "slug-1", ` {"views":0 , "slug":"slug-1"} `},
		{2, 429, "v", `{"allowed":false,"count":5}`},
		{2, 200, "v", `{"allowed":true,"count":1} {"allowed":true,"count":2}`},
		{3, 200, "v", `{"visitor":"v","day":"2026-03-14","count":2,"limit":5}`},
		{4, 200, "item-1", `{"reserved":true}`},
		{5, 200, "item-1", `{"item":"item-1","stock":1,"claims":1e0}`},
		{0, 200, "s", `{"slug":"s","views":1,"views":-1}`},
		{0, 200, "s", `{"slug":"s","views":[1,{"a":null}],"views":7}`},
		{128, 200, "s", `{"data":{"slug":"s","views":2},"data":{"views":3}}`},
		{128, 200, "s", `{"data":{"slug":"s","views":2,"x":[true,false,-0.5e+3]}}`},
		{1, 200, "ç", `{"slug":"ç","views":9}`},
		{1, 200, "s", "{\"slug\":\"s\",\"views\":1}\x00"},
	} {
		f.Add(s.which, s.status, s.key, []byte(s.body))
	}
	f.Fuzz(func(t *testing.T, which uint8, status int, key string, body []byte) {
		c, call, _ := decodeCall(t, which&127)
		if which&128 != 0 {
			r := c.routes[call]
			for _, p := range []*string{&r.Field, &r.Key, &r.OK, &r.Window} {
				if *p != "" {
					*p = "data." + *p
				}
			}
			c.routes[call] = r
		}
		a := burst.Answer{Status: status, Header: http.Header{}, Body: body}
		quick, ok := c.decodeQuick(call, key, a)
		if !ok {
			return
		}
		decoded, err := c.decodeJSON(call, key, a)
		if err != nil || !reflect.DeepEqual(quick, decoded) {
			t.Fatalf("%s %d %q for key %q: quick read %+v, decoded %+v, %v", call, status, body, key, quick, decoded, err)
		}
	})
}

// TestDecodeQuickTakesTheContract: the answers racelab serve gives are
// read the quick way, not handed on to encoding/json; the cost of a load's
// requests rests on it (issue 24).
func TestDecodeQuickTakesTheContract(t *testing.T) {
	tests := []struct {
		call   Call
		status int
		key    string
		body   string
		want   int64
	}{
		{CallHit, 200, "a", `{"slug":"a","views":12}`, 12},
		{CallGet, 200, "a b", `{"slug":"a b","views":0}`, 0},
		{CallDownload, 429, "v", `{"allowed":false,"count":5}`, 5},
		{CallCheckout, 200, "i", `{"reserved":true}`, 1},
		{CallCheckout, 409, "i", `{"error":"being checked out","free_at":"2026-01-01T00:00:00Z"}`, 0},
		{CallItem, 200, "i", `{"item":"i","stock":1,"claims":1}`, 1},
		{CallLimit, 200, "c", `{"allowed":true,"count":3,"window":29000000}`, 3},
	}
	for _, tt := range tests {
		c, _, _ := decodeCall(t, 0)
		got, ok := c.decodeQuick(tt.call, tt.key, burst.Answer{Status: tt.status, Header: http.Header{}, Body: []byte(tt.body)})
		if !ok || got.Value != tt.want {
			t.Errorf("%s %d %s: quick read %+v, %t; want value %d, read quickly", tt.call, tt.status, tt.body, got, ok, tt.want)
		}
	}
}
