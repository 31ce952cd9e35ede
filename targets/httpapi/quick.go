package httpapi

import (
	"strconv"

	"github.com/racelab/racelab/targets/httpapi/burst"
	"github.com/racelab/racelab/targets/story"
)

// The quick reading of an answer. decodeJSON decodes every answer's body
// into a map with encoding/json, which under load cost more than reading
// the answer off the socket (issue 24). decodeQuick reads the few fields a
// route names straight off the bytes (Pick, jsonpick.go) and accepts the
// answer only when every check passes exactly as decodeJSON's would;
// anything else (a check that fails, or a body Pick declines) goes to
// decodeJSON, so every error and every edge is still its own.

// decodeQuick is decode for the answers that are right, read without
// encoding/json: ok is false when decodeJSON must read the answer instead.
func (c *Client) decodeQuick(call Call, key string, a burst.Answer) (reply story.Reply, ok bool) {
	r := c.routes[call]
	switch {
	case call == CallPlan:
		return reply, false
	case containsCode(r.Yes, a.Status):
		reply.OK = true
	case !containsCode(r.No, a.Status):
		return reply, false
	}
	reply.Arrival, reply.Early = a.Arrival, a.Early
	if call == CallCheckout && reply.OK {
		reply.Value = 1
	}
	if r.Field == "" && r.Key == "" && r.OK == "" {
		return reply, true
	}
	paths := [MaxPaths]string{r.OK, r.Key, r.Field, r.Window}
	var got [MaxPaths]Value
	if !Pick(a.Body, &paths, &got) {
		return reply, false
	}
	okV, keyV, fieldV, windowV := got[0], got[1], got[2], got[3]
	if r.OK != "" {
		isBool := okV.Kind == True || okV.Kind == False
		if okV.Found && (!isBool || (okV.Kind == True) != reply.OK) || !okV.Found && reply.OK {
			return reply, false
		}
	}
	if r.Key != "" && reply.OK && (!keyV.Found || keyV.Kind != String || string(keyV.Raw) != key) {
		return reply, false
	}
	if r.Field == "" {
		return reply, true
	}
	n, ok := wholeNumber(fieldV)
	if !ok || n < 0 {
		return reply, false
	}
	reply.Value = n
	if r.Window != "" {
		w, ok := wholeNumber(windowV)
		if !ok {
			return reply, false
		}
		reply.Window = w
	}
	return reply, true
}

// wholeNumber is v as json.Number's Int64 reads it.
func wholeNumber(v Value) (int64, bool) {
	if !v.Found || v.Kind != Number {
		return 0, false
	}
	n, err := strconv.ParseInt(string(v.Raw), 10, 64)
	return n, err == nil
}
