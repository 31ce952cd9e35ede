package httpapi

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strconv"
	"strings"
	"unicode"

	"github.com/racelab/racelab/targets/httpapi/burst"
	"github.com/racelab/racelab/targets/story"
)

// ArrivalHeader carries, on every answer of racelab serve's handler, the
// instant the request was complete at the server, in Unix nanoseconds
// (burst.ArrivalHeader, read into burst.Answer.Arrival).
const ArrivalHeader = burst.ArrivalHeader

// decode reads an answer by call's route. Anything outside the route (a
// status it does not list, a body that is not JSON, a missing or mistyped
// field, an echo of another key) is an error naming what came and what was
// wanted: a wrong verdict is worse than none. A refusal's body is only
// read for what the route asks of it: a route without a field accepts any
// refusal body, since services word their refusals freely.
func (c *Client) decode(call Call, key string, a burst.Answer, vars ...param) (story.Reply, error) {
	if reply, ok := c.decodeQuick(call, key, a); ok {
		return reply, nil
	}
	return c.decodeJSON(call, key, a, vars...)
}

// decodeJSON is decode over the body decoded by encoding/json: every
// answer decodeQuick does not vouch for, and every error.
func (c *Client) decodeJSON(call Call, key string, a burst.Answer, vars ...param) (story.Reply, error) {
	r := c.routes[call]
	reply := story.Reply{Arrival: a.Arrival, Early: a.Early}
	known := containsCode(r.Yes, a.Status) || containsCode(r.No, a.Status)
	fail := func(format string, args ...any) (story.Reply, error) {
		return reply, &AnswerError{Status: a.Status, Known: known,
			msg: fmt.Sprintf("%s %s answered %s", r.Method, c.target(call, key, vars...), fmt.Sprintf(format, args...))}
	}
	switch {
	case containsCode(r.Yes, a.Status):
		reply.OK = true
	case containsCode(r.No, a.Status):
	default:
		return fail("%d %s, want %s%s", a.Status, http.StatusText(a.Status), codeList(r.Yes, r.No), bodyNote(a.Body))
	}
	if call == CallCheckout && reply.OK {
		reply.Value = 1 // one claim, unless the service says otherwise
	}
	if call == CallPlan {
		return c.decodePlan(key, r, reply, a, fail)
	}
	if r.Field == "" && r.Key == "" && r.OK == "" {
		return reply, nil
	}
	obj, isObject := decodeObject(a.Body)
	if !isObject {
		if !reply.OK && r.Field == "" {
			return reply, nil // nothing to read in a refusal
		}
		return fail("%d with a body that is not a JSON object%s", a.Status, bodyNote(a.Body))
	}
	if r.OK != "" {
		v, ok := lookup(obj, r.OK)
		b, isBool := v.(bool)
		if ok && (!isBool || b != reply.OK) || !ok && reply.OK {
			return fail("%d with %s at %q, want %t to agree with the status%s", a.Status, jsonText(v, ok), r.OK, reply.OK, bodyNote(a.Body))
		}
	}
	if r.Key != "" && reply.OK {
		echo, ok := lookup(obj, r.Key)
		if s, isString := echo.(string); !ok || !isString || s != key {
			return fail("%d for key %s, asked for %q (a key decoded twice no longer matches)%s", a.Status, jsonText(echo, ok), key, bodyNote(a.Body))
		}
	}
	if r.Field == "" {
		return reply, nil
	}
	// A refusal must say the count too: the history checks read it, and
	// a number made up here would be a verdict made up there.
	v, ok := lookup(obj, r.Field)
	n, isNumber := v.(json.Number)
	if !ok || !isNumber {
		return fail("%d without a number at %q%s", a.Status, r.Field, bodyNote(a.Body))
	}
	value, err := n.Int64()
	if err != nil || value < 0 {
		return fail("%d with %s at %q, want a whole number of at least 0", a.Status, n, r.Field)
	}
	reply.Value = value
	if r.Window != "" {
		v, ok := lookup(obj, r.Window)
		n, isNumber := v.(json.Number)
		w, err := n.Int64()
		if !ok || !isNumber || err != nil {
			return fail("%d without a window number at %q%s", a.Status, r.Window, bodyNote(a.Body))
		}
		reply.Window = w
	}
	return reply, nil
}

// decodePlan reads the plan call's answer: paid (reply.OK) is the boolean
// at the route's Field on a yes status, or the status itself when the
// route has no field; a no status is never paid. A yes answer without
// the boolean is an error, not a guess: a plan read wrongly would grant
// or refuse downloads nobody asked about.
func (c *Client) decodePlan(key string, r Route, reply story.Reply, a burst.Answer,
	fail func(string, ...any) (story.Reply, error)) (story.Reply, error) {
	yes := reply.OK
	reply.OK = false
	if r.Field == "" && r.Key == "" {
		reply.OK = yes
		return reply, nil
	}
	obj, isObject := decodeObject(a.Body)
	if !isObject {
		if !yes {
			return reply, nil // the status said it: not paid
		}
		return fail("%d with a body that is not a JSON object%s", a.Status, bodyNote(a.Body))
	}
	if r.Key != "" && yes {
		echo, ok := lookup(obj, r.Key)
		if s, isString := echo.(string); !ok || !isString || s != key {
			return fail("%d for key %s, asked for %q (a key decoded twice no longer matches)%s", a.Status, jsonText(echo, ok), key, bodyNote(a.Body))
		}
	}
	if r.Field == "" {
		reply.OK = yes
		return reply, nil
	}
	v, ok := lookup(obj, r.Field)
	paid, isBool := v.(bool)
	switch {
	case yes && !isBool:
		return fail("%d with %s at %q, want true or false (is the plan paid?)%s", a.Status, jsonText(v, ok), r.Field, bodyNote(a.Body))
	case !yes && ok && (!isBool || paid):
		return fail("%d with %s at %q, want false or nothing: the status says not paid%s", a.Status, jsonText(v, ok), r.Field, bodyNote(a.Body))
	}
	reply.OK = yes && paid
	if reply.OK {
		reply.Value = 1
	}
	return reply, nil
}

// AnswerError is an answer outside the contract: a status the route does
// not know, or a known status with a body that does not say what the
// contract asks. A load sorts its failures by it.
type AnswerError struct {
	// Status is the status answered; Known says whether the route lists
	// it (as a yes or a no).
	Status int
	Known  bool
	msg    string
}

func (e *AnswerError) Error() string { return e.msg }

// HTTPStatus is the status answered and whether the contract knows it.
func (e *AnswerError) HTTPStatus() (int, bool) { return e.Status, e.Known }

// decodeObject reads an answer's body as one JSON object, numbers kept
// as written; ok is false for anything else. One object and nothing
// after it: two answers run together, or an object followed by an error
// page, are not the contract's answer, and the first of them is not to be
// believed on its own.
func decodeObject(body []byte) (obj map[string]any, ok bool) {
	dec := json.NewDecoder(bytes.NewReader(body))
	dec.UseNumber()
	if err := dec.Decode(&obj); err != nil || obj == nil {
		return nil, false
	}
	_, err := dec.Token()
	return obj, err == io.EOF
}

// lookup walks a dotted path (data.views) into a JSON object.
func lookup(obj map[string]any, path string) (any, bool) {
	// {slug} standing for itself leaves every name as written.
	return lookupKeyed(obj, path, "{slug}")
}

// lookupKeyed walks a dotted path whose {slug} segments stand for slug
// (get-many's field). The path is split before slug goes in, so a slug
// holding a dot stays one name.
func lookupKeyed(obj map[string]any, path, slug string) (any, bool) {
	var v any = obj
	for name := range strings.SplitSeq(path, ".") {
		name = strings.ReplaceAll(name, "{slug}", slug)
		m, ok := v.(map[string]any)
		if !ok {
			return nil, false
		}
		if v, ok = m[name]; !ok {
			return nil, false
		}
	}
	return v, true
}

func jsonText(v any, ok bool) string {
	if !ok {
		return "(none)"
	}
	b, _ := json.Marshal(v)
	return string(b)
}

func containsCode(codes []int, code int) bool {
	for _, c := range codes {
		if c == code {
			return true
		}
	}
	return false
}

// codeList writes the statuses a route accepts: "200 or 429".
func codeList(yes, no []int) string {
	var s []string
	for _, c := range append(append([]int(nil), yes...), no...) {
		s = append(s, strconv.Itoa(c))
	}
	if len(s) == 1 {
		return s[0]
	}
	return strings.Join(s[:len(s)-1], ", ") + " or " + s[len(s)-1]
}

// bodyNote shows the start of a body in an error message: as it is when
// it is one line of printable text (JSON usually is), quoted otherwise.
func bodyNote(body []byte) string {
	const most = 120
	s := strings.TrimSpace(string(body))
	if s == "" {
		return " (empty body)"
	}
	if len(s) > most {
		s = strings.ToValidUTF8(s[:most], "") + "…"
	}
	if strings.ContainsFunc(s, func(r rune) bool { return !unicode.IsPrint(r) }) {
		return ": " + strconv.Quote(s)
	}
	return ": " + s
}
