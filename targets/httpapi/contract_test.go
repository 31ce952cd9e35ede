package httpapi_test

import (
	"reflect"
	"strings"
	"testing"

	"github.com/racelab/racelab/targets/httpapi"
)

func TestParseCall(t *testing.T) {
	tests := []struct {
		in   string
		call httpapi.Call
		want httpapi.Route
	}{
		{"hit=POST /api/posts/{slug}/views field=data.views", "hit",
			httpapi.Route{Method: "POST", Path: "/api/posts/{slug}/views", Field: "data.views"}},
		{"download=/dl?who={visitor} yes=200,201 no=429,403", "download",
			httpapi.Route{Path: "/dl?who={visitor}", Yes: []int{200, 201}, No: []int{429, 403}}},
		{"checkout=put /orders/{item} yes=202 no=410 ok=reserved", "checkout",
			httpapi.Route{Method: "PUT", Path: "/orders/{item}", Yes: []int{202}, No: []int{410}, OK: "reserved"}},
		{"get=field=count key=id", "get", httpapi.Route{Field: "count", Key: "id"}},
	}
	for _, tt := range tests {
		call, got, err := httpapi.ParseCall(tt.in)
		if err != nil || call != tt.call || !reflect.DeepEqual(got, tt.want) {
			t.Errorf("ParseCall(%q) = %s %+v, %v; want %s %+v", tt.in, call, got, err, tt.call, tt.want)
		}
	}
}

func TestParseCallErrors(t *testing.T) {
	tests := map[string]string{
		"hot=POST /x/{slug}":            "CALL one of hit, get, download, quota, checkout, item",
		"hit":                           "want CALL=",
		"hit=POST /a/{slug} yes=ok":     `status "ok" is not an HTTP status`,
		"hit=POST /a/{slug} no=99":      `status "99"`,
		"hit=POST /a/{slug} max=3":      `unknown setting "max"`,
		"hit=POST":                      "method POST without a path",
		"hit=POST /a/{slug} /b":         `unexpected "/b"`,
		"hit=/a/{slug} yes=200 yes=201": "hit: yes= given twice; give each setting once",
		"get=field=a field=b":           "get: field= given twice",
	}
	for in, says := range tests {
		if _, _, err := httpapi.ParseCall(in); err == nil || !strings.Contains(err.Error(), says) {
			t.Errorf("ParseCall(%q) = %v, want an error saying %q", in, err, says)
		}
	}
}

func TestMergeAndValidate(t *testing.T) {
	m := httpapi.Contract().Merge(httpapi.Mapping{
		httpapi.CallGet:      {Path: "/views/{slug}", Field: "n"},
		httpapi.CallDownload: {No: []int{403}},
	})
	if err := m.Validate(); err != nil {
		t.Fatal(err)
	}
	get := m[httpapi.CallGet]
	if get.Method != "GET" || get.Key != "" || !reflect.DeepEqual(get.Yes, []int{200}) {
		t.Errorf("merged get = %+v; want the contract's method and statuses, and no echo check on another path", get)
	}
	if dl := m[httpapi.CallDownload]; !reflect.DeepEqual(dl.No, []int{403}) || dl.OK != "allowed" {
		t.Errorf("merged download = %+v; want no=[403] and the contract's checks on its own path", dl)
	}
	bad := map[string]httpapi.Mapping{
		"has no {item}":            {httpapi.CallItem: {Path: "/item/{slug}"}},
		"means both yes and no":    {httpapi.CallDownload: {No: []int{200}}},
		"is not one racelab sends": {httpapi.CallHit: {Method: "post!"}},
		"want one of GET, HEAD":    {httpapi.CallHit: {Method: "TELEPORT", Path: "/x/{slug}", Yes: []int{200}, Field: "n"}},
		"must start with /":        {httpapi.CallHit: {Path: "hit/{slug}"}},
	}
	for says, over := range bad {
		if err := httpapi.Contract().Merge(over).Validate(); err == nil || !strings.Contains(err.Error(), says) {
			t.Errorf("Validate of %+v = %v, want an error saying %q", over, err, says)
		}
	}
}

func TestLoadMapping(t *testing.T) {
	m, err := httpapi.LoadMapping(strings.NewReader(`{"hit": {"method": "PUT", "path": "/v/{slug}", "field": "total"}}`))
	if err != nil {
		t.Fatal(err)
	}
	if want := (httpapi.Route{Method: "PUT", Path: "/v/{slug}", Field: "total"}); !reflect.DeepEqual(m[httpapi.CallHit], want) {
		t.Errorf("hit = %+v, want %+v", m[httpapi.CallHit], want)
	}
	for in, says := range map[string]string{
		`{"hot": {}}`:              `unknown call "hot"`,
		`{"hit": {"fields": "x"}}`: `unknown field "fields"`,
		`[1, 2]`:                   "not a mapping",
		`{"hit": {"yes": "200"}}`:  "not a mapping",
		`{"hit": {"path": "/a/{slug}"}, "get": {}, "hit": {"field": "n"}}`: `call "hit" mapped twice; give each call once`,
	} {
		if _, err := httpapi.LoadMapping(strings.NewReader(in)); err == nil || !strings.Contains(err.Error(), says) {
			t.Errorf("LoadMapping(%s) = %v, want an error saying %q", in, err, says)
		}
	}
}

func TestParseSync(t *testing.T) {
	for in, want := range map[string]httpapi.Sync{"": "auto", "auto": "auto", "h2": "h2", "lastbyte": "lastbyte", "none": "none"} {
		if got, err := httpapi.ParseSync(in); err != nil || got != want {
			t.Errorf("ParseSync(%q) = %q, %v; want %q", in, got, err, want)
		}
	}
	if _, err := httpapi.ParseSync("h3"); err == nil {
		t.Error("ParseSync(h3) succeeded")
	}
}

// TestContractReadsTheOpsTable: the contract's routes, taken from the ops
// table, are the ones README's contract table lists, each with its own
// slices.
func TestContractReadsTheOpsTable(t *testing.T) {
	yes := []int{200}
	want := httpapi.Mapping{
		httpapi.CallHit:       {Method: "POST", Path: "/hit/{slug}", Yes: yes, Field: "views", Key: "slug"},
		httpapi.CallGet:       {Method: "GET", Path: "/get/{slug}", Yes: yes, Field: "views", Key: "slug"},
		httpapi.CallDownload:  {Method: "POST", Path: "/download/{visitor}", Yes: yes, No: []int{429}, Field: "count", OK: "allowed"},
		httpapi.CallQuota:     {Method: "GET", Path: "/quota/{visitor}", Yes: yes, Field: "count", Key: "visitor"},
		httpapi.CallCheckout:  {Method: "POST", Path: "/checkout/{item}", Yes: yes, No: []int{409}, OK: "reserved"},
		httpapi.CallItem:      {Method: "GET", Path: "/item/{item}", Yes: yes, Field: "claims", Key: "item"},
		httpapi.CallGetMany:   {Method: "GET", Path: "/get?slugs={slugs}", Yes: yes, Field: "{slug}"},
		httpapi.CallLimit:     {Method: "POST", Path: "/limit/{caller}", Yes: yes, No: []int{429}, Field: "count", OK: "allowed", Window: "window"},
		httpapi.CallWindow:    {Method: "GET", Path: "/limit/{caller}?window={window}", Yes: yes, Field: "count", Key: "caller"},
		httpapi.CallSubscribe: {Method: "POST", Path: "/subscribe/{subscriber}", Yes: yes, Key: "subscriber"},
		httpapi.CallCancel:    {Method: "POST", Path: "/cancel/{subscriber}", Yes: yes, Key: "subscriber"},
		httpapi.CallPlan:      {Method: "GET", Path: "/plan/{subscriber}", Yes: yes, Field: "paid", Key: "subscriber"},
		httpapi.CallOriginal:  {Method: "POST", Path: "/original/{subscriber}", Yes: yes, No: []int{403, 429}, Field: "count", OK: "granted"},
		httpapi.CallOriginals: {Method: "GET", Path: "/original/{subscriber}", Yes: yes, Field: "count", Key: "subscriber"},
	}
	got := httpapi.Contract()
	if !reflect.DeepEqual(got, want) {
		t.Errorf("Contract() =\n%v\nwant\n%v", got, want)
	}
	got[httpapi.CallHit].Yes[0] = 201
	if got[httpapi.CallGet].Yes[0] != 200 {
		t.Error("a change to one route's yes statuses showed in another's")
	}
}
