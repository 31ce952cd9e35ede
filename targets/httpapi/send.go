package httpapi

import (
	"context"
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"time"

	"golang.org/x/net/http/httpguts"

	"github.com/racelab/racelab/targets/httpapi/burst"
)

// Request is a request of the caller's own rather than one of the
// contract's calls: a race file's (package racefile). Path is the request
// target below the service's base URL, path and query, escaped as it is
// to be sent; Header goes over the client's own headers; Body is at most
// burst.MaxWireBody.
type Request struct {
	Method string
	Path   string
	Header http.Header
	Body   []byte
}

// Response is what a service answered a Request, read whole (at most
// burst.MaxAnswerBytes). Arrival is the instant the service says the
// request was complete (ArrivalHeader), zero when it says none; Early
// says the answer came before the request's final part was sent: the
// burst was not synchronized.
type Response struct {
	Status  int
	Header  http.Header
	Body    []byte
	Arrival time.Time
	Early   bool
}

// wireOf is call on key as it goes out.
func (c *Client) wireOf(call Call, key string, vars ...param) burst.Wire {
	return burst.Wire{Method: c.routes[call].Method, Target: c.target(call, key, vars...)}
}

// wireOfRequest checks r and turns it into what goes out below the base
// URL, its query joined to the base URL's own.
func (c *Client) wireOfRequest(r Request) (burst.Wire, error) {
	if !httpguts.ValidHeaderFieldName(r.Method) {
		return burst.Wire{}, fmt.Errorf("method %q is not valid", r.Method)
	}
	if !strings.HasPrefix(r.Path, "/") || strings.ContainsAny(r.Path, " \t\r\n#") {
		return burst.Wire{}, fmt.Errorf("path %q: want /PATH[?QUERY], escaped, without spaces or a fragment", r.Path)
	}
	if len(r.Body) > burst.MaxWireBody {
		return burst.Wire{}, fmt.Errorf("%s %s: body of %d bytes, over %d", r.Method, r.Path, len(r.Body), burst.MaxWireBody)
	}
	header := make(http.Header, len(r.Header))
	for name, values := range r.Header {
		if !httpguts.ValidHeaderFieldName(name) {
			return burst.Wire{}, fmt.Errorf("header name %q is not valid", name)
		}
		header[http.CanonicalHeaderKey(name)] = values
		for _, v := range values {
			if !httpguts.ValidHeaderFieldValue(v) {
				return burst.Wire{}, fmt.Errorf("header %s: value %q is not valid", name, v)
			}
		}
	}
	path, query, _ := strings.Cut(r.Path, "?")
	target := strings.TrimSuffix(c.base.EscapedPath(), "/") + path
	if q := strings.TrimPrefix(c.base.RawQuery+"&"+query, "&"); strings.TrimSuffix(q, "&") != "" {
		target += "?" + strings.TrimSuffix(q, "&")
	}
	if _, err := url.ParseRequestURI(target); err != nil {
		return burst.Wire{}, fmt.Errorf("path %q: %w", r.Path, err)
	}
	return burst.Wire{Method: r.Method, Target: target, Header: header, Body: r.Body}, nil
}

// Send makes r as one whole request and reads its answer. A status of any
// kind is an answer, not an error: judging it is the caller's business. A
// redirect is not followed.
func (c *Client) Send(ctx context.Context, r Request) (Response, error) {
	w, err := c.wireOfRequest(r)
	if err != nil {
		return Response{}, err
	}
	a, err := c.send(ctx, w)
	if err != nil {
		return Response{}, err
	}
	return responseOf(a), nil
}

func responseOf(a burst.Answer) Response {
	return Response{Status: a.Status, Header: a.Header, Body: a.Body, Arrival: a.Arrival, Early: a.Early}
}

// StageRequests readies rs as one burst, synchronized as the client's
// Sync says (h2 single packet, HTTP/1.1 last byte, or whole requests on
// warmed connections), and returns one function per request that sends its
// final part and waits for its answer. As with Stage, the last function
// called releases them all; stage again only once every function of the
// last burst has returned.
func (c *Client) StageRequests(ctx context.Context, rs []Request) ([]func(context.Context) (Response, error), error) {
	ws := make([]burst.Wire, len(rs))
	for i, r := range rs {
		w, err := c.wireOfRequest(r)
		if err != nil {
			return nil, err
		}
		ws[i] = w
	}
	staged, err := c.pool.Stage(ctx, ws)
	if err != nil {
		return nil, err
	}
	fs := make([]func(context.Context) (Response, error), len(staged))
	for i, f := range staged {
		fs[i] = func(ctx context.Context) (Response, error) {
			a, err := f(ctx)
			if err != nil {
				return Response{Early: a.Early}, err
			}
			return responseOf(a), nil
		}
	}
	return fs, nil
}
