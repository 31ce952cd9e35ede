package main

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/rogpeppe/go-internal/testscript"

	"github.com/racelab/racelab/scenarios/results"
	"github.com/racelab/racelab/targets/httpapi/httpapitest"
	"github.com/racelab/racelab/targets/httpapi/server"
)

// httpScripts runs the CLI scripts that need a live `racelab serve`.
// They live apart from testdata/script because they use waitaddr, which
// reads the address a backgrounded server wrote with --addr-file into
// $ADDR: the only way to run a server on a free port from a script.
//
// $RACES is the folder of the shipped race files, for scripts that run
// them against a served store.
func httpScripts(t *testing.T) {
	races, err := filepath.Abs("../../scenarios/races")
	if err != nil {
		t.Fatal(err)
	}
	testscript.Run(t, testscript.Params{
		Dir: "../../testdata/script/http",
		Setup: func(e *testscript.Env) error {
			e.Setenv("RACES", races)
			return scriptEnv(e)
		},
		Cmds: map[string]func(ts *testscript.TestScript, neg bool, args []string){
			"waitaddr": cmdWaitAddr,
		},
	})
}

// cmdWaitAddr waits (up to 30s) for the file args[0] to hold an address
// and sets $ADDR to it: `waitaddr addr` after `exec racelab serve
// --addr-file addr &`.
func cmdWaitAddr(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) != 1 {
		ts.Fatalf("usage: waitaddr FILE")
	}
	path := ts.MkAbs(args[0])
	deadline := time.Now().Add(30 * time.Second)
	for {
		if b, err := os.ReadFile(path); err == nil && strings.HasSuffix(string(b), "\n") {
			ts.Setenv("ADDR", strings.TrimSpace(string(b)))
			return
		}
		if time.Now().After(deadline) {
			ts.Fatalf("no address in %s after 30s", args[0])
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// TestServeUsage: every mistake is one line and exit 2, before anything
// is opened or listened on.
func TestServeUsage(t *testing.T) {
	tests := []struct {
		args []string
		says string
	}{
		{[]string{"serve"}, "racelab serve needs --store SPEC"},
		{[]string{"serve", "--store", "http://127.0.0.1:8787"}, "serve fronts a store, not another service"},
		{[]string{"serve", "--store", "sqlit"}, `unknown target "sqlit"; did you mean "sqlite"?`},
		{[]string{"serve", "--store", "kv?locatons=3"}, `no parameter "locatons"`},
		{[]string{"serve", "--store", "kv", "--addr", "0.0.0.0:8787"}, "add --public to mean it"},
		{[]string{"serve", "--store", "kv", "--addr", ":8787"}, "add --public to mean it"},
		{[]string{"serve", "--store", "kv", "--addr", "example.com:8787"}, "add --public to mean it"},
		{[]string{"serve", "--store", "kv", "--addr", "8787"}, `--addr "8787": want HOST:PORT`},
		{[]string{"serve", "--store", "kv", "--addr", "[::1:8787"}, `--addr "[::1:8787": want HOST:PORT with a port from 0 to 65535`},
		{[]string{"serve", "--store", "kv", "--addr", "localhost:99999"}, `--addr "localhost:99999": port 99999 is out of range; want HOST:PORT with a port from 0 to 65535, such as 127.0.0.1:8787`},
		{[]string{"serve", "--store", "kv", "--addr", "127.0.0.1:65536"}, "port 65536 is out of range"},
		{[]string{"serve", "--store", "kv", "--addr", "127.0.0.1:-1"}, `port "-1" is not a number`},
		{[]string{"serve", "--store", "kv", "--addr", "localhost:http"}, `port "http" is not a number`},
		{[]string{"serve", "--store", "kv", "--addr", "localhost:"}, `--addr "localhost:": no port`},
		{[]string{"serve", "--store", "kv", "--addr", "127.0.0.256:8787"}, "127.0.0.256 is not an IP address"},
		{[]string{"serve", "--store", "kv", "--addr", "bad_name:8787", "--public"}, `"bad_name" is neither a host name nor an IP address`},
		{[]string{"serve", "--store", "kv", "--pool", "0"}, "--pool 0: want 1 or more"},
		{[]string{"serve", "--store", "kv", "--max-conns", "0"}, "--max-conns 0: want 1 or more connections open at once (default 1024)"},
		{[]string{"serve", "--store", "kv", "--max-conns", "-5"}, "--max-conns -5: want 1 or more"},
		{[]string{"serve", "--store", "kv", "--token", "too-short"}, "--token of 9 characters: want 16 to 256 letters"},
		{[]string{"serve", "--store", "kv", "--token", "has space in it ok"}, "--token holds ' ': want"},
		{[]string{"serve", "--store", "kv", "--max-conns", "many"}, `--max-conns "many": want a whole number`},
		{[]string{"serve", "--store", "kv", "extra"}, "takes no arguments"},
		{[]string{"serve", "--store", "kv", "--store", "sqlite"}, "--store kv: name each store when serving several, as in --store naive=kv --store fixed=sqlite"},
		{[]string{"serve", "--store", "a=kv", "--store", "a=sqlite"}, "--store a=sqlite: two stores are named a; give each its own name"},
		{[]string{"serve", "--store", "hit=kv"}, `--store hit=kv: store name "hit" is a path racelab serve already uses (/hit/)`},
		{[]string{"serve", "--store", "classroom=kv", "--store", "b=kv"}, "already uses (/classroom/)"},
		{[]string{"serve", "--store", "naive="}, "--store naive=: no store after the name; want NAME=SPEC, such as naive=kv"},
		{[]string{"serve", "--store", "naive=sqlit"}, `unknown target "sqlit"; did you mean "sqlite"?`},
		{[]string{"serve", "--store", "naive=http://127.0.0.1:8787"}, "--store naive=http://127.0.0.1:8787: serve fronts a store, not another service"},
		{[]string{"serve", "--store", "naive=kv?locatons=3"}, `no parameter "locatons"`},
	}
	for _, tt := range tests {
		code, stdout, stderr := execute(context.Background(), tt.args...)
		if code != exitUsage || stdout != "" || strings.Count(stderr, "\n") != 1 || !strings.Contains(stderr, tt.says) {
			t.Errorf("racelab %s: exit %d, stdout %q, stderr %q; want exit 2 and one line saying %q",
				strings.Join(tt.args, " "), code, stdout, stderr, tt.says)
		}
	}
}

// TestServeFlags checks flag parsing apart from serving, through the seam.
func TestServeFlags(t *testing.T) {
	var got *serveOptions
	c := newServeCmd(first(testStreams("")), func(o *serveOptions) error {
		got = o
		return nil
	})
	c.SetArgs([]string{"--store", "sqlite:naive", "--addr", "0.0.0.0:9000", "--public", "--addr-file", "a", "-q", "--pool", "7", "--max-conns", "9"})
	if err := c.Execute(); err != nil {
		t.Fatal(err)
	}
	want := serveOptions{Stores: []string{"sqlite:naive"}, Addr: "0.0.0.0:9000", AddrFile: "a", Public: true, Quiet: true, Pool: 7, MaxConns: 9}
	if got != nil {
		for setting, u := range got.Servers.urls {
			if env := map[string]string{"redis-url": "RACELAB_REDIS_URL", "postgres-url": "RACELAB_POSTGRES_URL"}[setting]; *u != os.Getenv(env) {
				t.Errorf("--%s defaults to %q, not $%s", setting, *u, env)
			}
		}
		want.Servers = got.Servers
	}
	if got == nil || !reflect.DeepEqual(*got, want) {
		t.Errorf("options = %+v\nwant      %+v", got, want)
	}
}

// TestServeStoreValues: what comes before the first "=" of --store is a
// name only when it looks like one, so a spec's own parameters stay a
// spec; several named stores reach the options in order.
func TestServeStoreValues(t *testing.T) {
	for _, tt := range []struct{ value, name, spec string }{
		{"kv", "", "kv"},
		{"naive=kv", "naive", "kv"},
		{"fixed=sqlite:naive?think-time=1ms", "fixed", "sqlite:naive?think-time=1ms"},
		{"kv?cache-ttl=30s", "", "kv?cache-ttl=30s"},
		{"sqlite:naive?think-time=2ms", "", "sqlite:naive?think-time=2ms"},
		{"a=b=c", "a", "b=c"},
		{"naive=", "naive", ""},
	} {
		if name, spec := splitStore(tt.value); name != tt.name || spec != tt.spec {
			t.Errorf("splitStore(%q) = %q, %q; want %q, %q", tt.value, name, spec, tt.name, tt.spec)
		}
	}
	var got *serveOptions
	c := newServeCmd(first(testStreams("")), func(o *serveOptions) error {
		got = o
		return nil
	})
	c.SetArgs([]string{"--store", "naive=kv?cache-ttl=30s", "--store", "fixed=sqlite"})
	if err := c.Execute(); err != nil {
		t.Fatal(err)
	}
	if want := []string{"naive=kv?cache-ttl=30s", "fixed=sqlite"}; !reflect.DeepEqual(got.Stores, want) {
		t.Errorf("--store values %q; want %q", got.Stores, want)
	}
}

// TestServeStopsWithThePageOpen: a classroom page left open (its event
// stream) does not hold serve's Ctrl-C: serve stops at once, exit 0, and
// says so.
func TestServeStopsWithThePageOpen(t *testing.T) {
	addr, stop := startServe(t, "--store", "naive=kv", "--store", "fixed=actor")
	resp, err := http.Get("http://" + addr + "/classroom/events")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	if _, err := bufio.NewReader(resp.Body).ReadString('\n'); err != nil {
		t.Fatal(err)
	}
	start := time.Now()
	code, stderr := stop()
	if code != exitOK || !strings.Contains(stderr, "racelab serve: stopped after") {
		t.Errorf("serve: exit %d, stderr %q; want 0 and a goodbye", code, stderr)
	}
	if took := time.Since(start); took >= server.DefaultShutdownTimeout {
		t.Errorf("serve took %s to stop with a page open; want it at once, not after the %s shutdown timeout", took, server.DefaultShutdownTimeout)
	}
	for _, want := range []string{
		"racelab serve: naive (kv) on http://" + addr + "/naive, fixed (actor) on http://" + addr + "/fixed (HTTP/1.1 and h2c); Ctrl-C stops\n",
		"racelab serve: the classroom page is http://" + addr + "/\n",
	} {
		if !strings.Contains(stderr, want) {
			t.Errorf("serve's stderr lacks %q:\n%s", want, stderr)
		}
	}
}

// TestServeEndToEnd runs `racelab serve` and `racelab run` in process, as
// a user would in two terminals: the run against sqlite holds and exits 0,
// and stopping the server (Ctrl-C) exits 0 after saying so.
func TestServeEndToEnd(t *testing.T) {
	addrFile := filepath.Join(t.TempDir(), "addr")
	ctx, interrupt := context.WithCancel(context.Background())
	type outcome struct {
		code           int
		stdout, stderr string
	}
	served := make(chan outcome, 1)
	go func() {
		code, stdout, stderr := execute(ctx, "serve", "--store", "sqlite", "--addr", "127.0.0.1:0", "--addr-file", addrFile)
		served <- outcome{code, stdout, stderr}
	}()
	var addr string
	for deadline := time.Now().Add(30 * time.Second); addr == ""; time.Sleep(5 * time.Millisecond) {
		if b, err := os.ReadFile(addrFile); err == nil {
			addr = strings.TrimSpace(string(b))
		} else if time.Now().After(deadline) {
			t.Fatal("racelab serve wrote no address in 30s")
		}
	}
	for _, sync := range []string{"auto", "h2", "lastbyte", "none"} {
		code, stdout, stderr := execute(context.Background(), "run", "five-checkouts", "-t", "http://"+addr, "--trials", "3", "--sync", sync, "-o", "json")
		if code != exitOK {
			t.Fatalf("--sync %s: exit %d: %s", sync, code, stderr)
		}
		var res results.Result
		if err := json.Unmarshal([]byte(stdout), &res); err != nil {
			t.Fatal(err)
		}
		for _, tr := range res.Targets[0].Trials {
			if tr.Allowed != 1 || tr.Refused != 4 || tr.Counted != 1 || tr.ArrivalSpread <= 0 {
				t.Errorf("--sync %s trial %d: allowed %d refused %d counted %d arrival spread %v; want 1, 4, 1 and a spread",
					sync, tr.Index, tr.Allowed, tr.Refused, tr.Counted, tr.ArrivalSpread)
			}
		}
	}
	interrupt()
	o := <-served
	if o.code != exitOK || !strings.Contains(o.stderr, "racelab serve: sqlite on http://"+addr) || !strings.Contains(o.stderr, "stopped after") {
		t.Errorf("serve: exit %d, stderr %q; want 0, the address, and a goodbye", o.code, o.stderr)
	}
}

// TestServeAddressInUse is racelab failing to do its job, not a mistake
// in the command: exit 1, on one line that names the address.
func TestServeAddressInUse(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	code, _, stderr := execute(context.Background(), "serve", "--store", "actor", "--addr", ln.Addr().String())
	want := fmt.Sprintf("racelab: listen on %s: address already in use; stop what holds it, or pick another --addr (port 0 picks a free one)\n", ln.Addr())
	if code != exitFailure || stderr != want {
		t.Errorf("exit %d, stderr %q; want exit 1 and %q", code, stderr, want)
	}
}

// TestServeDefaults: the defaults are in the help, and a bare serve gets
// them.
func TestServeDefaults(t *testing.T) {
	code, stdout, _ := execute(context.Background(), "serve", "--help")
	for _, want := range []string{"--max-conns int", "(default 1024)", "421", "403", `{"error":"store failed"}`} {
		if code != exitOK || !strings.Contains(stdout, want) {
			t.Errorf("serve --help: exit %d, want it to show %q:\n%s", code, want, stdout)
		}
	}
	var got *serveOptions
	c := newServeCmd(first(testStreams("")), func(o *serveOptions) error {
		got = o
		return nil
	})
	c.SetArgs([]string{"--store", "kv"})
	if err := c.Execute(); err != nil {
		t.Fatal(err)
	}
	if got.MaxConns != server.DefaultMaxConns || got.Addr != defaultServeAddr || got.Public {
		t.Errorf("defaults: max-conns %d, addr %s, public %t; want %d, %s, false", got.MaxConns, got.Addr, got.Public, server.DefaultMaxConns, defaultServeAddr)
	}
}

// startServe runs `racelab serve args… --addr 127.0.0.1:0` in process and
// returns its address and a function that interrupts it (Ctrl-C) and
// returns its exit code and stderr.
func startServe(t *testing.T, args ...string) (addr string, stop func() (int, string)) {
	t.Helper()
	addrFile := filepath.Join(t.TempDir(), "addr")
	ctx, interrupt := context.WithCancel(context.Background())
	type outcome struct {
		code   int
		stderr string
	}
	served := make(chan outcome, 1)
	go func() {
		code, _, stderr := execute(ctx, append([]string{"serve", "--addr", "127.0.0.1:0", "--addr-file", addrFile}, args...)...)
		served <- outcome{code, stderr}
	}()
	var once sync.Once
	var o outcome
	stop = func() (int, string) {
		once.Do(func() { interrupt(); o = <-served })
		return o.code, o.stderr
	}
	t.Cleanup(func() { stop() })
	for deadline := time.Now().Add(30 * time.Second); ; time.Sleep(5 * time.Millisecond) {
		if b, err := os.ReadFile(addrFile); err == nil && strings.HasSuffix(string(b), "\n") {
			return strings.TrimSpace(string(b)), stop
		}
		select {
		case res := <-served:
			t.Fatalf("racelab serve ended before listening: exit %d: %s", res.code, res.stderr)
		default:
		}
		if time.Now().After(deadline) {
			t.Fatal("racelab serve wrote no address in 30s")
		}
	}
}

// TestServeGuards: the flags reach the server. Without --public a request
// for another host name is refused 421; with it, it is answered; a
// cross-origin POST is refused 403 either way; racelab's own requests
// (by IP address and by localhost) pass, synchronized bursts included.
// With --public, writes need the token (--token here, else printed at
// start): a rebound page, whose Host and Origin are both its own, has none.
func TestServeGuards(t *testing.T) {
	const token = "serve-guards-token-0123"
	for _, public := range []bool{false, true} {
		args := []string{"--store", "actor"}
		if public {
			args = append(args, "--public", "--token", token)
		}
		addr, stop := startServe(t, args...)
		_, port, _ := net.SplitHostPort(addr)
		auth := map[bool]string{true: "Bearer " + token}[public]
		tests := []struct {
			host, origin, auth string
			status             int
		}{
			{addr, "", auth, 200},
			{"localhost:" + port, "", auth, 200},
			{"rebound.example:" + port, "", auth, map[bool]int{false: 421, true: 200}[public]},
			{addr, "https://evil.example", auth, 403},
			{addr, "http://" + addr, auth, 200},
			{addr, "", "", map[bool]int{false: 200, true: 401}[public]},
			{"rebound.example:" + port, "http://rebound.example:" + port, "", map[bool]int{false: 421, true: 401}[public]},
		}
		for _, tt := range tests {
			req, err := http.NewRequest("POST", "http://"+addr+"/hit/guarded", nil)
			if err != nil {
				t.Fatal(err)
			}
			req.Host = tt.host
			if tt.origin != "" {
				req.Header.Set("Origin", tt.origin)
			}
			if tt.auth != "" {
				req.Header.Set("Authorization", tt.auth)
			}
			a := httpapitest.Send(t, req)
			if a.Status != tt.status || !json.Valid(a.Body) {
				t.Errorf("public %t: POST with Host %q, Origin %q, Authorization %q = %d %s; want %d and JSON", public, tt.host, tt.origin, tt.auth, a.Status, a.Body, tt.status)
			}
		}
		userinfo := map[bool]string{true: "racelab:" + token + "@"}[public]
		for _, base := range []string{"http://" + userinfo + addr, "http://" + userinfo + "localhost:" + port} {
			for _, sync := range []string{"h2", "lastbyte"} {
				if code, _, stderr := execute(context.Background(), "run", "ten-hits-one-view", "-t", base, "--trials", "2", "--sync", sync); code != exitOK {
					t.Errorf("public %t: run -t %s --sync %s: exit %d: %s", public, base, sync, code, stderr)
				}
			}
		}
		if code, stderr := stop(); code != exitOK {
			t.Errorf("public %t: serve exit %d: %s", public, code, stderr)
		}
	}
}

// TestServeMaxConns: --max-conns reaches the server. With a cap of 2, a
// third connection waits until one of the first two (idle, for less than
// the 5 s that would let it take one's place) closes.
func TestServeMaxConns(t *testing.T) {
	addr, _ := startServe(t, "--store", "actor", "--max-conns", "2", "--quiet")
	const req = "GET /stats HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n"
	conns := make([]net.Conn, 3)
	answers := make([]*bufio.Reader, 3)
	dial := func(i int) {
		c, err := net.DialTimeout("tcp", addr, 5*time.Second)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { c.Close() })
		if _, err := io.WriteString(c, req); err != nil {
			t.Fatal(err)
		}
		conns[i], answers[i] = c, bufio.NewReader(c)
	}
	answered := func(i int, wait time.Duration) bool {
		_ = conns[i].SetReadDeadline(time.Now().Add(wait))
		resp, err := http.ReadResponse(answers[i], nil)
		if err != nil {
			return false
		}
		resp.Body.Close()
		return resp.StatusCode == http.StatusOK
	}
	// The first two are answered before the third comes, and stay open,
	// idle: answered while one waited, they would hand it their place.
	for i := range 2 {
		dial(i)
		if !answered(i, 5*time.Second) {
			t.Fatalf("connection %d of 2 not answered", i+1)
		}
	}
	dial(2)
	if answered(2, 300*time.Millisecond) {
		t.Fatal("a third connection was answered with --max-conns 2")
	}
	conns[0].Close()
	if !answered(2, 5*time.Second) {
		t.Fatal("the third connection was not answered once the first closed")
	}
}

// TestPageNotice: listening on every interface, serve names the page on
// loopback for the teacher and the machine's addresses for the room.
func TestPageNotice(t *testing.T) {
	if got, want := pageNotice(&net.TCPAddr{IP: net.IPv4(127, 0, 0, 1), Port: 8787}, ""), "racelab serve: the classroom page is http://127.0.0.1:8787/"; got != want {
		t.Errorf("pageNotice(127.0.0.1:8787) = %q; want %q", got, want)
	}
	got := pageNotice(&net.TCPAddr{IP: net.IPv4zero, Port: 8787}, "")
	if !strings.HasPrefix(got, "racelab serve: the classroom page is http://127.0.0.1:8787/; the room reaches this machine at ") || strings.Contains(got, "0.0.0.0") {
		t.Errorf("pageNotice(0.0.0.0:8787) = %q; want the page on loopback and the machine's addresses", got)
	}
}
