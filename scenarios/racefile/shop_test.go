package racefile_test

import (
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"slices"
	"sync"
	"testing"
	"time"
)

// shop is a test service with cookie-session logins and a stock of
// items per key: POST /login (a form: user, password) answers a
// Set-Cookie sid; POST /buy/{key} with that cookie buys one item for the
// session's user. The naive one reads the stock, waits (a payment call),
// then writes what it read minus one: N users at once oversell. The fixed
// one holds the lock from its read to its write.
type shop struct {
	naive bool

	mu       sync.Mutex
	sessions map[string]string // sid → user
	stock    map[string]int
	sold     map[string][]string // key → buyers
	logins   int
}

func newShop(t testing.TB, naive bool) (*httptest.Server, *shop) {
	s := &shop{naive: naive, sessions: map[string]string{}, stock: map[string]int{}, sold: map[string][]string{}}
	mux := http.NewServeMux()
	mux.HandleFunc("POST /login", func(w http.ResponseWriter, r *http.Request) {
		user, pw := r.PostFormValue("user"), r.PostFormValue("password")
		if r.Header.Get("Content-Type") != "application/x-www-form-urlencoded" || user == "" || pw != "pw" {
			reply(w, 401, map[string]any{"error": "want a form with user and password"})
			return
		}
		var b [16]byte
		_, _ = rand.Read(b[:])
		sid := hex.EncodeToString(b[:])
		s.mu.Lock()
		s.sessions[sid] = user
		s.logins++
		s.mu.Unlock()
		http.SetCookie(w, &http.Cookie{Name: "sid", Value: sid, HttpOnly: true, Path: "/"})
		reply(w, 200, map[string]any{"user": user})
	})
	mux.HandleFunc("PUT /stock/{key}", func(w http.ResponseWriter, r *http.Request) {
		var in struct{ Items int }
		if json.NewDecoder(r.Body).Decode(&in) != nil || in.Items < 1 {
			reply(w, 400, map[string]any{"error": "want {items}"})
			return
		}
		s.mu.Lock()
		s.stock[r.PathValue("key")] = in.Items
		s.mu.Unlock()
		reply(w, 201, map[string]any{"items": in.Items})
	})
	mux.HandleFunc("GET /stock/{key}", func(w http.ResponseWriter, r *http.Request) {
		s.mu.Lock()
		defer s.mu.Unlock()
		k := r.PathValue("key")
		buyers := slices.Clone(s.sold[k])
		if buyers == nil {
			buyers = []string{}
		}
		reply(w, 200, map[string]any{"left": s.stock[k], "sold": len(s.sold[k]), "buyers": buyers})
	})
	mux.HandleFunc("POST /buy/{key}", func(w http.ResponseWriter, r *http.Request) {
		c, err := r.Cookie("sid")
		s.mu.Lock()
		user := ""
		if err == nil {
			user = s.sessions[c.Value]
		}
		if user == "" {
			s.mu.Unlock()
			reply(w, 401, map[string]any{"error": "log in first"})
			return
		}
		k := r.PathValue("key")
		if slices.Contains(s.sold[k], user) {
			s.mu.Unlock()
			reply(w, 409, map[string]any{"error": "one each"})
			return
		}
		left := s.stock[k]
		if s.naive && left > 0 {
			s.mu.Unlock()
			time.Sleep(window)
			s.mu.Lock()
		}
		if left < 1 {
			s.mu.Unlock()
			reply(w, 409, map[string]any{"error": "sold out"})
			return
		}
		s.stock[k] = left - 1
		s.sold[k] = append(s.sold[k], user)
		s.mu.Unlock()
		reply(w, 200, map[string]any{"bought": k, "user": user})
	})
	srv := httptest.NewServer(mux)
	t.Cleanup(srv.Close)
	return srv, s
}
