package httpapi

import (
	"context"
	"encoding/base64"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"strconv"
	"strings"

	"golang.org/x/net/http/httpguts"

	"github.com/racelab/racelab/targets/httpapi/burst"
	"github.com/racelab/racelab/targets/story"
)

// Sync is how a Client releases a burst (burst.Sync).
type Sync = burst.Sync

// The ways to release a burst, tightest first.
const (
	SyncAuto     = burst.SyncAuto     // h2 if the server speaks it, else lastbyte
	SyncH2       = burst.SyncH2       // HTTP/2 single-packet release
	SyncLastByte = burst.SyncLastByte // HTTP/1.1 last-byte synchronization
	SyncNone     = burst.SyncNone     // whole requests on warmed connections
)

// ParseSync reads a --sync value.
func ParseSync(s string) (Sync, error) { return burst.ParseSync(s) }

// Config says how a Client speaks to its service. The zero value is the
// contract, synchronized as tightly as the server allows.
type Config struct {
	// Mapping overrides the contract's calls for a service with another
	// API; it is merged onto Contract().
	Mapping Mapping
	// Ops is the ops table the client plays: the zero Table is the
	// stories' own (story.Ops). A story with an op of its own hands its
	// table here (story.Ops().With(…)), and the client makes its request
	// and read as the row says (story.Capped).
	Ops story.Table
	// Wire is how the burst pool reaches the service (burst.Config says
	// each setting): how bursts are released, the header sent with every
	// request (an API key, a cookie), TLS, streams, the dial timeout and
	// whether whole requests go over HTTP/2.
	Wire burst.Config
	// Name is the target's name as the user gave it (-t NAME=URL), ""
	// for none: a race file's {{target.name}}, and the TARGET of its
	// --db TARGET.NAME=URL.
	Name string
}

// Client plays the stories against one service over HTTP. It implements
// story.Counter, story.Quota, story.Inventory, story.Limiter,
// story.Plans, and story.Capped for the ops of its table that have no
// interface of their own, with whole requests, or staged in a
// synchronized burst under a Gate's contexts. Prepare opens the
// connections a burst needs; Close closes them. Its story methods are
// safe for concurrent use; bursts are one at a time, as the engine runs
// them: stage again only once every request of the last burst has been
// answered, since the burst's connections are reused.
type Client struct {
	k      *contract // the contract over Config.Ops, as racelab serve speaks it
	base   *url.URL
	routes Mapping     // k's routes with Config.Mapping merged on
	pool   *burst.Pool // the connections, whole requests and bursts go over
	name   string      // Config.Name
}

// Compile-time checks that Client plays every story.
var (
	_ story.Counter   = (*Client)(nil)
	_ story.Quota     = (*Client)(nil)
	_ story.Inventory = (*Client)(nil)
	_ story.Limiter   = (*Client)(nil)
	_ story.Plans     = (*Client)(nil)
	_ story.Capped    = (*Client)(nil)
)

// New returns a Client for the service at base (http or https). It opens
// nothing: Prepare does, so that a bad setting is found before any I/O.
// base's query, if any, belongs to the service and goes with every request.
func New(base *url.URL, cfg Config) (*Client, error) {
	if base == nil || (base.Scheme != "http" && base.Scheme != "https") || base.Host == "" {
		return nil, fmt.Errorf("base URL %v: want http://HOST[:PORT][/PATH] or https://…", base)
	}
	mode, err := ParseSync(string(cfg.Wire.Sync))
	if err != nil {
		return nil, err
	}
	k, err := newContract(cfg.Ops)
	if err != nil {
		return nil, fmt.Errorf("ops: %w", err)
	}
	routes := k.routes.clone().Merge(cfg.Mapping)
	if err := k.validate(routes); err != nil {
		return nil, fmt.Errorf("mapping: %w", err)
	}
	header := http.Header{}
	for name, values := range cfg.Wire.Header {
		if !httpguts.ValidHeaderFieldName(name) {
			return nil, fmt.Errorf("header name %q is not valid", name)
		}
		for _, v := range values {
			if !httpguts.ValidHeaderFieldValue(v) {
				return nil, fmt.Errorf("header %s: value %q is not valid", name, v)
			}
			header.Add(name, v)
		}
	}
	if u := base.User; u != nil {
		pass, _ := u.Password()
		header.Set("Authorization", "Basic "+base64.StdEncoding.EncodeToString([]byte(u.Username()+":"+pass)))
	}
	wire := cfg.Wire
	wire.Sync, wire.Header = mode, header
	pool, err := burst.New(base, wire)
	if err != nil {
		return nil, err
	}
	return &Client{k: k, base: base, routes: routes, pool: pool, name: cfg.Name}, nil
}

// SyncMode is how bursts are released: as asked, or, once Prepare has
// probed the server, what SyncAuto resolved to.
func (c *Client) SyncMode() string { return string(c.pool.Mode()) }

// Name is the target's name as the user gave it, "" for none.
func (c *Client) Name() string { return c.name }

// URL is the service's base URL.
func (c *Client) URL() string { return c.base.String() }

// target is the request target (path and query) of call on key: the base
// URL's path and query with the route's template below them, the key
// percent-encoded once for where it goes.
func (c *Client) target(call Call, key string, vars ...param) string {
	return c.targetOf(call, []string{key}, vars...)
}

// targetOf is target with keys in the placeholder, each percent-encoded
// once and joined by literal commas: a comma inside a key is encoded, so
// it cannot be taken for a separator.
func (c *Client) targetOf(call Call, keys []string, vars ...param) string {
	tpl := c.routes[call].Path
	path, query, _ := strings.Cut(tpl, "?")
	ph := c.k.keys[call]
	escaped := func(escape func(string) string) string {
		e := make([]string, len(keys))
		for i, k := range keys {
			e[i] = escape(k)
		}
		return strings.Join(e, ",")
	}
	path = strings.ReplaceAll(path, ph, escaped(pathEscape))
	query = strings.ReplaceAll(query, ph, escaped(url.QueryEscape))
	// A call's other values go where the template puts them, or else
	// into the query under their own name, unless they only say what the
	// contract means without them.
	for _, v := range vars {
		ph := "{" + v.name + "}"
		switch {
		case strings.Contains(path, ph):
			path = strings.ReplaceAll(path, ph, pathEscape(v.value))
		case strings.Contains(query, ph):
			query = strings.ReplaceAll(query, ph, url.QueryEscape(v.value))
		case v.implied:
		default:
			query = strings.TrimPrefix(query+"&"+v.name+"="+url.QueryEscape(v.value), "&")
		}
	}
	t := strings.TrimSuffix(c.base.EscapedPath(), "/") + path
	switch {
	case c.base.RawQuery != "" && query != "":
		t += "?" + c.base.RawQuery + "&" + query
	case c.base.RawQuery != "":
		t += "?" + c.base.RawQuery
	case query != "":
		t += "?" + query
	}
	return t
}

// pathEscape encodes a key for a path segment; a comma too, which
// url.PathEscape leaves, so that it separates keys only where racelab put
// it.
func pathEscape(key string) string {
	return strings.ReplaceAll(url.PathEscape(key), ",", "%2C")
}

// param is one value of a call besides its key: a window's number, the
// story's limit, an item's stock.
type param struct {
	name, value string
	// implied says the value is the contract's own, which a request
	// without it means: it fills a template's {name} but is not added to
	// the query, so a service that keeps the contract's limit sees the
	// requests it always saw.
	implied bool
}

// limitParams say the story's limit on a request of op (?limit=L, or
// ?stock=K for a checkout): none for an op without one, and an implied
// one when the story's limit is the contract's (story.OpSpec.Carries).
func (k *contract) limitParams(op story.Op, limit int64) []param {
	spec, _ := k.ops.Spec(op)
	switch {
	case spec.Limit == "":
		return nil
	case !spec.Carries(limit):
		return []param{{name: spec.Limit, value: strconv.FormatInt(spec.DefaultLimit, 10), implied: true}}
	}
	return []param{{name: spec.Limit, value: strconv.FormatInt(limit, 10)}}
}

// do makes call on key as one whole request and decodes its answer.
func (c *Client) do(ctx context.Context, call Call, key string, vars ...param) (story.Reply, error) {
	a, err := c.send(ctx, c.wireOf(call, key, vars...))
	if err != nil {
		return story.Reply{}, err
	}
	return c.decode(call, key, a, vars...)
}

// send makes w as one whole request and reads its answer, noting its
// status where ctx asks for it (story.WithStatus).
func (c *Client) send(ctx context.Context, w burst.Wire) (burst.Answer, error) {
	a, err := c.pool.Send(ctx, w)
	if a.Status != 0 {
		story.NoteStatus(ctx, a.Status)
	}
	return a, err
}

// Hit records one view of slug with POST /hit/{slug}.
func (c *Client) Hit(ctx context.Context, slug string) (int64, error) {
	r, err := c.do(ctx, CallHit, slug)
	return r.Value, err
}

// Views reads the views of slug with GET /get/{slug}.
func (c *Client) Views(ctx context.Context, slug string) (int64, error) {
	r, err := c.do(ctx, CallGet, slug)
	return r.Value, err
}

// Consume asks for a download with POST /download/{visitor}, with
// ?limit=L when the story's limit is not the contract's story.DailyLimit.
func (c *Client) Consume(ctx context.Context, visitor string, limit int64) (bool, int64, error) {
	r, err := c.do(ctx, CallDownload, visitor, c.k.limitParams(story.OpDownload, limit)...)
	return r.OK, r.Value, err
}

// Count reads the visitor's downloads today with GET /quota/{visitor}.
func (c *Client) Count(ctx context.Context, visitor string) (int64, error) {
	r, err := c.do(ctx, CallQuota, visitor)
	return r.Value, err
}

// Checkout tries to claim item with POST /checkout/{item}. The contract
// does not name buyers; the service does.
func (c *Client) Checkout(ctx context.Context, item, buyer string) (bool, error) {
	return c.CheckoutOf(ctx, item, buyer, story.Stock)
}

// CheckoutOf claims one of stock copies of item with POST
// /checkout/{item}?stock=K (the query only when stock is not one).
func (c *Client) CheckoutOf(ctx context.Context, item, _ string, stock int64) (bool, error) {
	r, err := c.do(ctx, CallCheckout, item, c.k.limitParams(story.OpCheckout, stock)...)
	return r.OK, err
}

// Admit counts one request of caller with POST /limit/{caller}, with
// ?limit=L when w's limit is not the contract's story.WindowLimit. The
// service keeps its own window length; w's is not sent.
func (c *Client) Admit(ctx context.Context, caller string, w story.Window) (story.Admission, error) {
	r, err := c.do(ctx, CallLimit, caller, c.k.limitParams(story.OpLimit, w.Limit)...)
	return story.Admission{Allowed: r.OK, Count: r.Value, Window: r.Window}, err
}

// Admitted reads one window's count with GET /limit/{caller}?window=n.
func (c *Client) Admitted(ctx context.Context, caller string, _ story.Window, n int64) (int64, error) {
	r, err := c.do(ctx, CallWindow, caller, param{name: "window", value: strconv.FormatInt(n, 10)})
	return r.Value, err
}

// Subscribe starts subscriber's paid plan with POST /subscribe/{subscriber}.
func (c *Client) Subscribe(ctx context.Context, subscriber string) error {
	_, err := c.do(ctx, CallSubscribe, subscriber)
	return err
}

// Cancel ends subscriber's plan with POST /cancel/{subscriber}.
func (c *Client) Cancel(ctx context.Context, subscriber string) error {
	_, err := c.do(ctx, CallCancel, subscriber)
	return err
}

// Paid reads the plan as the service's pages read it, possibly cached,
// with GET /plan/{subscriber}.
func (c *Client) Paid(ctx context.Context, subscriber string) (bool, error) {
	r, err := c.do(ctx, CallPlan, subscriber)
	return r.OK && err == nil, err
}

// Download asks for an original with POST /original/{subscriber}, with
// ?limit=L when the story's daily limit is not the contract's
// story.DailyLimit. Either refusal (403 no paid plan, 429 the limit) is a
// refusal; any other answer is an error, never a grant.
func (c *Client) Download(ctx context.Context, subscriber string, limit int64) (bool, int64, error) {
	r, err := c.do(ctx, CallOriginal, subscriber, c.k.limitParams(story.OpOriginal, limit)...)
	if err != nil {
		return false, 0, err
	}
	return r.OK, r.Value, nil
}

// Downloads reads the originals counted today with GET
// /original/{subscriber}.
func (c *Client) Downloads(ctx context.Context, subscriber string) (int64, error) {
	r, err := c.do(ctx, CallOriginals, subscriber)
	return r.Value, err
}

// errNoRecords: the contract does not list what a service stores.
var errNoRecords = errors.New("the HTTP contract has no call that lists a caller's window records")

// Records is not part of the contract: what a service keeps is its own.
func (c *Client) Records(context.Context, string, story.Window) (int64, error) {
	return 0, errNoRecords
}

// Take makes a request of op, an op of the client's table with no
// interface of its own (story.Capped), on key, with the limit where its
// row carries one, as every story's request carries it.
func (c *Client) Take(ctx context.Context, op story.Op, key string, limit int64) (bool, int64, error) {
	call, err := c.k.callOf(op)
	if err != nil {
		return false, 0, err
	}
	r, err := c.do(ctx, call, key, c.k.limitParams(op, limit)...)
	return r.OK, r.Value, err
}

// Taken reads op's count on key with its row's read.
func (c *Client) Taken(ctx context.Context, op story.Op, key string) (int64, error) {
	spec, ok := c.k.ops.Spec(op)
	if !ok {
		_, err := c.k.callOf(op)
		return 0, err
	}
	r, err := c.do(ctx, Call(spec.Read), key)
	return r.Value, err
}

// Claims reads the claims on item with GET /item/{item}.
func (c *Client) Claims(ctx context.Context, item string) (int64, error) {
	r, err := c.do(ctx, CallItem, item)
	return r.Value, err
}

// Prepare readies the connections for bursts of n (burst.Pool.Prepare):
// it resolves SyncAuto by probing the server, then opens and warms what
// the mode needs, so that a burst pays for none of it.
func (c *Client) Prepare(ctx context.Context, n int) error { return c.pool.Prepare(ctx, n) }

// WarmedUp is how the last warm-up of whole-request connections went
// (burst.Pool.WarmedUp).
func (c *Client) WarmedUp() burst.WarmUp { return c.pool.WarmedUp() }

// Gate readies a burst of n requests made by the story's own request
// function, through the client's story methods (targets.Stager): under
// the contexts of the gate's calls (burst.StageCalls) each method stages
// its request rather than send it whole, and returns once it is released
// and answered. A request is then made one way, the story's, whether it
// goes whole or in a burst.
func (c *Client) Gate(n int) *burst.Gate { return c.pool.Gate(n) }

// Close closes every connection and waits for their readers to end.
func (c *Client) Close() error { return c.pool.Close() }
