package targets

import (
	"context"
	"errors"
	"fmt"
	"os"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/racelab/racelab/targets/clock"
	"github.com/racelab/racelab/targets/kv"
	"github.com/racelab/racelab/targets/postgres"
	"github.com/racelab/racelab/targets/redis"
	"github.com/racelab/racelab/targets/storetest"
	"github.com/racelab/racelab/targets/story"
)

func TestParse(t *testing.T) {
	tests := []struct {
		raw                   string
		store, strategy, name string
		params                string
		wantErr               bool
	}{
		{raw: "kv", store: "kv", name: "kv"},
		{raw: "kv?latency=5ms&locations=3", store: "kv", name: "kv", params: "latency=5ms&locations=3"},
		{raw: "actor:await-fetch?fetch-latency=2ms", store: "actor", strategy: "await-fetch", name: "actor:await-fetch", params: "fetch-latency=2ms"},
		{raw: "http://127.0.0.1:8787", store: "http", name: "http://127.0.0.1:8787"},
		{raw: "kv?", store: "kv", name: "kv"}, // no parameters
		{raw: "kv?path=a%26b", store: "kv", name: "kv", params: "path=a%26b"},
		// Schemes are case-insensitive; the name is normalised.
		{raw: "HTTP://127.0.0.1:8787", store: "http", name: "http://127.0.0.1:8787"},
		{raw: "Https://example.com/api?x=1&x=2", store: "https", name: "https://example.com/api?x=1&x=2"},
		{raw: "http://[::1]:8787", store: "http", name: "http://[::1]:8787"},
		{raw: "http://localhost", store: "http", name: "http://localhost"},
		// A password never shows in the name.
		{raw: "http://u:secret@127.0.0.1:8787", store: "http", name: "http://u:…@127.0.0.1:8787"},
		{raw: "", wantErr: true},
		{raw: ":naive", wantErr: true},
		{raw: "sqlite:", wantErr: true},
		{raw: "a:b:c", wantErr: true},
		{raw: "k v", wantErr: true},
		{raw: "kv#x", wantErr: true},
		{raw: "kv?x=%zz", wantErr: true},
		{raw: "kv?locations=3&locations=4", wantErr: true},
		{raw: "kv?locations=", wantErr: true},
		{raw: "kv?locations", wantErr: true},
		{raw: "kv?=3", wantErr: true},
		{raw: "kv?a=1&&b=2", wantErr: true},
		{raw: "http://", wantErr: true},
		{raw: "http://:8787", wantErr: true},
		{raw: "http://127.0.0.1:99999", wantErr: true},
		{raw: "http://127.0.0.1:0", wantErr: true},
		{raw: "http://127.0.0.1:", wantErr: true},
		{raw: "http://a<b>:8787", wantErr: true},
		{raw: "http://[zz]:8787", wantErr: true},
		{raw: "http://127.0.0.1:8787/#top", wantErr: true},
		{raw: "ftp://127.0.0.1", wantErr: true},
	}
	for _, tt := range tests {
		t.Run(tt.raw, func(t *testing.T) {
			s, err := Parse(tt.raw)
			if tt.wantErr {
				if !errors.Is(err, ErrBadSpec) {
					t.Fatalf("Parse(%q) err = %v, want ErrBadSpec", tt.raw, err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if s.Store != tt.store || s.Strategy != tt.strategy || s.Name() != tt.name || s.Params.Encode() != tt.params {
				t.Errorf("Parse(%q) = store %q strategy %q name %q params %q; want %q %q %q %q",
					tt.raw, s.Store, s.Strategy, s.Name(), s.Params.Encode(), tt.store, tt.strategy, tt.name, tt.params)
			}
		})
	}
}

func TestUnknownNameSuggests(t *testing.T) {
	tests := []struct{ name, want string }{
		{"sqlit", `unknown target "sqlit"; did you mean "sqlite"?`},
		{"SQLITE:NAIVE", `unknown target "SQLITE:NAIVE"; did you mean "sqlite:naive"?`},
		{"mongodb", `unknown target "mongodb" (valid: `},
	}
	for _, tt := range tests {
		_, _, err := Lookup(tt.name)
		var u *UnknownNameError
		if !errors.As(err, &u) {
			t.Fatalf("Lookup(%q) err = %v, want *UnknownNameError", tt.name, err)
		}
		if !strings.HasPrefix(err.Error(), tt.want) || !strings.Contains(err.Error(), "sqlite:naive") {
			t.Errorf("Lookup(%q) = %q, want it to start %q and list the targets", tt.name, err, tt.want)
		}
	}
}

func TestBind(t *testing.T) {
	var d time.Duration
	var n int
	var f float64
	var b bool
	ps := []param{durationParam("ttl", &d), intParam("count", &n), floatParam("p", &f), boolParam("on", &b)}
	spec, _ := Parse("x?ttl=30s&count=4&p=0.5&on=true")
	if err := bind(spec, ps...); err != nil {
		t.Fatal(err)
	}
	if d != 30*time.Second || n != 4 || f != 0.5 || !b {
		t.Errorf("bound ttl=%v count=%d p=%v on=%v; want 30s 4 0.5 true", d, n, f, b)
	}
	for raw, want := range map[string]string{
		"x?ttl=soon": `target x: parameter ttl="soon" is not a duration; want a duration such as 5ms or 30s`,
		"x?ttl=-1s":  `target x: parameter ttl="-1s" is a negative duration`,
		"x?ttl=NaN":  `target x: parameter ttl="NaN" is not a duration`,
		"x?ttl=5":    `target x: parameter ttl="5" is not a duration`,
		"x?p=NaN":    `target x: parameter p="NaN" is not a number from 0 to 1`,
		"x?p=Inf":    `target x: parameter p="Inf" is not a number from 0 to 1`,
		"x?on=maybe": `target x: parameter on="maybe" is not true or false`,
		"x?count=0":  `target x: parameter count="0" is not a whole number of at least 1`,
		"x?p=2":      `target x: parameter p="2" is not a number from 0 to 1`,
		"x?cnt=2":    `x has no parameter "cnt" (did you mean "count"?); valid: ttl, count, p, on`,
	} {
		spec, _ := Parse(raw)
		err := bind(spec, ps...)
		if !errors.Is(err, ErrBadSpec) || !strings.Contains(err.Error(), want) {
			t.Errorf("bind(%s) = %v, want ErrBadSpec saying %q", raw, err, want)
		}
	}
}

// TestParseErrors checks that each refusal says, in one line, what is
// wrong and never shows a password.
func TestParseErrors(t *testing.T) {
	tests := []struct{ raw, want string }{
		{"kv?locations=3&locations=4", `target "kv?locations=3&locations=4": parameter "locations" is given twice ("3" and "4")`},
		{"kv?locations=", `parameter "locations" has no value`},
		{"sqlite:", `target "sqlite:" has an empty strategy after the colon; write sqlite for the default strategy`},
		{"http://127.0.0.1:99999", `target "http://127.0.0.1:99999": port 99999 is outside 1-65535`},
		{"http://:8787", `target "http://:8787": no host`},
		{"ftp://h", `target "ftp://h": scheme "ftp" is not supported`},
		{"http://u:secret@h:99999", `target "http://u:…@h:99999": port 99999`},
		{"http://u:secret@h:x", `target "http://u:…@h:x" is not a valid URL`},
		{" kv", `target " kv" has spaces around it; write "kv"`},
		{"sqlite:naive\t", `target "sqlite:naive\t" has spaces around it; write "sqlite:naive"`},
		{" http://127.0.0.1:8787 ", `target " http://127.0.0.1:8787 " has spaces around it`},
		{"  ", `empty target`},
	}
	for _, tt := range tests {
		t.Run(tt.raw, func(t *testing.T) {
			_, err := Parse(tt.raw)
			if !errors.Is(err, ErrBadSpec) {
				t.Fatalf("Parse(%q) err = %v, want ErrBadSpec", tt.raw, err)
			}
			msg := err.Error()
			if !strings.Contains(msg, tt.want) || strings.Contains(msg, "secret") || strings.Contains(msg, "\n") {
				t.Errorf("Parse(%q) = %q, want one line containing %q and no password", tt.raw, msg, tt.want)
			}
		})
	}
}

// TestServerURLErrors opens the server targets with malformed URLs: each is
// a usage error naming the flag, the value (its password hidden) and a good
// URL, found before any dialling, and without the hint to start the
// servers, which is for a well-formed URL nothing answers at.
func TestServerURLErrors(t *testing.T) {
	tests := []struct {
		target string
		opt    Option
		want   string
	}{
		{"redis", WithRedisURL("notaurl"), `redis-url (or RACELAB_REDIS_URL) "notaurl" is not usable: not a URL; want e.g. redis://127.0.0.1:56379/0`},
		{"redis:watch", WithRedisURL("http://127.0.0.1:56379"), `"http://127.0.0.1:56379" is not usable: scheme "http" is not redis, rediss or unix`},
		{"redis", WithRedisURL("redis://u:secret@127.0.0.1:99999/0"), `"redis://u:…@127.0.0.1:99999/0" is not usable: port 99999 is outside 1-65535; want e.g. `},
		{"redis", WithRedisURL("redis://127.0.0.1:56379/x"), `is not usable: invalid database number`},
		{"redis", WithRedisURL("redis://:::"), `"redis://:::" is not usable: host "::": write an IPv6 address in brackets`},
		{"postgres", WithPostgresURL("::garbage::"), `postgres-url (or RACELAB_POSTGRES_URL) "::garbage::" is not usable: not a URL (nor keyword=value settings); want e.g. postgres://racelab@127.0.0.1:55432/racelab?sslmode=disable`},
		{"postgres:serializable", WithPostgresURL("postgres://u:secret@h:99999/db"), `"postgres://u:…@h:99999/db" is not usable: port 99999 is outside 1-65535; want e.g. `},
		{"postgres", WithPostgresURL("host=h password=secret port=99999"), `"host=h password=… port=99999" is not usable: invalid port`},
		{"postgres", WithPostgresURL("postgres://h/db?sslmode=bogus"), `is not usable: failed to configure TLS`},
	}
	for _, tt := range tests {
		t.Run(tt.want, func(t *testing.T) {
			ctx, cancel := context.WithTimeout(t.Context(), time.Second)
			defer cancel()
			tg, err := Open(ctx, tt.target, tt.opt)
			if err == nil {
				tg.Close()
				t.Fatal("open: got no error")
			}
			msg := err.Error()
			if !errors.Is(err, ErrBadSpec) || !strings.Contains(msg, tt.want) {
				t.Errorf("got %q, want ErrBadSpec containing %q", msg, tt.want)
			}
			if strings.Contains(msg, "secret") || strings.Contains(msg, "make services") || strings.Contains(msg, "\n") {
				t.Errorf("got %q: it must be one line, without the password or the hint to start the servers", msg)
			}
		})
	}
}

// TestCatalogKinds opens every embedded target and checks that the store
// it opens has its entry's Kind: what a target can play is read off Kind
// without opening it, so the two must agree.
func TestCatalogKinds(t *testing.T) {
	for _, e := range Entries() {
		if !e.Embedded {
			continue
		}
		t.Run(e.Name, func(t *testing.T) {
			tg, err := Open(context.Background(), e.Name)
			if err != nil {
				t.Fatal(err)
			}
			defer tg.Close()
			if got, want := reflect.TypeOf(tg.Store), reflect.TypeOf(e.Kind); got != want {
				t.Errorf("opens a %v, entry's Kind is a %v", got, want)
			}
		})
	}
}

// TestCatalogWith checks that a catalog built from another leaves it as it
// was: tests add targets to their own catalog, never to the built-in one.
func TestCatalogWith(t *testing.T) {
	extra := Entry{Name: "test-extra", Kind: (*kv.App)(nil)}
	mine := Builtin().With(extra)
	if _, _, err := mine.Lookup("test-extra"); err != nil {
		t.Errorf("the new catalog lacks its entry: %v", err)
	}
	if _, _, err := Lookup("test-extra"); err == nil {
		t.Error("the built-in catalog gained a test's entry")
	}
	if got, want := len(mine.Entries()), len(Entries())+1; got != want {
		t.Errorf("%d entries, want %d", got, want)
	}
}

// closeCounter counts its Close calls.
type closeCounter struct{ closed int }

func (c *closeCounter) Close() error { c.closed++; return nil }

// TestSharedStoreStaysOpen: a target opened from a Shared entry hands out
// a store its owner closes (racelab serve lending a served store to a
// burst from the classroom page), so Target.Close leaves it open; the same
// store from an entry of its own is closed.
func TestSharedStoreStaysOpen(t *testing.T) {
	for _, shared := range []bool{false, true} {
		store := &closeCounter{}
		e := Entry{Name: "lent", Kind: store, Shared: shared,
			Open: func(context.Context, Spec, Options) (any, error) { return store, nil }}
		tg, err := NewCatalog(e).Open(context.Background(), "lent")
		if err != nil {
			t.Fatal(err)
		}
		if err := tg.Close(); err != nil {
			t.Fatal(err)
		}
		if want := map[bool]int{false: 1, true: 0}[shared]; store.closed != want {
			t.Errorf("Shared %t: the store was closed %d times; want %d", shared, store.closed, want)
		}
	}
}

// TestServerTargetsAnswerEveryRequest opens every server target expected to
// hold as racelab does, through the catalog with its defaults, and runs
// each story at its own N: not one request may error. It is the catalog's
// side of the store packages' TestHoldingStrategiesAnswerEveryRequest: a
// catalog entry that wires a strategy with a setting that makes it give up
// under contention fails here. A server that does not answer skips its
// targets, except under CI=true.
func TestServerTargetsAnswerEveryRequest(t *testing.T) {
	const rounds = 10
	for _, e := range Entries() {
		if e.Embedded || !e.Holds || ByURL(e.Name) {
			continue
		}
		t.Run(e.Name, func(t *testing.T) {
			t.Parallel()
			ctx, cancel := context.WithTimeout(t.Context(), 10*time.Second)
			defer cancel()
			store, env := "postgres", "RACELAB_POSTGRES_URL"
			if strings.HasPrefix(e.Name, "redis") {
				store, env = "redis", "RACELAB_REDIS_URL"
			}
			tg, err := Open(ctx, e.Name, WithRedisURL(os.Getenv("RACELAB_REDIS_URL")), WithPostgresURL(os.Getenv("RACELAB_POSTGRES_URL")))
			if errors.Is(err, redis.ErrUnreachable) || errors.Is(err, postgres.ErrUnreachable) {
				storetest.Unreachable(t, env, err)
			}
			if err != nil {
				t.Fatalf("open %s (%s): %v", e.Name, store, err)
			}
			defer tg.Close()
			if err := tg.Prepare(ctx, storetest.QuotaN); err != nil {
				t.Fatal(err)
			}
			s, ok := tg.Store.(storetest.Store)
			if !ok {
				t.Fatalf("%s does not play every story", e.Name)
			}
			storetest.AnswersEveryRequest(t, s, rounds)
		})
	}
}

// TestPlanCacheParam opens naive SQLite with a plan-cache on the virtual
// clock the engine asks for in a story of hours: the store runs on it, a
// cancel goes unseen for exactly the cache's TTL (none with 0s), and the
// atomic strategy has no such parameter.
func TestPlanCacheParam(t *testing.T) {
	virtual := []Option{WithVirtualTime(true), WithVirtualServers(true)}
	for _, c := range []struct {
		raw   string
		stale time.Duration // how long a cancel goes unseen
	}{
		{"sqlite:naive?plan-cache=2s", 2 * time.Second},
		{"sqlite:naive?plan-cache=0s", 0},
		{"sqlite:naive", story.PlanCacheTTL},
	} {
		t.Run(c.raw, func(t *testing.T) {
			tg, err := Open(t.Context(), c.raw, virtual...)
			if err != nil {
				t.Fatal(err)
			}
			defer tg.Close()
			v, ok := tg.Store.(Clocked).Clock().(*clock.Virtual)
			if !ok {
				t.Fatalf("%s runs on %T; want the virtual clock", c.raw, tg.Store.(Clocked).Clock())
			}
			s := tg.Store.(story.Plans)
			ctx := t.Context()
			if err := s.Subscribe(ctx, "erin"); err != nil {
				t.Fatal(err)
			}
			if _, err := s.Paid(ctx, "erin"); err != nil {
				t.Fatal(err)
			}
			if err := s.Cancel(ctx, "erin"); err != nil {
				t.Fatal(err)
			}
			read := v.Now()
			// Each download moves the clock by the think time; the last
			// one before the TTL is asked just short of it.
			var granted []bool
			for _, at := range []time.Duration{0, c.stale - 10*time.Millisecond, c.stale} {
				if err := v.Sleep(ctx, max(0, read.Add(at).Sub(v.Now()))); err != nil {
					t.Fatal(err)
				}
				ok, _, err := s.Download(ctx, "erin", story.DailyLimit)
				if err != nil {
					t.Fatal(err)
				}
				granted = append(granted, ok)
			}
			want := []bool{c.stale > 0, c.stale > 0, false}
			if fmt.Sprint(granted) != fmt.Sprint(want) {
				t.Errorf("downloads at 0, just before and at %v after the cancel: granted %v; want %v", c.stale, granted, want)
			}
		})
	}
	tg, err := Open(t.Context(), "sqlite:naive")
	if err != nil {
		t.Fatal(err)
	}
	defer tg.Close()
	if _, ok := tg.Store.(Clocked).Clock().(clock.Real); !ok {
		t.Errorf("without virtual servers sqlite runs on %T; want the real clock", tg.Store.(Clocked).Clock())
	}
	_, err = Open(t.Context(), "sqlite?plan-cache=2s", virtual...)
	if want := `target sqlite has no parameter "plan-cache"; valid: path`; err == nil || err.Error() != want {
		t.Errorf("got %v; want %q", err, want)
	}
}
