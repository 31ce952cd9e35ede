package httpapi

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log"
	"net"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"
	"unicode"
	"unicode/utf8"

	"github.com/racelab/racelab/targets/story"
)

// ArrivalHeader carries, on every answer of Handler, the instant the
// request was complete at the server, in Unix nanoseconds.
const ArrivalHeader = "Racelab-Arrival"

// Defaults of Handler and Server, in one place.
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
	// DefaultShutdownTimeout is how long Server waits for requests in
	// flight when it is stopped, before it closes their connections.
	DefaultShutdownTimeout = 10 * time.Second
	// DefaultMaxStreams is the HTTP/2 streams Server lets one connection
	// have open at once, and so the widest single-packet burst it takes.
	DefaultMaxStreams = 250
	// DefaultMaxConns is how many connections Server keeps open at once;
	// further ones wait, unanswered, in the kernel's accept queue until one
	// closes. Every connection costs a file descriptor, and idle ones once
	// piled up until serve could open no file at all. 1024 covers an
	// HTTP/1.1 lastbyte burst of 1,000 (a connection per request); an h2
	// burst needs one connection per DefaultMaxStreams requests.
	DefaultMaxConns = 1024
	// DefaultReadHeaderTimeout bounds how long a request's head may take to
	// arrive. A lastbyte burst holds back the final byte of each head until
	// its release, which follows staging by milliseconds to seconds; a
	// client that never finishes is cut off, so it cannot hold a
	// connection forever.
	DefaultReadHeaderTimeout = 30 * time.Second
	// DefaultIdleTimeout closes a kept-alive connection that carries no
	// request for this long. Clients warm connections just before a burst,
	// so it only has to outlast one trial's preparation; racelab's client
	// opens a fresh connection when it finds one closed.
	DefaultIdleTimeout = 2 * time.Minute
)

// HandlerOption sets one of Handler's settings.
type HandlerOption func(*Handler)

// WithClock sets the clock Handler reads the quota's UTC day and the
// arrival instants from.
func WithClock(now func() time.Time) HandlerOption { return func(h *Handler) { h.now = now } }

// WithMaxBody sets the largest request body Handler reads; larger ones are
// answered 413.
func WithMaxBody(n int64) HandlerOption { return func(h *Handler) { h.maxBody = n } }

// WithStoreName names the store in GET / and in errors, such as "kv".
func WithStoreName(name string) HandlerOption { return func(h *Handler) { h.name = name } }

// WithStatsKeys sets how many (route, key) pairs GET /stats remembers.
func WithStatsKeys(n int) HandlerOption { return func(h *Handler) { h.stats.max = n } }

// WithErrorLog sets where Handler writes the detail of a store's failure,
// one line each, while the client is told only that the store failed: the
// detail may name a server address, a file or a key that is nobody else's
// business. A nil w (the default) drops the detail. Each line is one Write
// call; a writer shared with a Server must be safe for concurrent use.
func WithErrorLog(w io.Writer) HandlerOption {
	return func(h *Handler) {
		h.log = nil
		if w != nil {
			h.log = log.New(w, "racelab serve: ", 0)
		}
	}
}

// Handler serves the contract over a store. Build it with NewHandler.
type Handler struct {
	store   any
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

// NewHandler serves the contract over store, which implements
// story.Counter, story.Quota, story.Inventory, story.Limiter and/or
// story.Plans; a story it does not implement is answered 501.
func NewHandler(store any, opts ...HandlerOption) *Handler {
	h := &Handler{store: store, now: time.Now, maxBody: DefaultMaxBody,
		stats: &stats{max: DefaultStatsKeys, keys: map[statKey]*keyStats{}, routes: map[string]int64{}}}
	for _, o := range opts {
		o(h)
	}
	mux := http.NewServeMux()
	// Patterns carry no method: net/http would answer a wrong method with
	// a text body, and the contract wants JSON with an Allow header.
	mux.HandleFunc("/{$}", h.only(http.MethodGet, h.index))
	mux.HandleFunc("/hit/{slug}", h.only(http.MethodPost, h.hit))
	mux.HandleFunc("/get/{slug}", h.only(http.MethodGet, h.get))
	mux.HandleFunc("/get", h.only(http.MethodGet, h.getBatch))
	mux.HandleFunc("/download/{visitor}", h.only(http.MethodPost, h.download))
	mux.HandleFunc("/quota/{visitor}", h.only(http.MethodGet, h.quota))
	mux.HandleFunc("/checkout/{item}", h.only(http.MethodPost, h.checkout))
	mux.HandleFunc("/item/{item}", h.only(http.MethodGet, h.item))
	mux.HandleFunc("/limit/{caller}", func(w http.ResponseWriter, r *http.Request) {
		if r.Method == http.MethodPost {
			h.limit(w, r)
			return
		}
		h.only(http.MethodGet, h.window)(w, r)
	})
	mux.HandleFunc("/subscribe/{subscriber}", h.only(http.MethodPost, h.subscribe))
	mux.HandleFunc("/cancel/{subscriber}", h.only(http.MethodPost, h.cancel))
	mux.HandleFunc("/plan/{subscriber}", h.only(http.MethodGet, h.plan))
	mux.HandleFunc("/original/{subscriber}", func(w http.ResponseWriter, r *http.Request) {
		if r.Method == http.MethodPost {
			h.original(w, r)
			return
		}
		h.only(http.MethodGet, h.originals)(w, r)
	})
	mux.HandleFunc("/stats", h.only(http.MethodGet, h.serveStats))
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
	w.Header().Set(ArrivalHeader, strconv.FormatInt(arrival.UnixNano(), 10))
	if err != nil {
		var tooBig *http.MaxBytesError
		if errors.As(err, &tooBig) {
			writeError(w, http.StatusRequestEntityTooLarge, fmt.Sprintf("request body over %d bytes; the contract's requests have none", tooBig.Limit))
			return
		}
		writeError(w, http.StatusBadRequest, "read request body: "+err.Error())
		return
	}
	h.stats.total.Add(1)
	h.mux.ServeHTTP(w, r.WithContext(context.WithValue(r.Context(), arrivalKey{}, arrival)))
}

type arrivalKey struct{}

// only answers 405 with an Allow header to any method but m (and HEAD for
// GET, whose body net/http drops).
func (h *Handler) only(m string, next http.HandlerFunc) http.HandlerFunc {
	allow := m
	if m == http.MethodGet {
		allow = "GET, HEAD"
	}
	return func(w http.ResponseWriter, r *http.Request) {
		if r.Method != m && (m != http.MethodGet || r.Method != http.MethodHead) {
			w.Header().Set("Allow", allow)
			writeError(w, http.StatusMethodNotAllowed, fmt.Sprintf("%s %s: method not allowed; use %s", r.Method, r.URL.Path, m))
			return
		}
		next(w, r)
	}
}

// routeNames are the routes that take a key, for notFound's advice.
var routeNames = []string{"hit", "get", "download", "quota", "checkout", "item", "limit",
	"subscribe", "cancel", "plan", "original"}

func (h *Handler) notFound(w http.ResponseWriter, r *http.Request) {
	first, rest, hasKey := strings.Cut(strings.TrimPrefix(r.URL.Path, "/"), "/")
	for _, name := range routeNames {
		if first != name || !hasKey {
			continue
		}
		if rest == "" {
			writeError(w, http.StatusBadRequest, fmt.Sprintf("bad key: /%s/ needs a key after it", name))
		} else {
			writeError(w, http.StatusNotFound, fmt.Sprintf("no route %s: a key is one path segment; encode / in a key as %%2F", r.URL.Path))
		}
		return
	}
	writeError(w, http.StatusNotFound, fmt.Sprintf("no route %s %s; see GET / for the routes", r.Method, r.URL.Path))
}

// key is the path's {name} wildcard, which net/http has percent-decoded
// once, as the contract says: it is never decoded again.
func (h *Handler) key(w http.ResponseWriter, r *http.Request, name string) (string, bool) {
	k := r.PathValue(name)
	if err := checkKey(k); err != nil {
		writeError(w, http.StatusBadRequest, fmt.Sprintf("bad key: %s %v", name, err))
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
	writeJSON(w, http.StatusOK, map[string]any{
		"service": "racelab serve",
		"store":   h.name,
		"routes": []string{
			"POST /hit/{slug}", "GET /get/{slug}", "GET /get?slugs=a,b,c",
			"POST /download/{visitor}", "GET /quota/{visitor}",
			"POST /checkout/{item}", "GET /item/{item}",
			"POST /limit/{caller}", "GET /limit/{caller}?window=w",
			"POST /subscribe/{subscriber}", "POST /cancel/{subscriber}", "GET /plan/{subscriber}",
			"POST /original/{subscriber}", "GET /original/{subscriber}",
			"GET /stats?route=hit&key=K",
		},
	})
}

func (h *Handler) hit(w http.ResponseWriter, r *http.Request) {
	slug, c, ok := keyed(h, w, r, "slug", "hit", h.counter)
	if !ok {
		return
	}
	n, err := c.Hit(r.Context(), slug)
	if err != nil {
		h.storeError(w, r, err)
		return
	}
	writeJSON(w, http.StatusOK, map[string]any{"slug": slug, "views": n})
}

func (h *Handler) get(w http.ResponseWriter, r *http.Request) {
	slug, c, ok := keyed(h, w, r, "slug", "get", h.counter)
	if !ok {
		return
	}
	n, err := c.Views(r.Context(), slug)
	if err != nil {
		h.storeError(w, r, err)
		return
	}
	writeJSON(w, http.StatusOK, map[string]any{"slug": slug, "views": n})
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
		writeError(w, http.StatusBadRequest, "bad key: want /get/{slug} or /get?slugs=a,b,c")
		return
	}
	if len(raw) > MaxBatchKeys {
		writeError(w, http.StatusBadRequest, fmt.Sprintf("bad key: %d slugs; at most %d at once", len(raw), MaxBatchKeys))
		return
	}
	slugs := make([]string, len(raw))
	for i, s := range raw {
		slug, err := url.QueryUnescape(s)
		if err == nil {
			err = checkKey(slug)
		}
		if err != nil {
			writeError(w, http.StatusBadRequest, fmt.Sprintf("bad key: slug %d of slugs %v", i+1, err))
			return
		}
		slugs[i] = slug
	}
	c, ok := h.counter(w)
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
	writeJSON(w, http.StatusOK, out)
}

func (h *Handler) download(w http.ResponseWriter, r *http.Request) {
	visitor, q, ok := keyed(h, w, r, "visitor", "download", h.quotaStore)
	if !ok {
		return
	}
	granted, n, err := q.Consume(r.Context(), visitor, story.DailyLimit)
	if err != nil {
		h.storeError(w, r, err)
		return
	}
	if !granted {
		// The quota starts over at the next UTC midnight.
		now := h.now().UTC()
		midnight := time.Date(now.Year(), now.Month(), now.Day()+1, 0, 0, 0, 0, time.UTC)
		w.Header().Set("Retry-After", strconv.Itoa(int(midnight.Sub(now).Seconds())+1))
		writeJSON(w, http.StatusTooManyRequests, map[string]any{"allowed": false, "count": n})
		return
	}
	writeJSON(w, http.StatusOK, map[string]any{"allowed": true, "count": n})
}

func (h *Handler) quota(w http.ResponseWriter, r *http.Request) {
	visitor, q, ok := keyed(h, w, r, "visitor", "quota", h.quotaStore)
	if !ok {
		return
	}
	n, err := q.Count(r.Context(), visitor)
	if err != nil {
		h.storeError(w, r, err)
		return
	}
	writeJSON(w, http.StatusOK, map[string]any{"visitor": visitor, "day": h.now().UTC().Format(time.DateOnly), "count": n, "limit": story.DailyLimit})
}

func (h *Handler) checkout(w http.ResponseWriter, r *http.Request) {
	item, inv, ok := keyed(h, w, r, "item", "checkout", h.inventory)
	if !ok {
		return
	}
	buyer := "buyer-" + strconv.FormatInt(h.buyers.Add(1), 10)
	stock, ok := h.stock(w, r)
	if !ok {
		return
	}
	var claimed bool
	var err error
	if st, many := inv.(story.Stocked); many && stock != story.Stock {
		claimed, err = st.CheckoutOf(r.Context(), item, buyer, stock)
	} else {
		claimed, err = inv.Checkout(r.Context(), item, buyer)
	}
	if err != nil {
		h.storeError(w, r, err)
		return
	}
	if !claimed {
		writeJSON(w, http.StatusConflict, map[string]any{"error": "being checked out", "item": item})
		return
	}
	writeJSON(w, http.StatusOK, map[string]any{"reserved": true})
}

func (h *Handler) item(w http.ResponseWriter, r *http.Request) {
	item, inv, ok := keyed(h, w, r, "item", "item", h.inventory)
	if !ok {
		return
	}
	n, err := inv.Claims(r.Context(), item)
	if err != nil {
		h.storeError(w, r, err)
		return
	}
	stock, ok := h.stock(w, r)
	if !ok {
		return
	}
	writeJSON(w, http.StatusOK, map[string]any{"item": item, "stock": stock, "claims": n})
}

// maxStock bounds ?stock=: racelab's bursts are at most this big.
const maxStock = 10000

// stock reads an item's ?stock=K, one when absent; ok is false when the
// answer (400) is written already.
func (h *Handler) stock(w http.ResponseWriter, r *http.Request) (int64, bool) {
	v := r.URL.Query().Get("stock")
	if v == "" {
		return story.Stock, true
	}
	n, err := strconv.ParseInt(v, 10, 64)
	if err != nil || n < 1 || n > maxStock {
		writeError(w, http.StatusBadRequest, fmt.Sprintf("stock %q: want a whole number from 1 to %d", v, maxStock))
		return 0, false
	}
	return n, true
}

// serveWindow is the limit racelab serve keeps: six-of-five's, 5 a caller
// per 60-second window.
var serveWindow = story.Window{Limit: story.WindowLimit, Length: story.WindowLength}

func (h *Handler) limit(w http.ResponseWriter, r *http.Request) {
	caller, lim, ok := keyed(h, w, r, "caller", "limit", h.limiter)
	if !ok {
		return
	}
	a, err := lim.Admit(r.Context(), caller, serveWindow)
	if err != nil {
		h.storeError(w, r, err)
		return
	}
	body := map[string]any{"allowed": a.Allowed, "count": a.Count, "window": a.Window}
	if !a.Allowed {
		// The count starts over with the next window.
		end := time.Unix(0, (a.Window+1)*int64(serveWindow.Length))
		w.Header().Set("Retry-After", strconv.Itoa(int(end.Sub(h.now()).Seconds())+1))
		writeJSON(w, http.StatusTooManyRequests, body)
		return
	}
	writeJSON(w, http.StatusOK, body)
}

func (h *Handler) window(w http.ResponseWriter, r *http.Request) {
	caller, lim, ok := keyed(h, w, r, "caller", "window", h.limiter)
	if !ok {
		return
	}
	n := serveWindow.Number(h.now())
	if v := r.URL.Query().Get("window"); v != "" {
		var err error
		if n, err = strconv.ParseInt(v, 10, 64); err != nil || n < 0 {
			writeError(w, http.StatusBadRequest, fmt.Sprintf("window %q: want a window number such as %d", v, serveWindow.Number(h.now())))
			return
		}
	}
	c, err := lim.Admitted(r.Context(), caller, serveWindow, n)
	if err != nil {
		h.storeError(w, r, err)
		return
	}
	writeJSON(w, http.StatusOK, map[string]any{"caller": caller, "window": n, "count": c, "limit": serveWindow.Limit})
}

func (h *Handler) subscribe(w http.ResponseWriter, r *http.Request) {
	h.setPlan(w, r, "subscribe", "paid", story.Plans.Subscribe)
}

func (h *Handler) cancel(w http.ResponseWriter, r *http.Request) {
	h.setPlan(w, r, "cancel", "cancelled", story.Plans.Cancel)
}

// setPlan changes the plan with set and answers the plan it wrote.
func (h *Handler) setPlan(w http.ResponseWriter, r *http.Request, route, plan string,
	set func(story.Plans, context.Context, string) error) {
	subscriber, p, ok := keyed(h, w, r, "subscriber", route, h.plans)
	if !ok {
		return
	}
	if err := set(p, r.Context(), subscriber); err != nil {
		h.storeError(w, r, err)
		return
	}
	writeJSON(w, http.StatusOK, map[string]any{"subscriber": subscriber, "plan": plan})
}

// plan answers the plan as the store's pages read it: from its cache,
// where it keeps one, so possibly still paid after a cancel.
func (h *Handler) plan(w http.ResponseWriter, r *http.Request) {
	subscriber, p, ok := keyed(h, w, r, "subscriber", "plan", h.plans)
	if !ok {
		return
	}
	paid, err := p.Paid(r.Context(), subscriber)
	if err != nil {
		h.storeError(w, r, err)
		return
	}
	writeJSON(w, http.StatusOK, map[string]any{"subscriber": subscriber, "paid": paid})
}

// original answers stale-plan's request. story.Plans gives no reason for
// a refusal; the count tells them apart: a store refuses at the daily
// limit with the count that reached it, and without a paid plan below it
// (every store answers 0 then, having read no count at all).
func (h *Handler) original(w http.ResponseWriter, r *http.Request) {
	subscriber, p, ok := keyed(h, w, r, "subscriber", "original", h.plans)
	if !ok {
		return
	}
	granted, n, err := p.Download(r.Context(), subscriber, story.DailyLimit)
	if err != nil {
		h.storeError(w, r, err)
		return
	}
	body := map[string]any{"granted": granted, "count": n}
	switch {
	case granted:
		writeJSON(w, http.StatusOK, body)
	case n >= story.DailyLimit:
		now := h.now().UTC()
		midnight := time.Date(now.Year(), now.Month(), now.Day()+1, 0, 0, 0, 0, time.UTC)
		w.Header().Set("Retry-After", strconv.Itoa(int(midnight.Sub(now).Seconds())+1))
		writeJSON(w, http.StatusTooManyRequests, body)
	default:
		writeJSON(w, http.StatusForbidden, body)
	}
}

func (h *Handler) originals(w http.ResponseWriter, r *http.Request) {
	subscriber, p, ok := keyed(h, w, r, "subscriber", "originals", h.plans)
	if !ok {
		return
	}
	n, err := p.Downloads(r.Context(), subscriber)
	if err != nil {
		h.storeError(w, r, err)
		return
	}
	writeJSON(w, http.StatusOK, map[string]any{"subscriber": subscriber, "day": h.now().UTC().Format(time.DateOnly), "count": n, "limit": story.DailyLimit})
}

// keyed starts a route on one key: it checks the path's {name} wildcard,
// counts the request under route, then takes the story S off the store
// through as, which answers 501 when the store does not play it. ok is
// false when the answer is written already.
func keyed[S any](h *Handler, w http.ResponseWriter, r *http.Request, name, route string,
	as func(http.ResponseWriter) (S, bool)) (key string, s S, ok bool) {
	if key, ok = h.key(w, r, name); !ok {
		return key, s, false
	}
	h.stats.record(route, key, r)
	s, ok = as(w)
	return key, s, ok
}

func (h *Handler) counter(w http.ResponseWriter) (story.Counter, bool) {
	return plays[story.Counter](h, w, "does not count views")
}

func (h *Handler) quotaStore(w http.ResponseWriter) (story.Quota, bool) {
	return plays[story.Quota](h, w, "keeps no download quota")
}

func (h *Handler) limiter(w http.ResponseWriter) (story.Limiter, bool) {
	return plays[story.Limiter](h, w, "keeps no rate limit")
}

func (h *Handler) plans(w http.ResponseWriter) (story.Plans, bool) {
	return plays[story.Plans](h, w, "keeps no subscription plans")
}

func (h *Handler) inventory(w http.ResponseWriter) (story.Inventory, bool) {
	return plays[story.Inventory](h, w, "keeps no inventory")
}

// plays takes the story S off the store, or answers 501 saying what the
// store does not do.
func plays[S any](h *Handler, w http.ResponseWriter, doesNot string) (S, bool) {
	s, ok := h.store.(S)
	if !ok {
		writeError(w, http.StatusNotImplemented, h.storeLabel()+" "+doesNot)
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
	writeError(w, code, msg)
}

func writeError(w http.ResponseWriter, code int, msg string) {
	writeJSON(w, code, map[string]string{"error": msg})
}

func writeJSON(w http.ResponseWriter, code int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Cache-Control", "no-store")
	// A browser must not read a key echoed back as anything but JSON.
	w.Header().Set("X-Content-Type-Options", "nosniff")
	w.WriteHeader(code)
	enc := json.NewEncoder(w)
	enc.SetEscapeHTML(false) // keys come back as they were sent, Arabic included
	_ = enc.Encode(v)        // a client that went away is no error of ours
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
		writeJSON(w, http.StatusOK, map[string]any{"requests": s.total.Load(), "routes": s.routes})
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
	writeJSON(w, http.StatusOK, out)
}

// Requests is how many requests the handler has read in full.
func (h *Handler) Requests() int64 { return h.stats.total.Load() }

// Server serves a Handler on a listener, over HTTP/1.1 and HTTP/2 with
// prior knowledge (h2c), until its context ends. It guards the handler as
// a service on a developer's machine must be guarded, since any web page
// the developer opens can send requests to it:
//
//   - Host: unless Public, only requests naming this machine's loopback
//     (see LoopbackHost) are answered; others get 421 Misdirected Request.
//     A page whose own name was rebound to 127.0.0.1 (DNS rebinding) sends
//     its own name, so it reaches nothing.
//   - Origin: a state-changing request (POST and the like) that a browser
//     marks as coming from another origin (Sec-Fetch-Site other than
//     same-origin or none, or an Origin header naming another host) is
//     refused 403, Public or not (cross-site request forgery). curl and
//     racelab's own client send neither header and pass.
//   - Connections: at most MaxConns open at once; the rest wait in the
//     kernel's accept queue until one closes. A head that does not arrive in
//     ReadHeaderTimeout, and a connection idle for IdleTimeout, are closed.
//
// Refusals are JSON {"error":…} like every other answer.
type Server struct {
	// Handler is what is served, usually a *Handler.
	Handler http.Handler
	// ErrorLog receives net/http's complaints about broken connections and
	// the notice that the connection cap was reached; nil discards them.
	ErrorLog io.Writer
	// ShutdownTimeout bounds the wait for requests in flight at shutdown;
	// zero means DefaultShutdownTimeout.
	ShutdownTimeout time.Duration
	// MaxConns caps the connections open at once; zero means
	// DefaultMaxConns, and a negative cap is an error of Serve.
	MaxConns int
	// Public answers requests whatever their Host names. The cross-origin
	// check stays.
	Public bool
	// ReadHeaderTimeout and IdleTimeout bound a request head's arrival and
	// a connection's idleness; zero means DefaultReadHeaderTimeout and
	// DefaultIdleTimeout.
	ReadHeaderTimeout, IdleTimeout time.Duration
}

// Serve answers requests on ln until ctx ends, then stops taking new ones,
// lets every request in flight finish and answer, and returns. Only after
// it returns may the store be closed: nothing already answered is lost.
// ln is closed when Serve returns.
func (s Server) Serve(ctx context.Context, ln net.Listener) error {
	if s.MaxConns < 0 {
		ln.Close()
		return fmt.Errorf("serve on %s: a cap of %d connections; want 1 or more, or 0 for %d", ln.Addr(), s.MaxConns, DefaultMaxConns)
	}
	var protocols http.Protocols
	protocols.SetHTTP1(true)
	protocols.SetUnencryptedHTTP2(true)
	logTo := s.ErrorLog
	if logTo == nil {
		logTo = io.Discard
	}
	logger := log.New(logTo, "racelab serve: ", 0)
	maxConns := cmpOr(s.MaxConns, DefaultMaxConns)
	ln = &limitListener{Listener: ln, sem: make(chan struct{}, maxConns), done: make(chan struct{}), born: time.Now(),
		full: func() {
			logger.Printf("%d connections open, the cap (--max-conns): new ones wait until one closes", maxConns)
		}}
	srv := &http.Server{
		Handler:           s.guard(s.Handler),
		Protocols:         &protocols,
		HTTP2:             &http.HTTP2Config{MaxConcurrentStreams: DefaultMaxStreams},
		ReadHeaderTimeout: cmpOr(s.ReadHeaderTimeout, DefaultReadHeaderTimeout),
		IdleTimeout:       cmpOr(s.IdleTimeout, DefaultIdleTimeout),
		ErrorLog:          logger,
		// Requests in flight finish at shutdown: their context is not the
		// server's.
		BaseContext: func(net.Listener) context.Context { return context.Background() },
	}
	served := make(chan error, 1)
	go func() { served <- srv.Serve(ln) }()
	select {
	case err := <-served:
		return fmt.Errorf("serve on %s: %w", ln.Addr(), err)
	case <-ctx.Done():
	}
	timeout := cmpOr(s.ShutdownTimeout, DefaultShutdownTimeout)
	sctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	err := srv.Shutdown(sctx)
	if err != nil {
		_ = srv.Close()
		err = fmt.Errorf("requests still in flight after %s were cut off: %w", timeout, err)
	}
	<-served // http.ErrServerClosed, now that it has stopped
	return err
}

// cmpOr is cmp.Or for settings where only a positive value is a choice.
func cmpOr[T int | time.Duration](v, def T) T {
	if v <= 0 {
		return def
	}
	return v
}

// Refusals of Server's guard, as the client reads them.
const (
	msgMisdirected = "this server answers only requests for localhost, 127.0.0.1 or [::1] (DNS rebinding protection); run racelab serve with --public to answer any host name"
	msgCrossOrigin = "cross-origin request refused: a page from another origin may not write to this server (CSRF protection); send the request without an Origin header, as curl does"
)

// guard wraps next in the Host and cross-origin checks (see Server).
// The refusals come before next reads the request's body: a refused
// request is not part of any burst, so it need not wait for its end.
func (s Server) guard(next http.Handler) http.Handler {
	cop := http.NewCrossOriginProtection()
	cop.SetDenyHandler(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		writeError(w, http.StatusForbidden, msgCrossOrigin)
	}))
	checked := cop.Handler(next)
	if s.Public {
		return checked
	}
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if !loopbackHostHeader(r.Host) {
			writeError(w, http.StatusMisdirectedRequest, fmt.Sprintf("host %q: %s", r.Host, msgMisdirected))
			return
		}
		checked.ServeHTTP(w, r)
	})
}

// LoopbackHost says whether host, a name or an IP address without a port,
// names this machine and nothing else: localhost (in any case), an address
// of 127.0.0.0/8, or ::1. Names under .localhost (app.localhost) are not
// taken: RFC 6761 lets resolvers send them to loopback but does not make
// them, and a browser whose resolver asks the network for one would hand
// the attacker's page exactly the name this check is meant to refuse.
func LoopbackHost(host string) bool {
	if strings.EqualFold(host, "localhost") {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}

// loopbackHostHeader says whether a Host header (name or address, with or
// without a port, IPv6 in brackets) is a loopback name. An empty Host, which
// only HTTP/1.0 allows, is refused: it names nothing.
func loopbackHostHeader(hostport string) bool {
	host := hostport
	if h, _, err := net.SplitHostPort(hostport); err == nil {
		host = h
	} else if strings.HasPrefix(hostport, "[") && strings.HasSuffix(hostport, "]") {
		host = hostport[1 : len(hostport)-1]
	}
	return LoopbackHost(host)
}

// limitListener accepts at most cap(sem) connections open at once, as
// golang.org/x/net/netutil.LimitListener does, but keeps the accepted
// connection's CloseWrite: net/http half-closes a connection before
// dropping it so that an answer sent ahead of an unread request body (a
// 413) reaches the client instead of being lost to a reset.
type limitListener struct {
	net.Listener
	sem       chan struct{} // a slot per open connection
	done      chan struct{} // closed by Close, to free an Accept waiting for a slot
	closeOnce sync.Once
	full      func() // told when an Accept has to wait for a slot
	// warned is when full was last told, as time since born plus one (0:
	// never), read off the monotonic clock so that a wall-clock jump
	// neither floods the log nor silences it.
	warned atomic.Int64
	born   time.Time
}

// fullNoticeEvery spaces the notices that the cap was reached, so that a
// flood of connections does not become a flood of log lines.
const fullNoticeEvery = time.Minute

func (l *limitListener) Accept() (net.Conn, error) {
	select {
	case l.sem <- struct{}{}:
	default:
		now := int64(time.Since(l.born)) + 1
		if last := l.warned.Load(); last == 0 || now-last >= int64(fullNoticeEvery) {
			l.warned.Store(now)
			l.full()
		}
		select {
		case l.sem <- struct{}{}:
		case <-l.done:
			return nil, fmt.Errorf("accept on %s: %w", l.Addr(), net.ErrClosed)
		}
	}
	c, err := l.Listener.Accept()
	if err != nil {
		<-l.sem
		return nil, err
	}
	return &limitConn{Conn: c, release: func() { <-l.sem }}, nil
}

func (l *limitListener) Close() error {
	err := l.Listener.Close()
	l.closeOnce.Do(func() { close(l.done) })
	return err
}

// limitConn gives its slot back once, when it is closed.
type limitConn struct {
	net.Conn
	releaseOnce sync.Once
	release     func()
}

func (c *limitConn) Close() error {
	err := c.Conn.Close()
	c.releaseOnce.Do(c.release)
	return err
}

// CloseWrite half-closes the connection when it can (see limitListener).
func (c *limitConn) CloseWrite() error {
	if cw, ok := c.Conn.(interface{ CloseWrite() error }); ok {
		return cw.CloseWrite()
	}
	return nil
}
