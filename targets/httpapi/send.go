package httpapi

import (
	"bytes"
	"context"
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"time"

	"golang.org/x/net/http/httpguts"

	"github.com/racelab/racelab/targets/story"
)

// MaxWireBody bounds the body of a request of the caller's own (Send,
// StageRequests): an HTTP/2 burst sends every body before the release,
// and all of a connection's bodies must fit the first flow-control window
// the protocol grants (64 KiB), which racelab does not wait to see grow.
const MaxWireBody = 16 << 10

// Request is a request of the caller's own rather than one of the
// contract's calls: a race file's (package racefile). Path is the request
// target below the service's base URL, path and query, escaped as it is
// to be sent; Header goes over the client's own headers.
type Request struct {
	Method string
	Path   string
	Header http.Header
	Body   []byte
}

// Response is what a service answered a Request, read whole (at most
// MaxAnswerBytes). Arrival is the instant the service says the request was
// complete (ArrivalHeader), zero when it says none; Early says the answer
// came before the request's final part was sent: the burst was not
// synchronized.
type Response struct {
	Status  int
	Header  http.Header
	Body    []byte
	Arrival time.Time
	Early   bool
}

// wire is one request as it goes out: the full request target, the
// request's own headers (over the client's) and its body.
type wire struct {
	method, target string
	header         http.Header
	body           []byte
}

// stagedWire releases one staged request and waits for its answer; early
// says the answer came before the release.
type stagedWire func(ctx context.Context) (a answer, early bool, err error)

// wireOf is call on key as it goes out.
func (c *Client) wireOf(call Call, key string, vars ...param) wire {
	return wire{method: c.routes[call].Method, target: c.target(call, key, vars...)}
}

func repeatWire(w wire, n int) []wire {
	ws := make([]wire, n)
	for i := range ws {
		ws[i] = w
	}
	return ws
}

// judged reads each staged answer by call's route.
func (c *Client) judged(fs []stagedWire, call Call, key string, vars ...param) []func(context.Context) (story.Reply, error) {
	if fs == nil {
		return nil
	}
	out := make([]func(context.Context) (story.Reply, error), len(fs))
	for i, f := range fs {
		out[i] = func(ctx context.Context) (story.Reply, error) {
			a, early, err := f(ctx)
			if err != nil {
				return story.Reply{Early: early}, err
			}
			reply, err := c.judge(call, key, a, vars...)
			reply.Early = early
			return reply, err
		}
	}
	return out
}

// sets says the request's own headers set name: racelab's default for it
// then stays out.
func (w wire) sets(name string) bool {
	_, ok := w.header[name]
	return ok
}

// headerFor is the headers w goes out with: the client's, with w's own
// over them.
func (c *Client) headerFor(w wire) http.Header {
	if len(w.header) == 0 {
		return c.header
	}
	h := c.header.Clone()
	for name, values := range w.header {
		h[name] = values
	}
	return h
}

// wireOfRequest checks r and turns it into what goes out below the base
// URL, its query joined to the base URL's own.
func (c *Client) wireOfRequest(r Request) (wire, error) {
	if !httpguts.ValidHeaderFieldName(r.Method) {
		return wire{}, fmt.Errorf("method %q is not valid", r.Method)
	}
	if !strings.HasPrefix(r.Path, "/") || strings.ContainsAny(r.Path, " \t\r\n#") {
		return wire{}, fmt.Errorf("path %q: want /PATH[?QUERY], escaped, without spaces or a fragment", r.Path)
	}
	if len(r.Body) > MaxWireBody {
		return wire{}, fmt.Errorf("%s %s: body of %d bytes, over %d", r.Method, r.Path, len(r.Body), MaxWireBody)
	}
	header := make(http.Header, len(r.Header))
	for name, values := range r.Header {
		if !httpguts.ValidHeaderFieldName(name) {
			return wire{}, fmt.Errorf("header name %q is not valid", name)
		}
		header[http.CanonicalHeaderKey(name)] = values
		for _, v := range values {
			if !httpguts.ValidHeaderFieldValue(v) {
				return wire{}, fmt.Errorf("header %s: value %q is not valid", name, v)
			}
		}
	}
	path, query, _ := strings.Cut(r.Path, "?")
	target := strings.TrimSuffix(c.base.EscapedPath(), "/") + path
	if q := strings.TrimPrefix(c.base.RawQuery+"&"+query, "&"); strings.TrimSuffix(q, "&") != "" {
		target += "?" + strings.TrimSuffix(q, "&")
	}
	if _, err := url.ParseRequestURI(target); err != nil {
		return wire{}, fmt.Errorf("path %q: %w", r.Path, err)
	}
	return wire{method: r.Method, target: target, header: header, body: r.Body}, nil
}

// Send makes r as one whole request and reads its answer. A status of any
// kind is an answer, not an error: judging it is the caller's business. A
// redirect is not followed.
func (c *Client) Send(ctx context.Context, r Request) (Response, error) {
	w, err := c.wireOfRequest(r)
	if err != nil {
		return Response{}, err
	}
	a, err := c.sendWire(ctx, w)
	if err != nil {
		return Response{}, err
	}
	return responseOf(a, false), nil
}

func responseOf(a answer, early bool) Response {
	return Response{Status: a.status, Header: a.header, Body: a.body, Arrival: arrivalOf(a.header), Early: early}
}

// sendWire makes w as one whole request and reads its answer: the lean
// way over plain HTTP/1.1 (lean.go), else with net/http.
func (c *Client) sendWire(ctx context.Context, w wire) (answer, error) {
	if c.lean != nil {
		a, err := c.sendLean(ctx, w)
		if err == nil {
			story.NoteStatus(ctx, a.status)
		}
		return a, err
	}
	req, err := http.NewRequestWithContext(ctx, w.method, c.base.Scheme+"://"+c.base.Host+w.target, bytes.NewReader(w.body))
	if err != nil {
		return answer{}, fmt.Errorf("%s %s: %w", w.method, w.target, err)
	}
	if len(w.body) == 0 {
		req.Body, req.ContentLength = http.NoBody, 0
	}
	for name, values := range c.headerFor(w) {
		req.Header[name] = values
	}
	if !w.sets("User-Agent") {
		req.Header.Set("User-Agent", UserAgent)
	}
	if !w.sets("Accept") {
		req.Header.Set("Accept", "application/json")
	}
	resp, err := c.http.Do(req)
	if err != nil {
		return answer{}, fmt.Errorf("%s %s: %w", w.method, w.target, unwrapURLError(err))
	}
	story.NoteStatus(ctx, resp.StatusCode)
	defer resp.Body.Close()
	body, err := readBody(resp.Body)
	if err != nil {
		return answer{}, fmt.Errorf("%s %s: read answer: %w", w.method, w.target, err)
	}
	return answer{resp.StatusCode, resp.Header, body}, nil
}

// StageRequests readies rs as one burst, synchronized as the client's
// Sync says (h2 single packet, HTTP/1.1 last byte, or whole requests on
// warmed connections), and returns one function per request that sends its
// final part and waits for its answer. As with Stage, the last function
// called releases them all; stage again only once every function of the
// last burst has returned.
func (c *Client) StageRequests(ctx context.Context, rs []Request) ([]func(context.Context) (Response, error), error) {
	ws := make([]wire, len(rs))
	for i, r := range rs {
		w, err := c.wireOfRequest(r)
		if err != nil {
			return nil, err
		}
		ws[i] = w
	}
	mode, err := c.resolve(ctx)
	if err != nil {
		return nil, err
	}
	var staged []stagedWire
	switch mode {
	case SyncH2:
		staged, err = c.stageH2Wires(ctx, ws)
	case SyncLastByte:
		staged, err = c.stageH1Wires(ctx, ws)
	default:
		staged = make([]stagedWire, len(ws))
		for i, w := range ws {
			staged[i] = func(ctx context.Context) (answer, bool, error) {
				a, err := c.sendWire(ctx, w)
				return a, false, err
			}
		}
	}
	if err != nil {
		return nil, err
	}
	fs := make([]func(context.Context) (Response, error), len(staged))
	for i, f := range staged {
		fs[i] = func(ctx context.Context) (Response, error) {
			a, early, err := f(ctx)
			if err != nil {
				return Response{Early: early}, err
			}
			return responseOf(a, early), nil
		}
	}
	return fs, nil
}
