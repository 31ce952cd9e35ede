package httpapi

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"maps"
	"net/http"
	"slices"
	"strconv"
	"strings"

	"github.com/racelab/racelab/targets/story"
)

// Call names one request of the contract: a story's request or the read
// that tells what the store counted.
type Call string

// The contract's calls, by the first word of their route.
const (
	CallHit      Call = "hit"      // POST /hit/{slug}: ten-hits-one-view's request
	CallGet      Call = "get"      // GET /get/{slug}: the views counted
	CallDownload Call = "download" // POST /download/{visitor}: six-become-four's request
	CallQuota    Call = "quota"    // GET /quota/{visitor}: the downloads counted today
	CallCheckout Call = "checkout" // POST /checkout/{item}: five-checkouts' request
	CallItem     Call = "item"     // GET /item/{item}: the claims recorded
	CallLimit    Call = "limit"    // POST /limit/{caller}: six-of-five's request
	CallWindow   Call = "window"   // GET /limit/{caller}?window={window}: one window's count
	// stale-plan's calls: the plan's changes, the server's read of it, the
	// request (an original download) and the originals counted today.
	CallSubscribe Call = "subscribe" // POST /subscribe/{subscriber}: start the paid plan
	CallCancel    Call = "cancel"    // POST /cancel/{subscriber}: end it
	CallPlan      Call = "plan"      // GET /plan/{subscriber}: the plan as a page reads it
	CallOriginal  Call = "original"  // POST /original/{subscriber}: stale-plan's request
	CallOriginals Call = "originals" // GET /original/{subscriber}: the originals counted today
	// CallGetMany is GET /get?slugs={slugs}: many slugs' views in one read,
	// checked against their single reads. It is the one optional call: a
	// service without a batch read leaves it out.
	CallGetMany Call = "get-many"
)

// Calls lists every call a service must have, story by story: request,
// then read.
func Calls() []Call {
	return []Call{CallHit, CallGet, CallDownload, CallQuota, CallCheckout, CallItem, CallLimit, CallWindow,
		CallSubscribe, CallCancel, CallPlan, CallOriginal, CallOriginals}
}

// knownCalls is every call a mapping may name: the required ones and the
// optional batch read.
func knownCalls() []Call { return append(Calls(), CallGetMany) }

// contract is racelab's contract over one ops table: its routes, the
// calls a service must have, and the placeholder each call's key takes.
// A Client and a Handler each hold the one of the table they were given
// (Config.Ops, WithOps), so that a story's own op is built and served
// like the stories' own, and nothing is looked up in a shared registry.
type contract struct {
	ops    story.Table
	routes Mapping
	// calls are the calls a service must have: Calls, then the table's
	// own ops' requests and reads.
	calls []Call
	// keys is the {word} each call's key takes in a path template: the
	// first placeholder of its route in the contract.
	keys map[Call]string
}

// builtin is the contract over the stories' own ops, racelab serve's.
var builtin = func() *contract {
	k, err := newContract(story.Ops())
	if err != nil {
		panic(err) // the stories' own table: a mistake here is racelab's
	}
	return k
}()

// newContract is the contract over ops: each op's request and read take
// their method, route, refusals and fields from its row. An op whose
// request or read would take the name of one of the contract's other
// calls (stale-plan's plan calls, the batch read) is an error.
func newContract(ops story.Table) (*contract, error) {
	yes := []int{http.StatusOK}
	m := Mapping{
		CallGetMany: {Method: http.MethodGet, Path: "/get?slugs={slugs}", Yes: yes, Field: "{slug}"},
		// stale-plan's calls around its request.
		CallSubscribe: {Method: http.MethodPost, Path: "/subscribe/{subscriber}", Yes: yes, Key: "subscriber"},
		CallCancel:    {Method: http.MethodPost, Path: "/cancel/{subscriber}", Yes: yes, Key: "subscriber"},
		CallPlan:      {Method: http.MethodGet, Path: "/plan/{subscriber}", Yes: yes, Field: "paid", Key: "subscriber"},
	}
	k := &contract{ops: ops, routes: m, calls: Calls(), keys: map[Call]string{}}
	for _, s := range ops.Specs() {
		req, read := Call(s.Op), Call(s.Read)
		for _, c := range []Call{req, read} {
			if _, taken := m[c]; taken {
				return nil, fmt.Errorf("op %s: the contract's call %s has the name already", s.Op, c)
			}
			if !slices.Contains(k.calls, c) {
				k.calls = append(k.calls, c)
			}
		}
		m[req] = Route{Method: s.Method, Path: s.Route, Yes: yes, No: s.Refused, Field: s.Field, OK: s.OK}
		m[read] = Route{Method: http.MethodGet, Path: s.ReadRoute, Yes: yes, Field: s.ReadField, Key: s.Key}
	}
	if r, ok := m[CallHit]; ok {
		r.Key = "slug" // a hit echoes its slug, a check of its decoding
		m[CallHit] = r
	}
	if r, ok := m[CallLimit]; ok {
		r.Window = "window" // and a rate limit the window it counted in
		m[CallLimit] = r
	}
	for call, r := range m {
		r.Yes = slices.Clone(r.Yes) // each route its own, for whoever changes one
		m[call] = r
		if w := r.KeyWord(); w != "" {
			k.keys[call] = "{" + w + "}"
		}
	}
	return k, nil
}

// KeyWord is the word of the first placeholder in r's path ("slug" for
// /hit/{slug}), where a request of the contract puts its key; "" when
// the path has none.
func (r Route) KeyWord() string {
	open, end := strings.Index(r.Path, "{"), strings.Index(r.Path, "}")
	if open < 0 || end < open {
		return ""
	}
	return r.Path[open+1 : end]
}

// ContractOver is racelab's contract over ops, as racelab serve's
// handler answers it: Contract with ops in place of the stories' own
// table. An op whose request or read takes the name of another call is
// an error.
func ContractOver(ops story.Table) (Mapping, error) {
	k, err := newContract(ops)
	if err != nil {
		return nil, err
	}
	return k.routes.clone(), nil
}

// callOf is the call that plays op: the op's own word, for an op of the
// table.
func (k *contract) callOf(op story.Op) (Call, error) {
	if _, ok := k.ops.Spec(op); ok {
		return Call(op), nil
	}
	words := k.ops.Words()
	return "", fmt.Errorf("unknown operation %q; want %s or %s", op,
		strings.Join(words[:len(words)-1], ", "), words[len(words)-1])
}

// Route says how one call is made and how its answer reads. An empty field
// of a Route given to Merge keeps the value it overrides.
type Route struct {
	// Method is the HTTP method, such as POST.
	Method string `json:"method,omitempty"`
	// Path is the path template below the base URL, with the call's key as
	// {slug}, {visitor}, {item}, {caller} or {subscriber}; it may carry a
	// query (?id={slug}). A request that carries the story's limit (see
	// story.OpSpec) puts it in {limit} ({stock} for a checkout) where the
	// template has one, always; a template without one gets limit=L
	// (stock=K) added to its query, only when the story's limit is not
	// the contract's. The window call puts its number in {window}, or
	// adds window=W.
	Path string `json:"path,omitempty"`
	// Yes lists the statuses that mean the request was allowed (a hit
	// counted, a download granted, an item claimed) or, for a read, that it
	// answered.
	Yes []int `json:"yes,omitempty"`
	// No lists the statuses that mean refused (a download over the limit,
	// an item taken). Any status in neither list is a failed request.
	No []int `json:"no,omitempty"`
	// Field is where the answer's JSON object holds the number: the total
	// of views, the count, the claims. Dots walk into nested objects
	// (data.views). For get-many it names each slug's total with {slug}
	// standing for the slug: {slug} (the contract's {"a":N,"b":M}) or
	// counts.{slug}. Every answer of the route must have it, refusals
	// included: the count a refusal was made at is part of the history.
	//
	// The plan call answers a yes or no, not a number: its Field holds a
	// JSON boolean, true for a paid plan (the contract's "paid"), and a
	// yes status must carry it. A service that says it by status instead
	// (200 paid, 402 not) maps plan with no= and no field; a no status is
	// "not paid" and, if it carries the field, the field must be false.
	// subscribe and cancel answer no number, so they need no Field.
	Field string `json:"field,omitempty"`
	// Key, when set, is a field that must echo the key the request was
	// made for: a service that decoded the key twice answers for another.
	Key string `json:"key,omitempty"`
	// OK, when set, is a boolean field that must agree with the status:
	// true on a yes answer, false (or absent) on a no.
	OK string `json:"ok,omitempty"`
	// Window, for the limit call, is the field holding the number of the
	// window the request was counted in.
	Window string `json:"window,omitempty"`
}

// Mapping is how each call is made against one service.
type Mapping map[Call]Route

// Contract is the mapping of racelab's own contract, which racelab serve
// speaks. The stories' requests and reads take their method, route,
// refusals and fields from the ops table (story.Ops); the calls that are
// no op's are stale-plan's plan changes and read, and the batch read.
func Contract() Mapping { return builtin.routes.clone() }

// clone is m with routes of their own: a caller may change what it gets.
func (m Mapping) clone() Mapping {
	out := make(Mapping, len(m))
	for call, r := range m {
		r.Yes, r.No = slices.Clone(r.Yes), slices.Clone(r.No)
		out[call] = r
	}
	return out
}

// Merge returns m with each route of over laid on it, field by field. A
// route that names another path speaks another API, so the contract's
// checks of the answer (Key and OK) are dropped from it unless over sets
// them; and a service whose single read is elsewhere has no batch read of
// the contract's, so get-many is dropped unless over maps it.
func (m Mapping) Merge(over Mapping) Mapping {
	out := maps.Clone(m)
	if out == nil {
		out = Mapping{}
	}
	if g, ok := over[CallGet]; ok && g.Path != "" && g.Path != out[CallGet].Path {
		if _, mapped := over[CallGetMany]; !mapped {
			delete(out, CallGetMany)
		}
	}
	for call, o := range over {
		r := out[call]
		if o.Path != "" && o.Path != r.Path {
			r.Key, r.OK = "", ""
			if call == CallPlan {
				// The plan's "paid" is the contract's word too; another
				// API says it its own way, by a field or by status.
				r.Field = ""
			}
		}
		if o.Method != "" {
			r.Method = o.Method
		}
		if o.Path != "" {
			r.Path = o.Path
		}
		if o.Yes != nil {
			r.Yes = slices.Clone(o.Yes)
		}
		if o.No != nil {
			r.No = slices.Clone(o.No)
		}
		if o.Field != "" {
			r.Field = o.Field
		}
		if o.Key != "" {
			r.Key = o.Key
		}
		if o.OK != "" {
			r.OK = o.OK
		}
		if o.Window != "" {
			r.Window = o.Window
		}
		out[call] = r
	}
	return out
}

// Validate checks that every call is mapped and every route makes sense.
func (m Mapping) Validate() error { return builtin.validate(m) }

// validate checks m against k: every call of k mapped, no call k does not
// know, and every route sensible.
func (k *contract) validate(m Mapping) error {
	known := append(slices.Clone(k.calls), CallGetMany)
	for _, call := range k.calls {
		r, ok := m[call]
		if !ok {
			return fmt.Errorf("call %s is not mapped", call)
		}
		if err := r.validate(call, k.keys[call]); err != nil {
			return fmt.Errorf("call %s: %w", call, err)
		}
	}
	if r, ok := m[CallGetMany]; ok {
		if err := r.validate(CallGetMany, k.keys[CallGetMany]); err != nil {
			return fmt.Errorf("call %s: %w", CallGetMany, err)
		}
	}
	for call := range m {
		if !slices.Contains(known, call) {
			return fmt.Errorf("unknown call %q; want one of %s", call, callList(known))
		}
	}
	return nil
}

// validate checks one route of call, whose key takes the placeholder ph.
func (r Route) validate(call Call, ph string) error {
	if !slices.Contains(methods, r.Method) {
		return fmt.Errorf("method %q is not one racelab sends; want one of %s", r.Method, strings.Join(methods, ", "))
	}
	if !strings.HasPrefix(r.Path, "/") {
		return fmt.Errorf("path %q must start with /", r.Path)
	}
	if !strings.Contains(r.Path, ph) {
		return fmt.Errorf("path %q has no %s to put the key in", r.Path, ph)
	}
	if strings.ContainsAny(r.Path, " \t\r\n#") {
		return fmt.Errorf("path %q has a space or a #", r.Path)
	}
	if len(r.Yes) == 0 {
		return errors.New("no status means yes")
	}
	for _, code := range slices.Concat(r.Yes, r.No) {
		if code < 100 || code > 599 {
			return fmt.Errorf("status %d is not an HTTP status", code)
		}
	}
	for _, code := range r.No {
		if slices.Contains(r.Yes, code) {
			return fmt.Errorf("status %d means both yes and no", code)
		}
	}
	switch call {
	case CallCheckout, CallSubscribe, CallCancel:
		// A claim is one; a plan change answers no number.
	case CallPlan:
		if r.OK != "" {
			return fmt.Errorf("ok=%s: the plan's answer is a field of its own (field=%s, a boolean true when paid)", r.OK, r.OK)
		}
		if r.Field == "" && len(r.No) == 0 {
			return errors.New("neither a field (field=paid) nor a status (no=402) says whether the plan is paid")
		}
	default:
		if r.Field == "" {
			return errors.New("no field holds the number")
		}
	}
	if call == CallGetMany && !strings.Contains(r.Field, "{slug}") {
		return fmt.Errorf("field %q has no {slug} to say where each slug's number is (the contract's is {slug})", r.Field)
	}
	return nil
}

// methods are the request methods a mapping may send, as a race file's
// request may: a method no server knows (TELEPORT) answers 405 or 501 on
// every request, a failed run rather than a race.
var methods = []string{"GET", "HEAD", "POST", "PUT", "PATCH", "DELETE", "OPTIONS"}

// callList writes calls for a message: "hit, get, …".
func callList(calls []Call) string {
	s := make([]string, len(calls))
	for i, c := range calls {
		s[i] = string(c)
	}
	return strings.Join(s, ", ")
}

// ParseCall reads one call's mapping as written on the command line:
//
//	CALL=[METHOD] PATH [yes=CODES] [no=CODES] [field=NAME] [key=NAME] [ok=NAME]
//
// for example `hit=POST /api/posts/{slug}/views field=data.views` or
// `download=/dl/{visitor} yes=200,201 no=429,403`, or, for a service that
// takes the story's limit in its path, `download=/dl/{visitor}/{limit}`
// (see Route.Path). What it leaves out keeps the contract's value.
func ParseCall(s string) (Call, Route, error) {
	name, spec, ok := strings.Cut(s, "=")
	call := Call(strings.TrimSpace(name))
	if !ok || !slices.Contains(knownCalls(), call) {
		return "", Route{}, fmt.Errorf("%q: want CALL=[METHOD] PATH [yes=CODES] [no=CODES] [field=NAME] [key=NAME] [ok=NAME] with CALL one of %s", s, callList(knownCalls()))
	}
	var r Route
	seen := map[string]bool{}
	for i, word := range strings.Fields(spec) {
		k, v, isSetting := strings.Cut(word, "=")
		switch {
		case isSetting && !strings.HasPrefix(word, "/"):
			if seen[k] {
				// Keeping the last would drop the first without a word.
				return "", Route{}, fmt.Errorf("%s: %s= given twice; give each setting once", call, k)
			}
			seen[k] = true
			var err error
			switch k {
			case "yes":
				r.Yes, err = parseCodes(v)
			case "no":
				r.No, err = parseCodes(v)
			case "field":
				r.Field = v
			case "key":
				r.Key = v
			case "ok":
				r.OK = v
			case "window":
				r.Window = v
			default:
				err = fmt.Errorf("unknown setting %q; want yes=, no=, field=, key=, ok= or window=", k)
			}
			if err != nil {
				return "", Route{}, fmt.Errorf("%s: %w", call, err)
			}
		case i == 0 && !strings.HasPrefix(word, "/"):
			r.Method = strings.ToUpper(word)
		case strings.HasPrefix(word, "/") && r.Path == "":
			r.Path = word
		default:
			return "", Route{}, fmt.Errorf("%s: unexpected %q; want [METHOD] PATH then settings such as yes=200", call, word)
		}
	}
	if r.Method != "" && r.Path == "" {
		return "", Route{}, fmt.Errorf("%s: method %s without a path", call, r.Method)
	}
	return call, r, nil
}

// parseCodes reads "200,201".
func parseCodes(s string) ([]int, error) {
	var codes []int
	for _, f := range strings.Split(s, ",") {
		n, err := strconv.Atoi(strings.TrimSpace(f))
		if err != nil || n < 100 || n > 599 {
			return nil, fmt.Errorf("status %q is not an HTTP status such as 200", f)
		}
		codes = append(codes, n)
	}
	return codes, nil
}

// MaxMappingBytes bounds a mapping file: a mapping is a few lines of
// JSON, and a name such as /dev/zero must not be read without end.
const MaxMappingBytes = 1 << 20

// LoadMapping reads a mapping file: a JSON object from call names to routes,
// each with the fields of Route, for example
//
//	{"hit": {"method": "POST", "path": "/api/views/{slug}", "field": "total"},
//	 "get": {"path": "/api/views/{slug}", "field": "total"}}
//
// Calls and fields it leaves out keep the contract's values.
func LoadMapping(r io.Reader) (Mapping, error) {
	data, err := io.ReadAll(r)
	if err != nil {
		return nil, err
	}
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	var m Mapping
	if err := dec.Decode(&m); err != nil {
		return nil, fmt.Errorf("not a mapping (a JSON object of calls such as \"hit\" to routes): %w", err)
	}
	for call := range m {
		if !slices.Contains(knownCalls(), call) {
			return nil, fmt.Errorf("unknown call %q; want one of %s", call, callList(knownCalls()))
		}
	}
	if call := twiceMapped(data); call != "" {
		// Decoding keeps the last of two; the user wrote both.
		return nil, fmt.Errorf("call %q mapped twice; give each call once", call)
	}
	return m, nil
}

// twiceMapped is the first call named twice in the top-level object of
// data, a document that already decoded as a Mapping; "" if none is.
func twiceMapped(data []byte) string {
	dec := json.NewDecoder(bytes.NewReader(data))
	if t, err := dec.Token(); err != nil || t != json.Delim('{') {
		return ""
	}
	seen := map[string]bool{}
	for dec.More() {
		t, err := dec.Token()
		name, isName := t.(string)
		if err != nil || !isName {
			return ""
		}
		if seen[name] {
			return name
		}
		seen[name] = true
		var skip json.RawMessage
		if err := dec.Decode(&skip); err != nil {
			return ""
		}
	}
	return ""
}
