package server

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"
	"unicode"
	"unicode/utf8"

	"github.com/racelab/racelab/targets/httpapi"
	"github.com/racelab/racelab/targets/story"
)

// Defaults of Handler, in one place; Server's are in guarded.go.
const (
	// DefaultMaxBody bounds a request's body; the contract sends none.
	DefaultMaxBody = 64 << 10
	// MaxKeyBytes bounds a key once decoded. WordPress keeps a post's
	// slug in 200 characters, percent-encoded when it is not ASCII; this
	// leaves room for that and refuses what cannot be a key.
	MaxKeyBytes = 1024
	// MaxBatchKeys bounds the keys of one GET /get?slugs= read.
	MaxBatchKeys = 100
	// DefaultStatsKeys is how many (route, key) pairs /stats remembers; the
	// oldest are forgotten first, so a server up for days stays small.
	DefaultStatsKeys = 100_000
)

// Option sets one of Handler's settings.
type Option func(*Handler)

// WithClock sets the clock Handler reads the quota's UTC day and the
// arrival instants from.
func WithClock(now func() time.Time) Option { return func(h *Handler) { h.now = now } }

// WithMaxBody sets the largest request body Handler reads; larger ones are
// answered 413.
func WithMaxBody(n int64) Option { return func(h *Handler) { h.maxBody = n } }

// WithStoreName names the store in GET / and in errors, such as "kv".
func WithStoreName(name string) Option { return func(h *Handler) { h.name = name } }

// WithOps sets the ops table Handler serves: the zero Table is the
// stories' own (story.Ops). An op of the table with no answer of its own
// here (a story's own op, such as a test's) is served over a store that
// keeps capped counts (story.Capped): its request answers 200, or its
// row's first refusal status, with the row's OK and Field; its read
// answers the key, the count in the row's read field, and the limit. A
// table whose op takes the name of another of the contract's calls
// (subscribe, cancel, plan, get-many) makes New panic: the table
// is code, not input.
func WithOps(t story.Table) Option { return func(h *Handler) { h.ops = t } }

// WithStatsKeys sets how many (route, key) pairs GET /stats remembers.
func WithStatsKeys(n int) Option { return func(h *Handler) { h.stats.max = n } }

// WithErrorLog sets where Handler writes the detail of a store's failure,
// one line each, while the client is told only that the store failed: the
// detail may name a server address, a file or a key that is nobody else's
// business. A nil w (the default) drops the detail. Each line is one Write
// call; a writer shared with a Server must be safe for concurrent use.
func WithErrorLog(w io.Writer) Option {
	return func(h *Handler) {
		h.log = nil
		if w != nil {
			h.log = log.New(w, "racelab serve: ", 0)
		}
	}
}

// Handler serves the contract over a store. Build it with New.
type Handler struct {
	store   any
	ops     story.Table     // as WithOps set it
	routes  httpapi.Mapping // the contract over ops
	name    string
	now     func() time.Time
	maxBody int64
	mux     *http.ServeMux
	stats   *stats
	log     *log.Logger  // nil: store failures are not logged
	buyers  atomic.Int64 // names the buyers of checkouts, which the contract leaves anonymous
	bug     Bug          // a teaching bug (WithBug); empty for none
}

var _ http.Handler = (*Handler)(nil)

// New serves the contract over store, which implements
// story.Counter, story.Quota, story.Inventory, story.Limiter,
// story.Plans and/or story.Capped; a story it does not implement is
// answered 501.
func New(store any, opts ...Option) *Handler {
	h := &Handler{store: store, now: time.Now, maxBody: DefaultMaxBody,
		stats: &stats{max: DefaultStatsKeys, keys: map[statKey]*keyStats{}, routes: map[string]int64{}}}
	for _, o := range opts {
		o(h)
	}
	routes, err := httpapi.ContractOver(h.ops)
	if err != nil {
		panic("handler: " + err.Error())
	}
	h.routes = routes
	mux := http.NewServeMux()
	// Patterns carry no method: net/http would answer a wrong method with
	// a text body, and the contract wants JSON with an Allow header.
	mux.HandleFunc("/{$}", Only(http.MethodGet, h.index))
	// The contract's routes are the ops table's; each call is answered by
	// its handler here, and an op with none of its own as a capped count.
	answers := map[httpapi.Call]http.HandlerFunc{
		httpapi.CallHit: h.hit, httpapi.CallGet: h.get, httpapi.CallGetMany: h.getBatch,
		httpapi.CallDownload: h.download, httpapi.CallQuota: h.quota,
		httpapi.CallCheckout: h.checkout, httpapi.CallItem: h.item,
		httpapi.CallLimit: h.limit, httpapi.CallWindow: h.window,
		httpapi.CallSubscribe: h.subscribe, httpapi.CallCancel: h.cancel, httpapi.CallPlan: h.plan,
		httpapi.CallOriginal: h.original, httpapi.CallOriginals: h.originals,
	}
	for _, s := range h.ops.Specs() {
		if _, own := answers[httpapi.Call(s.Op)]; !own {
			answers[httpapi.Call(s.Op)], answers[httpapi.Call(s.Read)] = h.take(s), h.taken(s)
		}
	}
	methods := map[string]map[string]http.HandlerFunc{} // by path, then method
	for call, route := range routes {
		path, _, _ := strings.Cut(route.Path, "?")
		if methods[path] == nil {
			methods[path] = map[string]http.HandlerFunc{}
		}
		methods[path][route.Method] = answers[call]
	}
	for path, byMethod := range methods {
		mux.HandleFunc(path, h.byMethod(byMethod))
	}
	mux.HandleFunc("/stats", Only(http.MethodGet, h.serveStats))
	mux.HandleFunc("/", h.notFound)
	h.mux = mux
	return h
}

// ServeHTTP reads the whole request before anything else: a request is
// complete only at its last byte, and a synchronized burst withholds
// exactly that byte (HTTP/1.1) or frame (HTTP/2, whose handlers start at
// HEADERS). Acting before it would act before the release. The arrival
// instant is taken right then and sent back on every answer.
func (h *Handler) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	_, err := io.Copy(io.Discard, http.MaxBytesReader(w, r.Body, h.maxBody))
	arrival := h.now()
	w.Header().Set(httpapi.ArrivalHeader, strconv.FormatInt(arrival.UnixNano(), 10))
	if err != nil {
		var tooBig *http.MaxBytesError
		if errors.As(err, &tooBig) {
			WriteError(w, http.StatusRequestEntityTooLarge, fmt.Sprintf("request body over %d bytes; the contract's requests have none", tooBig.Limit))
			return
		}
		WriteError(w, http.StatusBadRequest, "read request body: "+err.Error())
		return
	}
	h.stats.total.Add(1)
	h.mux.ServeHTTP(w, r.WithContext(context.WithValue(r.Context(), arrivalKey{}, arrival)))
}

type arrivalKey struct{}

// byMethod answers a path's requests by their method. A path that both
// asks (POST) and reads (GET), such as /limit/{caller}, answers any other
// method as its read does: 405, use GET.
func (h *Handler) byMethod(handlers map[string]http.HandlerFunc) http.HandlerFunc {
	if read, ok := handlers[http.MethodGet]; ok && len(handlers) > 1 {
		fallback := Only(http.MethodGet, read)
		return func(w http.ResponseWriter, r *http.Request) {
			if next, ok := handlers[r.Method]; ok && r.Method != http.MethodGet {
				next(w, r)
				return
			}
			fallback(w, r)
		}
	}
	for m, next := range handlers {
		return Only(m, next) // the one method of the path
	}
	return h.notFound
}

// keyed says whether word is the first word of one of the contract's
// routes that take a key in their path (/hit/{slug}), for notFound's
// advice.
func (h *Handler) keyed(word string) bool {
	for _, r := range h.routes {
		if w, rest, ok := strings.Cut(strings.TrimPrefix(r.Path, "/"), "/"); ok && w == word && strings.HasPrefix(rest, "{") {
			return true
		}
	}
	return false
}

func (h *Handler) notFound(w http.ResponseWriter, r *http.Request) {
	first, rest, hasKey := strings.Cut(strings.TrimPrefix(r.URL.Path, "/"), "/")
	if hasKey && h.keyed(first) {
		if rest == "" {
			WriteError(w, http.StatusBadRequest, fmt.Sprintf("bad key: /%s/ needs a key after it", first))
		} else {
			WriteError(w, http.StatusNotFound, fmt.Sprintf("no route %s: a key is one path segment; encode / in a key as %%2F", r.URL.Path))
		}
		return
	}
	WriteError(w, http.StatusNotFound, fmt.Sprintf("no route %s %s; see GET / for the routes", r.Method, r.URL.Path))
}

// key is the path's {name} wildcard, which net/http has percent-decoded
// once, as the contract says: it is never decoded again.
func (h *Handler) key(w http.ResponseWriter, r *http.Request, name string) (string, bool) {
	k := r.PathValue(name)
	if err := checkKey(k); err != nil {
		WriteError(w, http.StatusBadRequest, fmt.Sprintf("bad key: %s %v", name, err))
		return "", false
	}
	return k, true
}

// checkKey refuses what cannot be a key: empty, too long, not UTF-8, or
// holding control characters.
func checkKey(k string) error {
	switch {
	case k == "":
		return errors.New("is empty")
	case len(k) > MaxKeyBytes:
		return fmt.Errorf("is over %d bytes", MaxKeyBytes)
	case !utf8.ValidString(k):
		return fmt.Errorf("%q is not UTF-8 once percent-decoded", k)
	case strings.ContainsFunc(k, unicode.IsControl):
		return fmt.Errorf("%q holds a control character", k)
	}
	return nil
}

func (h *Handler) index(w http.ResponseWriter, r *http.Request) {
	h.stats.record("index", "", r)
	routes := []string{
		"POST /hit/{slug}", "GET /get/{slug}", "GET /get?slugs=a,b,c",
		"POST /download/{visitor}", "GET /quota/{visitor}",
		"POST /checkout/{item}", "GET /item/{item}",
		"POST /limit/{caller}", "GET /limit/{caller}?window=w",
		"POST /subscribe/{subscriber}", "POST /cancel/{subscriber}", "GET /plan/{subscriber}",
		"POST /original/{subscriber}", "GET /original/{subscriber}",
	}
	for _, s := range h.ops.Specs() {
		if _, own := story.Ops().Spec(s.Op); !own {
			routes = append(routes, s.Method+" "+s.Route, "GET "+s.ReadRoute)
		}
	}
	WriteJSON(w, http.StatusOK, map[string]any{
		"service": "racelab serve",
		"store":   h.name,
		"routes":  append(routes, "GET /stats?route=hit&key=K"),
	})
}

func (h *Handler) hit(w http.ResponseWriter, r *http.Request) {
	h.views(w, r, httpapi.CallHit, story.Counter.Hit)
}

func (h *Handler) get(w http.ResponseWriter, r *http.Request) {
	h.views(w, r, httpapi.CallGet, story.Counter.Views)
}

// views answers a route whose answer is a slug's total: hit's after it
// counted, get's as read.
func (h *Handler) views(w http.ResponseWriter, r *http.Request, call httpapi.Call,
	count func(story.Counter, context.Context, string) (int64, error)) {
	serveKeyed(h, w, r, call, noCounter, func(c story.Counter, slug string) (int, any, error) {
		n, err := count(c, r.Context(), slug)
		return http.StatusOK, map[string]any{"slug": slug, "views": n}, err
	})
}

// getBatch answers GET /get?slugs=a,b,c. Keys are split on the literal
// commas of the raw query and each is then percent-decoded exactly once,
// so an encoded comma (%2C) stays inside its key, and a key stored
// percent-encoded (as WordPress stores non-ASCII slugs, sent as %25D9…)
// is looked up as stored. Decoding a second time is the bug this guards
// against: the key no longer matches its row and reads as 0, silently.
func (h *Handler) getBatch(w http.ResponseWriter, r *http.Request) {
	var raw []string
	found := false
	for part := range strings.SplitSeq(r.URL.RawQuery, "&") {
		name, value, _ := strings.Cut(part, "=")
		if n, err := url.QueryUnescape(name); err == nil && n == "slugs" {
			found = true
			raw = append(raw, strings.Split(value, ",")...)
		}
	}
	if !found {
		WriteError(w, http.StatusBadRequest, "bad key: want /get/{slug} or /get?slugs=a,b,c")
		return
	}
	if len(raw) > MaxBatchKeys {
		WriteError(w, http.StatusBadRequest, fmt.Sprintf("bad key: %d slugs; at most %d at once", len(raw), MaxBatchKeys))
		return
	}
	slugs := make([]string, len(raw))
	for i, s := range raw {
		slug, err := url.QueryUnescape(s)
		if err == nil {
			err = checkKey(slug)
		}
		if err != nil {
			WriteError(w, http.StatusBadRequest, fmt.Sprintf("bad key: slug %d of slugs %v", i+1, err))
			return
		}
		slugs[i] = slug
	}
	c, ok := plays[story.Counter](h, w, noCounter)
	if !ok {
		return
	}
	out := make(map[string]int64, len(slugs))
	for _, slug := range slugs {
		h.stats.record("get", slug, r)
		n, err := c.Views(r.Context(), h.batchLookup(slug))
		if err != nil {
			h.storeError(w, r, err)
			return
		}
		out[slug] = n
	}
	WriteJSON(w, http.StatusOK, out)
}

func (h *Handler) download(w http.ResponseWriter, r *http.Request) {
	serveHeld(h, w, r, httpapi.CallDownload, story.OpDownload, noQuota, func(q story.Quota, visitor string, limit int64) (int, any, error) {
		granted, n, err := q.Consume(r.Context(), visitor, limit)
		if !granted && err == nil {
			h.retryAtMidnight(w)
			return http.StatusTooManyRequests, map[string]any{"allowed": false, "count": n}, nil
		}
		return http.StatusOK, map[string]any{"allowed": true, "count": n}, err
	})
}

func (h *Handler) quota(w http.ResponseWriter, r *http.Request) {
	serveHeld(h, w, r, httpapi.CallQuota, story.OpDownload, noQuota, func(q story.Quota, visitor string, limit int64) (int, any, error) {
		return h.today(r, "visitor", visitor, limit, q.Count)
	})
}

// today answers the read of a daily count (the downloads, the
// originals): the key's count today and the limit it is held to.
func (h *Handler) today(r *http.Request, name, key string, limit int64,
	count func(context.Context, string) (int64, error)) (int, any, error) {
	n, err := count(r.Context(), key)
	return http.StatusOK, map[string]any{name: key, "day": h.now().UTC().Format(time.DateOnly), "count": n, "limit": limit}, err
}

// retryAtMidnight says when a daily limit starts over: at the next UTC
// midnight.
func (h *Handler) retryAtMidnight(w http.ResponseWriter) {
	now := h.now().UTC()
	midnight := time.Date(now.Year(), now.Month(), now.Day()+1, 0, 0, 0, 0, time.UTC)
	w.Header().Set("Retry-After", strconv.Itoa(int(midnight.Sub(now).Seconds())+1))
}

func (h *Handler) checkout(w http.ResponseWriter, r *http.Request) {
	serveHeld(h, w, r, httpapi.CallCheckout, story.OpCheckout, noInventory, func(inv story.Inventory, item string, stock int64) (int, any, error) {
		buyer := "buyer-" + strconv.FormatInt(h.buyers.Add(1), 10)
		var claimed bool
		var err error
		if st, many := inv.(story.Stocked); many && stock != story.Stock {
			claimed, err = st.CheckoutOf(r.Context(), item, buyer, stock)
		} else {
			claimed, err = inv.Checkout(r.Context(), item, buyer)
		}
		if !claimed && err == nil {
			return http.StatusConflict, map[string]any{"error": "being checked out", "item": item}, nil
		}
		return http.StatusOK, map[string]any{"reserved": true}, err
	})
}

func (h *Handler) item(w http.ResponseWriter, r *http.Request) {
	serveHeld(h, w, r, httpapi.CallItem, story.OpCheckout, noInventory, func(inv story.Inventory, item string, stock int64) (int, any, error) {
		n, err := inv.Claims(r.Context(), item)
		return http.StatusOK, map[string]any{"item": item, "stock": stock, "claims": n}, err
	})
}

// maxLimit bounds a request's limit (?limit=L) and an item's stock
// (?stock=K): racelab's bursts are at most this big, so a larger one
// refuses nothing and can only be a mistake.
const maxLimit = 10000

// badRequest is a mistake of the request that its sender must fix,
// answered 400 with its text.
type badRequest string

func (e badRequest) Error() string { return string(e) }

// limitOf reads the limit a request of op, or a read of its count, is
// held to (story.OpSpec.Limit: ?limit=L, or ?stock=K for an item): the
// contract's when the request does not say, so that a client written
// before limits travelled is served as it always was.
func (h *Handler) limitOf(r *http.Request, op story.Op) (int64, error) {
	spec, _ := h.ops.Spec(op)
	v := r.URL.Query().Get(spec.Limit)
	if v == "" {
		return spec.DefaultLimit, nil
	}
	n, err := strconv.ParseInt(v, 10, 64)
	if err != nil || n < 1 || n > maxLimit {
		return 0, badRequest(fmt.Sprintf("%s %q: want a whole number from 1 to %d", spec.Limit, v, maxLimit))
	}
	return n, nil
}

// serveWindow is the rate limit racelab serve keeps: six-of-five's, 5 a
// caller per 60-second window, unless a request says the story's limit
// (?limit=L). The window's length is always the contract's: it does not
// travel.
var serveWindow = story.Window{Limit: story.WindowLimit, Length: story.WindowLength}

func (h *Handler) limit(w http.ResponseWriter, r *http.Request) {
	serveHeld(h, w, r, httpapi.CallLimit, story.OpLimit, noLimiter, func(lim story.Limiter, caller string, limit int64) (int, any, error) {
		win := story.Window{Limit: limit, Length: serveWindow.Length}
		a, err := lim.Admit(r.Context(), caller, win)
		body := map[string]any{"allowed": a.Allowed, "count": a.Count, "window": a.Window}
		if !a.Allowed && err == nil {
			// The count starts over with the next window.
			end := time.Unix(0, (a.Window+1)*int64(win.Length))
			w.Header().Set("Retry-After", strconv.Itoa(int(end.Sub(h.now()).Seconds())+1))
			return http.StatusTooManyRequests, body, nil
		}
		return http.StatusOK, body, err
	})
}

func (h *Handler) window(w http.ResponseWriter, r *http.Request) {
	serveHeld(h, w, r, httpapi.CallWindow, story.OpLimit, noLimiter, func(lim story.Limiter, caller string, limit int64) (int, any, error) {
		win := story.Window{Limit: limit, Length: serveWindow.Length}
		n := win.Number(h.now())
		if v := r.URL.Query().Get("window"); v != "" {
			var err error
			if n, err = strconv.ParseInt(v, 10, 64); err != nil || n < 0 {
				return 0, nil, badRequest(fmt.Sprintf("window %q: want a window number such as %d", v, win.Number(h.now())))
			}
		}
		c, err := lim.Admitted(r.Context(), caller, win, n)
		return http.StatusOK, map[string]any{"caller": caller, "window": n, "count": c, "limit": win.Limit}, err
	})
}

func (h *Handler) subscribe(w http.ResponseWriter, r *http.Request) {
	h.setPlan(w, r, httpapi.CallSubscribe, "paid", story.Plans.Subscribe)
}

func (h *Handler) cancel(w http.ResponseWriter, r *http.Request) {
	h.setPlan(w, r, httpapi.CallCancel, "cancelled", story.Plans.Cancel)
}

// setPlan changes the plan with set and answers the plan it wrote.
func (h *Handler) setPlan(w http.ResponseWriter, r *http.Request, call httpapi.Call, plan string,
	set func(story.Plans, context.Context, string) error) {
	serveKeyed(h, w, r, call, noPlans, func(p story.Plans, subscriber string) (int, any, error) {
		err := set(p, r.Context(), subscriber)
		return http.StatusOK, map[string]any{"subscriber": subscriber, "plan": plan}, err
	})
}

// plan answers the plan as the store's pages read it: from its cache,
// where it keeps one, so possibly still paid after a cancel.
func (h *Handler) plan(w http.ResponseWriter, r *http.Request) {
	serveKeyed(h, w, r, httpapi.CallPlan, noPlans, func(p story.Plans, subscriber string) (int, any, error) {
		paid, err := p.Paid(r.Context(), subscriber)
		return http.StatusOK, map[string]any{"subscriber": subscriber, "paid": paid}, err
	})
}

// original answers stale-plan's request. story.Plans gives no reason for
// a refusal; the count tells them apart: a store refuses at the daily
// limit with the count that reached it, and without a paid plan below it
// (every store answers 0 then, having read no count at all).
func (h *Handler) original(w http.ResponseWriter, r *http.Request) {
	serveHeld(h, w, r, httpapi.CallOriginal, story.OpOriginal, noPlans, func(p story.Plans, subscriber string, limit int64) (int, any, error) {
		granted, n, err := p.Download(r.Context(), subscriber, limit)
		body := map[string]any{"granted": granted, "count": n}
		switch {
		case granted || err != nil:
			return http.StatusOK, body, err
		case n >= limit:
			h.retryAtMidnight(w)
			return http.StatusTooManyRequests, body, nil
		}
		return http.StatusForbidden, body, nil
	})
}

func (h *Handler) originals(w http.ResponseWriter, r *http.Request) {
	serveHeld(h, w, r, httpapi.CallOriginals, story.OpOriginal, noPlans, func(p story.Plans, subscriber string, limit int64) (int, any, error) {
		return h.today(r, "subscriber", subscriber, limit, p.Downloads)
	})
}

// take answers a request of op, an op of the table with no answer of its
// own: granted and counted while the key's count is below the request's
// limit, refused at it with the row's first refusal status, by a store
// that keeps capped counts (story.Capped). The answer holds what the row
// says it holds: the yes or no in its OK, the count in its Field.
func (h *Handler) take(op story.OpSpec) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		serveHeld(h, w, r, httpapi.Call(op.Op), op.Op, noCapped, func(c story.Capped, key string, limit int64) (int, any, error) {
			granted, n, err := c.Take(r.Context(), op.Op, key, limit)
			body := map[string]any{}
			if op.OK != "" {
				body[op.OK] = granted
			}
			if op.Field != "" {
				body[op.Field] = n
			}
			if !granted && err == nil && len(op.Refused) > 0 {
				return op.Refused[0], body, nil
			}
			return http.StatusOK, body, err
		})
	}
}

// taken answers the read of op's count on a key, as take's store counted
// it, with the key and the limit it is held to, as every read of a count
// does.
func (h *Handler) taken(op story.OpSpec) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		serveHeld(h, w, r, httpapi.Call(op.Read), op.Op, noCapped, func(c story.Capped, key string, limit int64) (int, any, error) {
			n, err := c.Taken(r.Context(), op.Op, key)
			body := map[string]any{op.Key: key, op.ReadField: n}
			if op.Limit != "" {
				body[op.Limit] = limit
			}
			return http.StatusOK, body, err
		})
	}
}

// serveKeyed answers a route of call on one key: it checks the path's key
// (400), counts the request under call, takes the story S off the store
// (501 saying what it doesNot do when it does not play it), then answers what
// answer says: a status and its JSON body, a badRequest (400), or the
// store's failure.
func serveKeyed[S any](h *Handler, w http.ResponseWriter, r *http.Request, call httpapi.Call,
	doesNot string, answer func(s S, key string) (int, any, error)) {
	key, ok := h.key(w, r, h.routes[call].KeyWord())
	if !ok {
		return
	}
	h.stats.record(string(call), key, r)
	s, ok := plays[S](h, w, doesNot)
	if !ok {
		return
	}
	code, body, err := answer(s, key)
	var bad badRequest
	switch {
	case errors.As(err, &bad):
		WriteError(w, http.StatusBadRequest, bad.Error())
	case errors.Is(err, story.ErrKeyRefused):
		WriteError(w, http.StatusBadRequest, fmt.Sprintf("bad key: %s: %s refuses it (too long once its own prefix is added, or reserved)", "{"+h.routes[call].KeyWord()+"}", h.storeLabel()))
	case err != nil:
		h.storeError(w, r, err)
	default:
		WriteJSON(w, code, body)
	}
}

// serveHeld is serveKeyed for a request of op, or a read of its count,
// which is held to op's limit: answer gets the limit the request says
// (limitOf), or the contract's.
func serveHeld[S any](h *Handler, w http.ResponseWriter, r *http.Request, call httpapi.Call, op story.Op,
	doesNot string, answer func(s S, key string, limit int64) (int, any, error)) {
	serveKeyed(h, w, r, call, doesNot, func(s S, key string) (int, any, error) {
		limit, err := h.limitOf(r, op)
		if err != nil {
			return 0, nil, err
		}
		return answer(s, key, limit)
	})
}

// What a store that does not play a story does not do, as a 501 says it.
const (
	noCounter   = "does not count views"
	noQuota     = "keeps no download quota"
	noInventory = "keeps no inventory"
	noLimiter   = "keeps no rate limit"
	noPlans     = "keeps no subscription plans"
	noCapped    = "keeps no capped counts"
)

// plays takes the story S off the store, or answers 501 saying what the
// store does not do.
func plays[S any](h *Handler, w http.ResponseWriter, doesNot string) (S, bool) {
	s, ok := h.store.(S)
	if !ok {
		WriteError(w, http.StatusNotImplemented, h.storeLabel()+" "+doesNot)
	}
	return s, ok
}

func (h *Handler) storeLabel() string {
	if h.name == "" {
		return "the store"
	}
	return "store " + h.name
}

// Store failures as the client reads them. The store's own error names
// what the client has no business knowing (a Redis address, a DSN, a file
// path, someone else's key), so it goes to the log and not into the body.
const (
	msgStoreFailed    = "store failed"
	msgStoreCancelled = "store failed: the request was cancelled or the server is stopping"
)

// storeError answers a failure of the store itself: 500, or 503 when the
// client went away or the server is stopping, so nobody reads it as a
// verdict. The body is generic; the detail is logged, on one line.
func (h *Handler) storeError(w http.ResponseWriter, r *http.Request, err error) {
	code, msg := http.StatusInternalServerError, msgStoreFailed
	if r.Context().Err() != nil {
		code, msg = http.StatusServiceUnavailable, msgStoreCancelled
	}
	if h.log != nil {
		// The escaped URI and a flattened error keep the entry on one
		// line whatever the key or the driver's message holds.
		detail := strings.Join(strings.Fields(err.Error()), " ")
		h.log.Printf("%s %s: %d: %s: %s", r.Method, r.URL.RequestURI(), code, h.storeLabel(), detail)
	}
	WriteError(w, code, msg)
}

// stats remembers, per (route, key), how many requests arrived and the
// first and last of their arrival instants: a burst's arrival spread as the
// server saw it, whoever sent the burst.
type stats struct {
	total atomic.Int64

	mu     sync.Mutex
	max    int
	routes map[string]int64
	keys   map[statKey]*keyStats
	order  []statKey // oldest first, for forgetting
}

type statKey struct{ route, key string }

type keyStats struct {
	n           int64
	first, last time.Time
}

func (s *stats) record(route, key string, r *http.Request) {
	at, _ := r.Context().Value(arrivalKey{}).(time.Time)
	s.mu.Lock()
	defer s.mu.Unlock()
	s.routes[route]++
	if key == "" || s.max <= 0 {
		return
	}
	k := statKey{route, key}
	ks := s.keys[k]
	if ks == nil {
		if len(s.order) >= s.max {
			delete(s.keys, s.order[0])
			s.order = s.order[1:]
		}
		ks = &keyStats{first: at, last: at}
		s.keys[k] = ks
		s.order = append(s.order, k)
	}
	ks.n++
	if at.Before(ks.first) {
		ks.first = at
	}
	if at.After(ks.last) {
		ks.last = at
	}
}

// serveStats answers GET /stats with the requests per route, or, given
// ?route=R&key=K, the requests that route had for that key and how far
// apart they arrived.
func (h *Handler) serveStats(w http.ResponseWriter, r *http.Request) {
	q := r.URL.Query() // decoded once, like every key
	route, key := q.Get("route"), q.Get("key")
	s := h.stats
	s.mu.Lock()
	defer s.mu.Unlock()
	if key == "" {
		WriteJSON(w, http.StatusOK, map[string]any{"requests": s.total.Load(), "routes": s.routes})
		return
	}
	if route == "" {
		route = "hit"
	}
	out := map[string]any{"route": route, "key": key, "requests": 0}
	if ks := s.keys[statKey{route, key}]; ks != nil {
		out["requests"] = ks.n
		out["first_arrival_ns"] = ks.first.UnixNano()
		out["last_arrival_ns"] = ks.last.UnixNano()
		out["arrival_spread_ns"] = ks.last.Sub(ks.first).Nanoseconds()
	}
	WriteJSON(w, http.StatusOK, out)
}

// Requests is how many requests the handler has read in full.
func (h *Handler) Requests() int64 { return h.stats.total.Load() }
