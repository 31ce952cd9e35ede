package racefile_test

import (
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"
)

// window is how long a naive handler waits between its read and its
// write: a database round trip, where a second request reads the same
// state. It is long, so that the race shows in every trial even when the
// whole suite loads the machine and a burst arrives spread out.
const window = 100 * time.Millisecond

// service is one test service of the four races (a coupon, a wallet, a
// signup, a charge under an idempotency key), naive or fixed. Naive reads,
// waits, then writes what it read plus its change, each step under the
// lock on its own; fixed holds the lock from the read to the write.
type service struct {
	naive bool

	mu        sync.Mutex
	discounts map[string]int
	redeemed  map[string]bool
	balance   map[string]int
	users     map[string]int
	charges   map[string][]string
	byKey     map[string]string
	nextID    int
	banks     map[string]map[string]int
}

// newService serves the four races on 127.0.0.1 over HTTP/1.1, and over
// HTTP/2 without TLS too when h2c is set.
func newService(t testing.TB, naive, h2c bool) *httptest.Server {
	s := &service{naive: naive, discounts: map[string]int{}, redeemed: map[string]bool{}, balance: map[string]int{},
		users: map[string]int{}, charges: map[string][]string{}, byKey: map[string]string{}, banks: map[string]map[string]int{}}
	mux := http.NewServeMux()
	mux.HandleFunc("PUT /accounts/{id}", func(w http.ResponseWriter, r *http.Request) {
		s.mu.Lock()
		s.discounts[r.PathValue("id")] = 0
		s.mu.Unlock()
		reply(w, 201, map[string]any{"account": r.PathValue("id")})
	})
	mux.HandleFunc("GET /accounts/{id}", func(w http.ResponseWriter, r *http.Request) {
		s.mu.Lock()
		n, ok := s.discounts[r.PathValue("id")]
		s.mu.Unlock()
		if !ok {
			reply(w, 404, map[string]any{"error": "no such account"})
			return
		}
		reply(w, 200, map[string]any{"account": r.PathValue("id"), "discounts": n})
	})
	mux.HandleFunc("POST /coupons/{code}/redeem", func(w http.ResponseWriter, r *http.Request) {
		var in struct{ Account string }
		if json.NewDecoder(r.Body).Decode(&in) != nil || in.Account == "" {
			reply(w, 400, map[string]any{"error": "want {account}"})
			return
		}
		k := r.PathValue("code") + "/" + in.Account
		s.step(func() bool { return !s.redeemed[k] }, func() {
			s.redeemed[k] = true
			s.discounts[in.Account]++
		}, w, map[string]any{"error": "already redeemed"})
	})
	mux.HandleFunc("PUT /wallets/{id}", func(w http.ResponseWriter, r *http.Request) {
		var in struct{ Balance int }
		_ = json.NewDecoder(r.Body).Decode(&in)
		s.mu.Lock()
		s.balance[r.PathValue("id")] = in.Balance
		s.mu.Unlock()
		reply(w, 201, map[string]any{"balance": in.Balance})
	})
	mux.HandleFunc("GET /wallets/{id}", func(w http.ResponseWriter, r *http.Request) {
		s.mu.Lock()
		n := s.balance[r.PathValue("id")]
		s.mu.Unlock()
		reply(w, 200, map[string]any{"balance": n})
	})
	mux.HandleFunc("POST /wallets/{id}/withdraw", func(w http.ResponseWriter, r *http.Request) {
		var in struct{ Amount int }
		_ = json.NewDecoder(r.Body).Decode(&in)
		id := r.PathValue("id")
		var read int
		s.step(func() bool { read = s.balance[id]; return read >= in.Amount }, func() {
			if s.naive {
				s.balance[id] = read - in.Amount // what it read, minus: a lost update
			} else {
				s.balance[id] -= in.Amount
			}
		}, w, map[string]any{"error": "insufficient funds"})
	})
	mux.HandleFunc("POST /signup", func(w http.ResponseWriter, r *http.Request) {
		var in struct{ Username string }
		_ = json.NewDecoder(r.Body).Decode(&in)
		s.stepStatus(201, func() bool { return s.users[in.Username] == 0 }, func() { s.users[in.Username]++ }, w, map[string]any{"error": "username taken"})
	})
	mux.HandleFunc("GET /users", func(w http.ResponseWriter, r *http.Request) {
		s.mu.Lock()
		n := s.users[r.URL.Query().Get("username")]
		s.mu.Unlock()
		reply(w, 200, map[string]any{"count": n})
	})
	mux.HandleFunc("POST /charges", func(w http.ResponseWriter, r *http.Request) {
		var in struct{ Customer string }
		_ = json.NewDecoder(r.Body).Decode(&in)
		key := r.Header.Get("Idempotency-Key")
		if !s.naive {
			s.mu.Lock()
			defer s.mu.Unlock()
		}
		lock := func() {
			if s.naive {
				s.mu.Lock()
			}
		}
		unlock := func() {
			if s.naive {
				s.mu.Unlock()
			}
		}
		lock()
		id, seen := s.byKey[key]
		unlock()
		if seen {
			reply(w, 200, map[string]any{"id": id})
			return
		}
		time.Sleep(window)
		lock()
		s.nextID++
		id = fmt.Sprintf("ch_%d", s.nextID)
		s.byKey[key] = id
		s.charges[in.Customer] = append(s.charges[in.Customer], id)
		unlock()
		reply(w, 201, map[string]any{"id": id})
	})
	mux.HandleFunc("GET /customers/{id}/charges", func(w http.ResponseWriter, r *http.Request) {
		s.mu.Lock()
		var items []map[string]any
		for _, id := range s.charges[r.PathValue("id")] {
			items = append(items, map[string]any{"id": id})
		}
		s.mu.Unlock()
		if items == nil {
			items = []map[string]any{}
		}
		reply(w, 200, map[string]any{"items": items})
	})
	s.transfers(mux)
	srv := httptest.NewUnstartedServer(mux)
	if h2c {
		srv.Config.Protocols = new(http.Protocols)
		srv.Config.Protocols.SetHTTP1(true)
		srv.Config.Protocols.SetUnencryptedHTTP2(true)
	}
	srv.Start()
	t.Cleanup(srv.Close)
	return srv
}

// step is a check-then-act: a 200 when check passes, then act; a 409 with
// no otherwise. Naive checks and acts under the lock each on its own, a
// window apart; fixed holds the lock across both.
func (s *service) step(check func() bool, act func(), w http.ResponseWriter, no any) {
	s.stepStatus(200, check, act, w, no)
}

func (s *service) stepStatus(yes int, check func() bool, act func(), w http.ResponseWriter, no any) {
	s.mu.Lock()
	ok := check()
	if s.naive {
		s.mu.Unlock()
		if ok {
			time.Sleep(window)
		}
		s.mu.Lock()
	} else {
		time.Sleep(2 * time.Millisecond) // the fixed one takes its time too, one at a time
	}
	if ok {
		act()
	}
	s.mu.Unlock()
	if !ok {
		reply(w, 409, no)
		return
	}
	reply(w, yes, map[string]any{"ok": true})
}

func reply(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(v)
}

// base is a test server's URL as a racelab target.
func base(srv *httptest.Server) string { return strings.TrimSuffix(srv.URL, "/") }

// transfers serves a bank of two accounts, a and b, per key, and transfers
// between them. The naive transfer reads both balances, credits the payee
// at once from what it read, and debits the payer only after a window (a
// fraud check), again from what it read: two transfers the other way in
// that window credit over each other's debits, and the bank loses money.
// The fixed one holds the lock from its read to its last write.
func (s *service) transfers(mux *http.ServeMux) {
	mux.HandleFunc("PUT /banks/{id}", func(w http.ResponseWriter, r *http.Request) {
		var in struct{ A, B int }
		if json.NewDecoder(r.Body).Decode(&in) != nil {
			reply(w, 400, map[string]any{"error": "want {a, b}"})
			return
		}
		s.mu.Lock()
		s.banks[r.PathValue("id")] = map[string]int{"a": in.A, "b": in.B}
		s.mu.Unlock()
		reply(w, 201, map[string]any{"a": in.A, "b": in.B})
	})
	mux.HandleFunc("GET /banks/{id}", func(w http.ResponseWriter, r *http.Request) {
		s.mu.Lock()
		bank, ok := s.banks[r.PathValue("id")]
		out := map[string]any{"a": bank["a"], "b": bank["b"]}
		s.mu.Unlock()
		if !ok {
			reply(w, 404, map[string]any{"error": "no such bank"})
			return
		}
		reply(w, 200, out)
	})
	mux.HandleFunc("POST /banks/{id}/transfer", func(w http.ResponseWriter, r *http.Request) {
		var in struct {
			From, To string
			Amount   int
		}
		_ = json.NewDecoder(r.Body).Decode(&in)
		s.mu.Lock()
		bank, ok := s.banks[r.PathValue("id")]
		if !ok || in.From == in.To || in.Amount <= 0 || (in.From != "a" && in.From != "b") || (in.To != "a" && in.To != "b") {
			s.mu.Unlock()
			reply(w, 400, map[string]any{"error": "want {from, to, amount} between a and b"})
			return
		}
		from, to := bank[in.From], bank[in.To]
		if from < in.Amount {
			s.mu.Unlock()
			reply(w, 409, map[string]any{"error": "insufficient funds"})
			return
		}
		bank[in.To] = to + in.Amount
		if s.naive {
			s.mu.Unlock()
			time.Sleep(window)
			s.mu.Lock()
		} else {
			time.Sleep(2 * time.Millisecond)
		}
		bank[in.From] = from - in.Amount
		s.mu.Unlock()
		reply(w, 200, map[string]any{"ok": true})
	})
}
