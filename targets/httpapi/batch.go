package httpapi

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"

	"github.com/racelab/racelab/targets/httpapi/burst"
	"github.com/racelab/racelab/targets/story"
)

var _ story.BatchCounter = (*Client)(nil)

// ViewsMany reads the views of slugs in one request, with the get-many
// call (GET /get?slugs=a,b,c in the contract), each slug percent-encoded
// once. It answers the totals in the order of slugs. A service with no
// get-many mapped, or that answers it 404, 405 or 501, offers no batch
// read: the error wraps story.ErrNoBatch. Any other answer outside the
// route is an error naming what came, as for every call.
func (c *Client) ViewsMany(ctx context.Context, slugs []string) ([]int64, error) {
	r, ok := c.routes[CallGetMany]
	if !ok {
		return nil, fmt.Errorf("%w: get-many is not mapped", story.ErrNoBatch)
	}
	target := c.targetOf(CallGetMany, slugs)
	a, err := c.send(ctx, burst.Wire{Method: r.Method, Target: target})
	if err != nil {
		return nil, err
	}
	fail := func(format string, args ...any) ([]int64, error) {
		return nil, fmt.Errorf("%s %s answered %s", r.Method, target, fmt.Sprintf(format, args...))
	}
	switch {
	case containsCode(r.Yes, a.Status):
	case a.Status == http.StatusNotFound || a.Status == http.StatusMethodNotAllowed || a.Status == http.StatusNotImplemented:
		return nil, fmt.Errorf("%w: %s %s answered %d %s", story.ErrNoBatch, r.Method, target, a.Status, http.StatusText(a.Status))
	default:
		return fail("%d %s, want %s%s", a.Status, http.StatusText(a.Status), codeList(r.Yes, nil), bodyNote(a.Body))
	}
	obj, isObject := decodeObject(a.Body)
	if !isObject {
		return fail("%d with a body that is not a JSON object%s", a.Status, bodyNote(a.Body))
	}
	out := make([]int64, len(slugs))
	for i, slug := range slugs {
		v, ok := lookupKeyed(obj, r.Field, slug)
		n, isNumber := v.(json.Number)
		if !ok || !isNumber {
			return fail("%d without a number for %q at %q%s", a.Status, slug, r.Field, bodyNote(a.Body))
		}
		value, err := n.Int64()
		if err != nil || value < 0 {
			return fail("%d with %s for %q, want a whole number of at least 0", a.Status, n, slug)
		}
		out[i] = value
	}
	return out, nil
}
