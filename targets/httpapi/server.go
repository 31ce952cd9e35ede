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
)

// Counter, Quota and Inventory are the story interfaces Handler serves,
// with the method sets of racelab's targets.Counter, targets.Quota and
// targets.Inventory, so that any opened store fits as it is.
type (
	// Counter counts views per slug.
	Counter interface {
		Hit(ctx context.Context, slug string) (int64, error)
		Views(ctx context.Context, slug string) (int64, error)
	}
	// Quota grants at most limit downloads a visitor a UTC day.
	Quota interface {
		Consume(ctx context.Context, visitor string, limit int64) (granted bool, count int64, err error)
		Count(ctx context.Context, visitor string) (int64, error)
	}
	// Inventory claims one-of-a-kind items.
	Inventory interface {
		Checkout(ctx context.Context, item, buyer string) (bool, error)
		Claims(ctx context.Context, item string) (int64, error)
	}
)

// ArrivalHeader carries, on every answer of Handler, the instant the
// request was complete at the server, in Unix nanoseconds.
const ArrivalHeader = "Racelab-Arrival"

// Defaults of Handler and Server, in one place.
const (
	// DailyLimit is the contract's download limit: 5 a visitor a UTC day.
	DailyLimit = 5
	// Stock is every item's stock: one of a kind.
	Stock = 1
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

// Handler serves the contract over a store. Build it with NewHandler.
type Handler struct {
	store   any
	name    string
	now     func() time.Time
	maxBody int64
	mux     *http.ServeMux
	stats   *stats
	buyers  atomic.Int64 // names the buyers of checkouts, which the contract leaves anonymous
}

var _ http.Handler = (*Handler)(nil)

// NewHandler serves the contract over store, which implements Counter,
// Quota and/or Inventory; a story it does not implement is answered 501.
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
var routeNames = []string{"hit", "get", "download", "quota", "checkout", "item"}

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
			"POST /checkout/{item}", "GET /item/{item}", "GET /stats?route=hit&key=K",
		},
	})
}

func (h *Handler) hit(w http.ResponseWriter, r *http.Request) {
	slug, ok := h.key(w, r, "slug")
	if !ok {
		return
	}
	h.stats.record("hit", slug, r)
	c, ok := h.counter(w)
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
	slug, ok := h.key(w, r, "slug")
	if !ok {
		return
	}
	h.stats.record("get", slug, r)
	c, ok := h.counter(w)
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
		n, err := c.Views(r.Context(), slug)
		if err != nil {
			h.storeError(w, r, err)
			return
		}
		out[slug] = n
	}
	writeJSON(w, http.StatusOK, out)
}

func (h *Handler) download(w http.ResponseWriter, r *http.Request) {
	visitor, ok := h.key(w, r, "visitor")
	if !ok {
		return
	}
	h.stats.record("download", visitor, r)
	q, ok := h.quotaStore(w)
	if !ok {
		return
	}
	granted, n, err := q.Consume(r.Context(), visitor, DailyLimit)
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
	visitor, ok := h.key(w, r, "visitor")
	if !ok {
		return
	}
	h.stats.record("quota", visitor, r)
	q, ok := h.quotaStore(w)
	if !ok {
		return
	}
	n, err := q.Count(r.Context(), visitor)
	if err != nil {
		h.storeError(w, r, err)
		return
	}
	writeJSON(w, http.StatusOK, map[string]any{"visitor": visitor, "day": h.now().UTC().Format(time.DateOnly), "count": n, "limit": DailyLimit})
}

func (h *Handler) checkout(w http.ResponseWriter, r *http.Request) {
	item, ok := h.key(w, r, "item")
	if !ok {
		return
	}
	h.stats.record("checkout", item, r)
	inv, ok := h.inventory(w)
	if !ok {
		return
	}
	buyer := "buyer-" + strconv.FormatInt(h.buyers.Add(1), 10)
	claimed, err := inv.Checkout(r.Context(), item, buyer)
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
	item, ok := h.key(w, r, "item")
	if !ok {
		return
	}
	h.stats.record("item", item, r)
	inv, ok := h.inventory(w)
	if !ok {
		return
	}
	n, err := inv.Claims(r.Context(), item)
	if err != nil {
		h.storeError(w, r, err)
		return
	}
	writeJSON(w, http.StatusOK, map[string]any{"item": item, "stock": Stock, "claims": n})
}

func (h *Handler) counter(w http.ResponseWriter) (Counter, bool) {
	c, ok := h.store.(Counter)
	if !ok {
		writeError(w, http.StatusNotImplemented, h.storeLabel()+" does not count views")
	}
	return c, ok
}

func (h *Handler) quotaStore(w http.ResponseWriter) (Quota, bool) {
	q, ok := h.store.(Quota)
	if !ok {
		writeError(w, http.StatusNotImplemented, h.storeLabel()+" keeps no download quota")
	}
	return q, ok
}

func (h *Handler) inventory(w http.ResponseWriter) (Inventory, bool) {
	inv, ok := h.store.(Inventory)
	if !ok {
		writeError(w, http.StatusNotImplemented, h.storeLabel()+" keeps no inventory")
	}
	return inv, ok
}

func (h *Handler) storeLabel() string {
	if h.name == "" {
		return "the store"
	}
	return "store " + h.name
}

// storeError answers a failure of the store itself: 500, or 503 when the
// client went away or the server is stopping, so nobody reads it as a verdict.
func (h *Handler) storeError(w http.ResponseWriter, r *http.Request, err error) {
	code := http.StatusInternalServerError
	if r.Context().Err() != nil {
		code = http.StatusServiceUnavailable
	}
	writeError(w, code, h.storeLabel()+": "+err.Error())
}

func writeError(w http.ResponseWriter, code int, msg string) {
	writeJSON(w, code, map[string]string{"error": msg})
}

func writeJSON(w http.ResponseWriter, code int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Cache-Control", "no-store")
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
// prior knowledge (h2c), until its context ends.
type Server struct {
	// Handler is what is served, usually a *Handler.
	Handler http.Handler
	// ErrorLog receives net/http's complaints about broken connections;
	// nil discards them.
	ErrorLog io.Writer
	// ShutdownTimeout bounds the wait for requests in flight at shutdown;
	// zero means DefaultShutdownTimeout.
	ShutdownTimeout time.Duration
}

// Serve answers requests on ln until ctx ends, then stops taking new ones,
// lets every request in flight finish and answer, and returns. Only after
// it returns may the store be closed: nothing already answered is lost.
func (s Server) Serve(ctx context.Context, ln net.Listener) error {
	var protocols http.Protocols
	protocols.SetHTTP1(true)
	protocols.SetUnencryptedHTTP2(true)
	logTo := s.ErrorLog
	if logTo == nil {
		logTo = io.Discard
	}
	srv := &http.Server{
		Handler:   s.Handler,
		Protocols: &protocols,
		HTTP2:     &http.HTTP2Config{MaxConcurrentStreams: DefaultMaxStreams},
		// Generous, since a staged request waits for its burst's release
		// with its headers but the last byte sent, yet bounded, so that a
		// client that never finishes cannot hold a connection forever.
		ReadHeaderTimeout: time.Minute,
		IdleTimeout:       5 * time.Minute,
		ErrorLog:          log.New(logTo, "racelab serve: ", 0),
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
	timeout := s.ShutdownTimeout
	if timeout <= 0 {
		timeout = DefaultShutdownTimeout
	}
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
