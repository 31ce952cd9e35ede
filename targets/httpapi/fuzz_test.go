package httpapi

import (
	"encoding/json"
	"net/http"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/racelab/racelab/targets/httpapi/burst"
)

// The fuzz targets below take the two parsers of what racelab is given by
// others: the --http-call flag (ParseCall) and a service's answer (decode).
// CI runs each for a few seconds:
//
//	go test -run '^$' -fuzz '^FuzzParseCall$' -fuzztime 10s ./targets/httpapi
//	go test -run '^$' -fuzz '^FuzzDecode$' -fuzztime 10s ./targets/httpapi
//	go test -run '^$' -fuzz '^FuzzDecodeRoundTrip$' -fuzztime 10s ./targets/httpapi
//
// Their seed corpora are under testdata/fuzz and run with every go test.

// formatCall writes call and r back as ParseCall reads them: the inverse
// the round trip of FuzzParseCall checks against.
func formatCall(call Call, r Route) string {
	words := []string{}
	if r.Method != "" {
		words = append(words, r.Method)
	}
	if r.Path != "" {
		words = append(words, r.Path)
	}
	codes := func(cs []int) string {
		s := make([]string, len(cs))
		for i, c := range cs {
			s[i] = strconv.Itoa(c)
		}
		return strings.Join(s, ",")
	}
	if r.Yes != nil {
		words = append(words, "yes="+codes(r.Yes))
	}
	if r.No != nil {
		words = append(words, "no="+codes(r.No))
	}
	for _, kv := range [][2]string{{"field", r.Field}, {"key", r.Key}, {"ok", r.OK}} {
		if kv[1] != "" {
			words = append(words, kv[0]+"="+kv[1])
		}
	}
	return string(call) + "=" + strings.Join(words, " ")
}

// FuzzParseCall: ParseCall never panics; what it accepts names a known
// call, holds no space in any part, has statuses that are HTTP statuses,
// and reads back the same once written out again; merged onto the
// contract, it validates or fails with an error, and a valid one builds a
// client whose request targets are well formed.
func FuzzParseCall(f *testing.F) {
	for _, s := range []string{
		"hit=POST /api/posts/{slug}/views field=data.views",
		"download=/dl?who={visitor} yes=200,201 no=429,403",
		"checkout=put /orders/{item} yes=202 no=410 ok=reserved",
		"get=field=count key=id",
		"quota=GET /v1/quota/{visitor} field=data.count key=visitor",
		"item=/items/{item} field=claims",
		"hit=POST /a/{slug} yes=200 yes=201",
		"hot=POST /x/{slug}",
		"hit=POST",
		" hit = POST  /a/{slug}\tfield=n ",
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		call, r, err := ParseCall(s)
		if err != nil {
			if call != "" || !reflect.DeepEqual(r, Route{}) {
				t.Fatalf("ParseCall(%q) failed (%v) but returned %s %+v", s, err, call, r)
			}
			if err.Error() == "" {
				t.Fatalf("ParseCall(%q): an empty error", s)
			}
			return
		}
		if !slices.Contains(Calls(), call) {
			t.Fatalf("ParseCall(%q) = call %q, not a call of the contract", s, call)
		}
		for _, part := range []string{r.Method, r.Path, r.Field, r.Key, r.OK} {
			if strings.ContainsFunc(part, isSpace) {
				t.Fatalf("ParseCall(%q) = %+v: a part holds a space", s, r)
			}
		}
		if r.Path != "" && !strings.HasPrefix(r.Path, "/") || r.Method != "" && r.Path == "" {
			t.Fatalf("ParseCall(%q) = %+v: a path must start with / and a method needs a path", s, r)
		}
		for _, code := range slices.Concat(r.Yes, r.No) {
			if code < 100 || code > 599 {
				t.Fatalf("ParseCall(%q) = %+v: status %d", s, r, code)
			}
		}
		again := formatCall(call, r)
		call2, r2, err := ParseCall(again)
		if err != nil || call2 != call || !reflect.DeepEqual(r2, r) {
			t.Fatalf("ParseCall(%q) = %s %+v, written %q, read back %s %+v, %v", s, call, r, again, call2, r2, err)
		}
		m := Contract().Merge(Mapping{call: r})
		if err := m.Validate(); err != nil {
			return
		}
		c, err := New(MustParseURL(t, "http://127.0.0.1:1/base"), Config{Mapping: Mapping{call: r}})
		if err != nil {
			t.Fatalf("New with a mapping that validates: %v", err)
		}
		defer c.Close()
		for _, key := range []string{"slug-1", "a b/ç?&#%", ""} {
			target := c.target(call, key)
			if !strings.HasPrefix(target, "/base/") || strings.ContainsAny(target, " \t\r\n#") {
				t.Fatalf("route %+v, key %q: request target %q", r, key, target)
			}
		}
	})
}

func isSpace(r rune) bool { return strings.TrimSpace(string(r)) == "" }

// FuzzDecode: whatever a service answers, decode never panics, and an
// answer it takes without an error is one the route allows: a listed
// status, yes exactly when the status says so, a whole body that is one
// JSON object when the route reads one, and at the route's field the
// non-negative whole number the reply carries.
func FuzzDecode(f *testing.F) {
	f.Add(uint8(0), 200, "slug-1", []byte(`{"slug":"slug-1","views":3}`), "")
	f.Add(uint8(1), 200, "slug-1", []byte(`{"slug":"slug-1","views":0}`), "1700000000000000000")
	f.Add(uint8(2), 429, "v", []byte(`{"allowed":false,"count":5}`), "")
	f.Add(uint8(2), 200, "v", []byte(`{"allowed":true,"count":1} {"allowed":true,"count":2}`), "")
	f.Add(uint8(3), 200, "v", []byte(`{"visitor":"v","day":"2026-03-14","count":2,"limit":5}`), "")
	f.Add(uint8(4), 409, "item-1", []byte(`{"error":"being checked out"}`), "x")
	f.Add(uint8(4), 200, "item-1", []byte(`{"reserved":true}`), "-1")
	f.Add(uint8(5), 200, "item-1", []byte(`{"item":"item-1","stock":1,"claims":1e0}`), "")
	f.Add(uint8(0), 200, "s", []byte(`{"slug":"s","views":-1}`), "")
	f.Add(uint8(0), 500, "s", []byte("<html>\x00\xff</html>"), "")
	f.Add(uint8(1), 200, "ç", []byte(`{"slug":"\u00e7","views":99999999999999999999}`), "")
	f.Add(uint8(10), 200, "s", []byte(`{"subscriber":"s","paid":false}`), "")
	f.Add(uint8(10), 200, "s", []byte(`{"subscriber":"s","paid":1}`), "")
	f.Add(uint8(11), 403, "s", []byte(`{"granted":false,"count":0}`), "")
	f.Fuzz(func(t *testing.T, which uint8, status int, key string, body []byte, arrival string) {
		c, call, r := decodeCall(t, which)
		h := http.Header{}
		if arrival != "" {
			h.Set(ArrivalHeader, arrival)
		}
		reply, err := c.decode(call, key, burst.Answer{Status: status, Header: h, Body: body, Arrival: burst.ArrivalOf(h)})
		if err != nil {
			if err.Error() == "" {
				t.Fatal("an empty error")
			}
			return
		}
		if !slices.Contains(slices.Concat(r.Yes, r.No), status) {
			t.Fatalf("status %d taken by %s, which lists %v and %v", status, call, r.Yes, r.No)
		}
		if call == CallPlan {
			// A plan read says yes or no in its body: paid only with a
			// yes status and true at the field.
			var obj map[string]any
			_ = json.Unmarshal(body, &obj)
			paid, _ := obj[r.Field].(bool)
			var one int64 // a paid plan reads as 1
			if reply.OK {
				one = 1
			}
			if reply.OK != (slices.Contains(r.Yes, status) && paid) || reply.Value != one {
				t.Fatalf("plan %d %q read as ok=%t value %d", status, body, reply.OK, reply.Value)
			}
			return
		}
		if reply.OK != slices.Contains(r.Yes, status) {
			t.Fatalf("status %d read as ok=%t", status, reply.OK)
		}
		if reply.Value < 0 {
			t.Fatalf("value %d", reply.Value)
		}
		if !reply.Arrival.IsZero() && reply.Arrival.UnixNano() <= 0 {
			t.Fatalf("arrival %q read as %v", arrival, reply.Arrival)
		}
		if r.Field == "" {
			return
		}
		var obj map[string]any
		if err := json.Unmarshal(body, &obj); err != nil || obj == nil {
			t.Fatalf("%s took a body that is not one JSON object (%v): %q", call, err, body)
		}
		dec := json.NewDecoder(strings.NewReader(string(body)))
		dec.UseNumber()
		_ = dec.Decode(&obj)
		n, ok := obj[r.Field].(json.Number)
		if v, err := n.Int64(); !ok || err != nil || v != reply.Value {
			t.Fatalf("%s read %d from %q", call, reply.Value, body)
		}
	})
}

// FuzzDecodeRoundTrip: an answer written as the contract's server writes
// it, for any key and any count, reads back as that count and that yes or
// no: keys with quotes, slashes or any Unicode, and counts up to the
// largest int64, survive the JSON.
func FuzzDecodeRoundTrip(f *testing.F) {
	f.Add(uint8(0), true, "slug-1", int64(10))
	f.Add(uint8(2), false, "visitor-ç", int64(5))
	f.Add(uint8(3), true, `a"b\c/d`, int64(1<<62))
	f.Add(uint8(4), false, "item/1?x=#", int64(0))
	f.Add(uint8(5), true, "\u2028\x00", int64(9223372036854775807))
	f.Add(uint8(8), true, "0", int64(0))              // subscribe: no count
	f.Add(uint8(10), false, "subscriber-1", int64(0)) // plan: not paid
	f.Add(uint8(11), false, "subscriber-1", int64(5)) // original: refused at 5
	f.Fuzz(func(t *testing.T, which uint8, ok bool, key string, value int64) {
		if value < 0 {
			value = -(value + 1)
		}
		if !utf8.ValidString(key) {
			t.Skip("JSON carries text only: a key that is not UTF-8 cannot be echoed")
		}
		c, call, r := decodeCall(t, which)
		paid := ok // a plan read answers yes or no in its body
		if len(r.No) == 0 {
			ok = true // a read has no refusal
		}
		status := r.Yes[0]
		if !ok {
			status = r.No[0]
		}
		obj := map[string]any{}
		switch {
		case call == CallPlan:
			obj[r.Field] = paid
		case r.Field != "":
			obj[r.Field] = value
		}
		if r.Key != "" {
			obj[r.Key] = key
		}
		if r.OK != "" {
			obj[r.OK] = ok
		}
		if r.Window != "" {
			obj[r.Window] = 7 // the limiter's answers name their window, yes or no
		}
		body, err := json.Marshal(obj)
		if err != nil {
			t.Fatal(err)
		}
		reply, err := c.decode(call, key, burst.Answer{Status: status, Header: http.Header{}, Body: body})
		if r.Window != "" && err == nil && reply.Window != 7 {
			t.Fatalf("%s %d %s: read window %d, want 7", call, status, body, reply.Window)
		}
		want := value
		switch {
		case call == CallPlan:
			ok, want = paid, 0
			if paid {
				want = 1
			}
		case r.Field == "":
			want = 0
			if ok && call == CallCheckout {
				want = 1 // one claim
			}
		}
		if err != nil || reply.OK != ok || reply.Value != want {
			t.Fatalf("%s %d %s for key %q: read %+v, %v; want ok=%t value %d", call, status, body, key, reply, err, ok, want)
		}
	})
}

// decodeCall opens a client of the contract, closed when the test ends,
// and picks the call which names, wrapping around: the fuzzers' way to
// choose a call and its route.
func decodeCall(t *testing.T, which uint8) (*Client, Call, Route) {
	t.Helper()
	c, err := New(MustParseURL(t, "http://127.0.0.1:1"), Config{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	call := Calls()[int(which)%len(Calls())]
	return c, call, c.routes[call]
}
