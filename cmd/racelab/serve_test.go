package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/racelab/racelab/scenarios"
	"github.com/rogpeppe/go-internal/testscript"
)

// TestHTTPScripts runs the CLI scripts that need a live `racelab serve`.
// They live apart from testdata/script because they use waitaddr, which
// reads the address a backgrounded server wrote with --addr-file into
// $ADDR: the only way to run a server on a free port from a script.
func TestHTTPScripts(t *testing.T) {
	testscript.Run(t, testscript.Params{
		Dir: "../../testdata/script/http",
		Setup: func(e *testscript.Env) error {
			e.Setenv("NO_COLOR", "1")
			e.Setenv("RACELAB_REDIS_URL", "redis://127.0.0.1:1/0")
			e.Setenv("RACELAB_POSTGRES_URL", "postgres://racelab@127.0.0.1:1/racelab?sslmode=disable")
			return nil
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
		{[]string{"serve", "--store", "kv", "--pool", "0"}, "--pool 0: want 1 or more"},
		{[]string{"serve", "--store", "kv", "extra"}, "takes no arguments"},
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
	c := newServeCmdF(Streams{Out: &bytes.Buffer{}, Err: &bytes.Buffer{}}, func(_ context.Context, o *serveOptions) error {
		got = o
		return nil
	})
	c.SetArgs([]string{"--store", "sqlite:naive", "--addr", "0.0.0.0:9000", "--public", "--addr-file", "a", "-q", "--pool", "7"})
	if err := c.Execute(); err != nil {
		t.Fatal(err)
	}
	want := serveOptions{Store: "sqlite:naive", Addr: "0.0.0.0:9000", AddrFile: "a", Public: true, Quiet: true, Pool: 7,
		RedisURL: os.Getenv("RACELAB_REDIS_URL"), PostgresURL: os.Getenv("RACELAB_POSTGRES_URL")}
	if got == nil || *got != want {
		t.Errorf("options = %+v\nwant      %+v", got, want)
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
		var res scenarios.Result
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

// TestServeAddressInUse is racelab failing to do its job: exit 1.
func TestServeAddressInUse(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	code, _, stderr := execute(context.Background(), "serve", "--store", "actor", "--addr", ln.Addr().String())
	if want := fmt.Sprintf("racelab: listen on %s:", ln.Addr()); code != exitFailure || !strings.HasPrefix(stderr, want) {
		t.Errorf("exit %d, stderr %q; want exit 1 and %q", code, stderr, want)
	}
}
