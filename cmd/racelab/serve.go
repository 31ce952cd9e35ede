package main

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"

	"github.com/spf13/cobra"

	"github.com/racelab/racelab/cmd/racelab/classroom"
	"github.com/racelab/racelab/scenarios/engine"
	"github.com/racelab/racelab/scenarios/results"
	"github.com/racelab/racelab/targets"
	"github.com/racelab/racelab/targets/httpapi/server"
)

// Defaults of serve, in one place.
const (
	defaultServeAddr = "127.0.0.1:8787"
	// defaultServePool is how many simultaneous requests the store is
	// prepared for (connections opened up front), the widest burst that
	// reaches it without queueing for a connection.
	defaultServePool = 100
)

// serveOptions is everything `racelab serve` was asked to do.
type serveOptions struct {
	// Stores are the --store values: one SPEC, served at the root, or
	// any number of NAME=SPEC, each served under /NAME/.
	Stores   []string
	Addr     string
	AddrFile string
	Public   bool
	Token    string
	Quiet    bool
	Pool     int
	MaxConns int
	Servers  serverFlags
	// Bug is a teaching bug to commit on purpose (--bug), "" for none.
	Bug string
	// Race is a SQL race file to show on the page beside each database
	// (--race), "" for none; race is its story, read by check
	// (serve_race.go).
	Race string
	race *engine.Scenario
}

// newServeCmd builds `racelab serve`; runF, when set, replaces the
// server, so that tests can check flag parsing alone.
func newServeCmd(s Streams, runF func(*serveOptions) error) *cobra.Command {
	o := &serveOptions{}
	c := &cobra.Command{
		Use:   "serve --store [NAME=]SPEC... | --race FILE --store NAME=DB...",
		Short: "Serve the HTTP contract for curl, -t http:// and a classroom",
		Long: `Serve racelab's HTTP contract backed by a store, so that a workshop can hit
it with curl and racelab run can race it over the network:

  POST /hit/{slug}          200 {"slug":s,"views":N}
  GET  /get/{slug}          200 {"slug":s,"views":N}
  GET  /get?slugs=a,b,c     200 {"a":N,"b":M,"c":0}
  POST /download/{visitor}  200 {"allowed":true,"count":n}
                            or 429 {"allowed":false,"count":n}
  GET  /quota/{visitor}     200 {"visitor":s,"day":"YYYY-MM-DD","count":n,
                                 "limit":5}
  POST /checkout/{item}     200 {"reserved":true}
                            or 409 {"error":"being checked out",...}
  GET  /item/{item}         200 {"item":s,"stock":1,"claims":k}
  POST /limit/{caller}      200 {"allowed":true,"count":n,"window":w}
                            or 429 {"allowed":false,...}
  GET  /limit/{caller}      200 {"caller":s,"window":w,"count":n,"limit":5}
  POST /subscribe/{subscriber}  200 {"subscriber":s,"plan":"paid"}
  POST /cancel/{subscriber}     200 {"subscriber":s,"plan":"cancelled"}
  GET  /plan/{subscriber}       200 {"subscriber":s,"paid":true|false}
  POST /original/{subscriber}   200 {"granted":true,"count":n}, or 403
                                (no paid plan) or 429 (5 today), granted false
  GET  /original/{subscriber}   200 {"subscriber":s,"count":n,...}
  GET  /stats?route=hit&key=K   requests for K and how far apart they arrived

A story's own limit travels with its requests: ?limit=L (1 to 10000) on
/download, /quota, /limit and /original, ?stock=K on /checkout and /item;
without it the limit is the one above (5 a day, 5 a window, a stock of 1),
and a read answers the limit it was asked for.

Several stores are served side by side when each is named: with --store
naive=kv --store fixed=sqlite the contract above is under /naive/ and
/fixed/, unchanged below each prefix. One store given without a name is
served at the root.

A browser opening / gets the classroom page: for each story, the keys the
stores were sent and what each store answered and holds (for stale-plan
also the plan each was told and read), updated as requests land; the curl
lines to try; a "fire N at once" button that runs a burst at every store
with the engine of racelab run (real clock), then draws allowed against
counted and the burst's lanes (stale-plan, which plays over minutes, has
none: the page gives the racelab run line that plays it); and a replay
of racelab explain's steps, one per click or key press. A "background
load" switch puts run's --background load (at most ` + classroom.DefaultMaxBackground.String() + `) on the
stores, on the real clock, while a page is open; each burst then shows
what the load came to. One burst runs at a time, at most one every
` + classroom.DefaultBurstEvery.String() + `, of at most ` + strconv.Itoa(classroom.DefaultMaxBurst) + ` requests a store. Clients
that do not ask for HTML (curl, racelab) still get JSON at /.

Keys are percent-decoded exactly once. Every answer carries the instant its
request was complete in the Racelab-Arrival header (Unix nanoseconds). It
speaks HTTP/1.1 and HTTP/2 with prior knowledge (h2c), on loopback unless
--public is given. Ctrl-C (or SIGTERM) stops taking requests, lets those in
flight finish, then closes the store.

Any web page open in a browser on this machine can send requests to it, so:
unless --public, only requests addressed to localhost, 127.0.0.1 (any of
127.0.0.0/8) or [::1] are answered, others get 421 (DNS rebinding); a
browser's POST from another origin (a page elsewhere, or on another port)
gets 403, --public or not (CSRF); requests without an Origin header, as
curl and racelab send them, pass. Under --public (or with --token) a write
needs the token printed at start, as Authorization: Bearer TOKEN; the page
printed with it (/#token=…) passes it. At most --max-conns connections are
open at once; one more takes the place of one idle for 5 s, or of a busy
one after its answer, else waits; a lastbyte burst needs one per request.
The page's event streams do not count there: they have a cap of their own
(` + strconv.Itoa(server.DefaultMaxEventStreams) + `), past which they are answered 503. A request head must arrive
within ` + server.DefaultReadHeaderTimeout.String() + `. A store that fails answers 500 {"error":"store failed"}, which
names no server, file or key; what failed is written to stderr, one line
per request, unless --quiet.

With --race FILE.race.yaml the page shows that SQL race file instead,
beside each database given as --store NAME=URL (postgres://…?isolation=…,
mysql://…?isolation=…, sqlite:PATH): a button plays one trial of the file
on every database at once, as racelab run FILE -t NAME=URL does, and shows
per database its verdict and each transaction's lane (what it read and
wrote, where it blocked, aborted with which code, or committed). The
databases serve no HTTP contract; a database --store needs --race, and
--race takes databases and SQL race files only (race an HTTP race file
with racelab run FILE -t http://…).

--bug double-decode serves the contract with seed 002's second bug: the
batch read decodes each slug once more, so a slug stored percent-encoded
reads 0 there while its single read counts it. A workshop finds it with
racelab run ten-hits-one-view -t http://… --key-chars percent.`,
		Example: `  racelab serve --store kv &
  racelab run ten-hits-one-view -t http://127.0.0.1:8787
  curl -X POST http://127.0.0.1:8787/hit/hello
  racelab serve --store naive=kv --store fixed=sqlite   # then open its page
  curl -X POST http://127.0.0.1:8787/naive/hit/hello
  racelab serve --store sqlite --addr 127.0.0.1:0 --addr-file addr
  racelab serve --store actor --bug double-decode
  racelab serve --race scenarios/races/sql/lost-deposit.race.yaml \
    --store rc="$RACELAB_POSTGRES_URL&isolation=read-committed" \
    --store ser="$RACELAB_POSTGRES_URL&isolation=serializable"`,
		Args: exactArgs(0, "no arguments (the store is --store SPEC)"),
		RunE: func(c *cobra.Command, _ []string) error {
			if err := o.check(); err != nil {
				return err
			}
			return runner(runF, runServe, o)(c.Context(), s)
		},
	}
	f := c.Flags()
	f.StringArrayVar(&o.Stores, "store", nil, "target to serve, [NAME=]STORE[:STRATEGY][?PARAMS]: kv, actor, sqlite, redis, postgres and their strategies; repeat with names to serve several side by side (naive=kv)")
	f.StringVar(&o.Addr, "addr", defaultServeAddr, "address to listen on; port 0 picks a free one")
	f.StringVar(&o.AddrFile, "addr-file", "", "write the address listened on to this file once ready (for scripts, with port 0)")
	f.BoolVar(&o.Public, "public", false, "allow an --addr other than loopback, and requests for any host name; writes then need the token printed at start")
	f.StringVar(&o.Token, "token", "", "secret that writes and bursts must carry (Authorization: Bearer TOKEN); a fresh one under --public unless given")
	addQuiet(f, &o.Quiet, "print nothing on stderr")
	f.IntVar(&o.Pool, "pool", defaultServePool, "simultaneous requests the store is prepared for (its connections, opened up front)")
	f.IntVar(&o.MaxConns, "max-conns", server.DefaultMaxConns, "most client connections open at once; more wait until one closes")
	f.StringVar(&o.Race, "race", "", "show this SQL race file (*.race.yaml) on the page, played on each --store NAME=DATABASE (postgres://…, mysql://…, sqlite:PATH)")
	f.StringVar(&o.Bug, "bug", "", "commit a teaching bug on purpose: double-decode (the batch read decodes each slug twice)")
	o.Servers.register(f, targets.Builtin(), "stores")
	_ = c.RegisterFlagCompletionFunc("store", completeTargets)
	_ = c.MarkFlagFilename("race", "yaml", "yml")
	return c
}

// check validates the options before anything is opened: each mistake is
// one usage error.
func (o *serveOptions) check() error {
	if err := o.loadRace(); err != nil {
		return err
	}
	if len(o.Stores) == 0 {
		return usageError{errors.New("racelab serve needs --store SPEC, such as --store kv or --store sqlite (see 'racelab list')")}
	}
	named := map[string]bool{}
	for _, v := range o.Stores {
		name, spec := splitStore(v)
		if name == "" && len(o.Stores) > 1 {
			return usageError{fmt.Errorf("--store %s: name each store when serving several, as in --store naive=kv --store fixed=sqlite", v)}
		}
		if name != "" {
			if err := classroom.CheckName(name); err != nil {
				return usageError{fmt.Errorf("--store %s: %w", v, err)}
			}
			if named[name] {
				return usageError{fmt.Errorf("--store %s: two stores are named %s; give each its own name", v, name)}
			}
			named[name] = true
			if spec == "" {
				return usageError{fmt.Errorf("--store %s: no store after the name; want NAME=SPEC, such as %s=kv", v, name)}
			}
		}
		sp, _, err := targets.Lookup(spec)
		if err != nil {
			return err
		}
		database, err := o.checkRaceStore(v, sp)
		if err != nil {
			return err
		}
		if database {
			continue
		}
		if sp.URL != nil {
			return usageError{fmt.Errorf("--store %s: serve fronts a store, not another service; want kv, actor, sqlite, redis or postgres", v)}
		}
	}
	if o.Pool < 1 {
		return usageError{fmt.Errorf("--pool %d: want 1 or more", o.Pool)}
	}
	if o.MaxConns < 1 {
		return usageError{fmt.Errorf("--max-conns %d: want 1 or more connections open at once (default %d)", o.MaxConns, server.DefaultMaxConns)}
	}
	if o.Token != "" {
		if err := server.CheckToken(o.Token); err != nil {
			return err
		}
	}
	if o.Bug != "" {
		if _, err := server.ParseBug(o.Bug); err != nil {
			return usageError{fmt.Errorf("--%v", err)}
		}
	}
	return checkAddr(o.Addr, o.Public)
}

// splitStore reads one --store value: NAME=SPEC, or a SPEC alone. What
// comes before the first "=" is a name only if it looks like one, so a
// spec whose own parameters hold "=" (kv?cache-ttl=30s) stays a spec.
func splitStore(v string) (name, spec string) {
	if n, sp, ok := strings.Cut(v, "="); ok && classroom.IsName(n) {
		return n, sp
	}
	return "", v
}

// addrWant is what --addr takes, for every complaint about it.
const addrWant = "want HOST:PORT with a port from 0 to 65535, such as " + defaultServeAddr + " (port 0 picks a free one)"

// checkAddr refuses an --addr that cannot be listened on as written, so
// that a typo is a usage error (exit 2) rather than a failure to listen
// (exit 1), and one that is not loopback unless --public says it is meant.
// An empty host (":8787") listens everywhere; a name other than localhost
// may resolve to anything, so it is not taken on trust.
func checkAddr(addr string, public bool) error {
	host, port, err := net.SplitHostPort(addr)
	if err != nil {
		return usageError{fmt.Errorf("--addr %q: %s", addr, addrWant)}
	}
	if port == "" {
		return usageError{fmt.Errorf("--addr %q: no port; %s", addr, addrWant)}
	}
	if _, err := strconv.ParseUint(port, 10, 16); err != nil {
		if errors.Is(err, strconv.ErrRange) {
			return usageError{fmt.Errorf("--addr %q: port %s is out of range; %s", addr, port, addrWant)}
		}
		return usageError{fmt.Errorf("--addr %q: port %q is not a number; %s", addr, port, addrWant)}
	}
	if host != "" && net.ParseIP(host) == nil {
		if strings.Trim(host, "0123456789.") == "" {
			return usageError{fmt.Errorf("--addr %q: %s is not an IP address; %s", addr, host, addrWant)}
		}
		if !hostName(host) {
			return usageError{fmt.Errorf("--addr %q: %q is neither a host name nor an IP address; %s", addr, host, addrWant)}
		}
	}
	if !public && !server.LoopbackHost(host) {
		return usageError{fmt.Errorf("--addr %s is reachable from other machines, and the store is writable by anyone; add --public to mean it", addr)}
	}
	return nil
}

// hostName says whether s has the form of a DNS name: dot-separated labels
// of ASCII letters, digits and inner hyphens (RFC 1123), at most 253 bytes.
func hostName(s string) bool {
	if len(s) > 253 {
		return false
	}
	for label := range strings.SplitSeq(strings.TrimSuffix(s, "."), ".") {
		if label == "" || len(label) > 63 || label[0] == '-' || label[len(label)-1] == '-' {
			return false
		}
		for _, r := range label {
			if !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || r == '-') {
				return false
			}
		}
	}
	return true
}

// listenError is a failure to listen on --addr that check could not
// foresee: the port is taken, or the name does not resolve here. It is the
// environment's doing (exit 1), and it says which address.
type listenError struct {
	addr string
	err  error
}

func (e listenError) Error() string {
	if errors.Is(e.err, syscall.EADDRINUSE) {
		return fmt.Sprintf("listen on %s: address already in use; stop what holds it, or pick another --addr (port 0 picks a free one)", e.addr)
	}
	return fmt.Sprintf("listen on %s: %v", e.addr, e.err)
}

func (e listenError) Unwrap() error { return e.err }

// syncWriter serializes writes to a stream that the contract's log and the
// server's log share, since a test's buffer is not safe for concurrent use.
type syncWriter struct {
	mu sync.Mutex
	w  io.Writer
}

func (s *syncWriter) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.w.Write(p)
}

func runServe(ctx context.Context, s Streams, o *serveOptions) (err error) {
	notice := s.Err
	if o.Quiet {
		notice = io.Discard
	}
	var opened []*targets.Target
	// Closed only once the server has stopped: every answered request's
	// write is in the store before it goes.
	defer func() {
		for _, t := range opened {
			if cerr := t.Close(); cerr != nil && err == nil {
				err = fmt.Errorf("close %s: %w", t.Name(), cerr)
			}
		}
	}()
	names := make([]string, len(o.Stores))
	for i, v := range o.Stores {
		name, spec := splitStore(v)
		t, err := targets.Open(ctx, spec, o.Servers.options()...)
		if err != nil {
			return err
		}
		opened, names[i] = append(opened, t), name
		if err := t.Prepare(ctx, o.Pool); err != nil {
			return fmt.Errorf("prepare %s for %d requests: %w", t.Name(), o.Pool, err)
		}
	}
	ln, err := net.Listen("tcp", o.Addr)
	if err != nil {
		return listenError{o.Addr, err}
	}
	addr := ln.Addr().String()
	if o.AddrFile != "" {
		if err := writeFileAtomic(o.AddrFile, addr+"\n"); err != nil {
			ln.Close()
			return fmt.Errorf("--addr-file: %w", err)
		}
	}
	logs := &syncWriter{w: notice}
	stores := make([]classroom.Store, len(opened))
	handlers := make([]*server.Handler, len(opened))
	where := make([]string, len(opened))
	for i, t := range opened {
		if o.race != nil {
			// A race's database: the page plays the file on it, and no
			// contract is served.
			stores[i] = classroom.Store{Name: names[i], Target: t}
			where[i] = cmp.Or(names[i], t.Name()) + " (" + t.Name() + ")"
			continue
		}
		opts := []server.Option{server.WithStoreName(t.Name()), server.WithErrorLog(logs)}
		if o.Bug != "" {
			opts = append(opts, server.WithBug(server.Bug(o.Bug)))
		}
		handlers[i] = server.New(t.Store, opts...)
		stores[i] = classroom.Store{Name: names[i], Target: t, Contract: handlers[i]}
		where[i] = fmt.Sprintf("%s on http://%s", t.Name(), addr)
		if names[i] != "" {
			where[i] = fmt.Sprintf("%s (%s) on http://%s/%s", names[i], t.Name(), addr, names[i])
		}
	}
	room, err := classroom.New(ctx, classroom.Config{Stores: stores, Addrs: classroom.Addrs(ln.Addr()), Race: o.race})
	if err != nil {
		ln.Close()
		return err
	}
	if o.race != nil {
		fmt.Fprintf(notice, "racelab serve: race %s on %s; Ctrl-C stops\n", o.race.Name, strings.Join(where, ", "))
	} else {
		fmt.Fprintf(notice, "racelab serve: %s (HTTP/1.1 and h2c); Ctrl-C stops\n", strings.Join(where, ", "))
	}
	if o.Bug != "" {
		fmt.Fprintf(notice, "racelab serve: with the teaching bug %s, on purpose\n", o.Bug)
	}
	token := o.Token
	if token == "" && o.Public {
		token = server.NewToken()
	}
	fmt.Fprintln(notice, pageNotice(ln.Addr(), token))
	if token != "" {
		// Printed even under --quiet: without it nobody can write.
		fmt.Fprintf(s.Err, "racelab serve: writes need the token: curl -H 'Authorization: Bearer %s' …, or -t http://racelab:%s@HOST:PORT\n", token, token)
	}
	err = server.Server{Handler: room, ErrorLog: logs, MaxConns: o.MaxConns, Public: o.Public, Token: token, Name: flagOf}.Serve(ctx, ln)
	var requests int64
	for _, h := range handlers {
		if h != nil { // a race's database serves no contract
			requests += h.Requests()
		}
	}
	if o.race != nil {
		// Its databases answered no request; the page's trials were the work.
		fmt.Fprintln(notice, "racelab serve: stopped")
		return err
	}
	fmt.Fprintf(notice, "racelab serve: stopped after %s\n", results.Plural(requests, "request"))
	return err
}

// pageNotice says where the classroom page is: on this machine's own
// loopback when serve listens on every interface, with the addresses the
// room reaches it at. With a token, the page's address carries it after
// #, which a browser never sends, so that the page can write.
func pageNotice(addr net.Addr, token string) string {
	frag := ""
	if token != "" {
		frag = "#token=" + token
	}
	tcp, ok := addr.(*net.TCPAddr)
	if !ok || !tcp.IP.IsUnspecified() {
		return fmt.Sprintf("racelab serve: the classroom page is http://%s/%s", addr, frag)
	}
	return fmt.Sprintf("racelab serve: the classroom page is http://%s/%s; the room reaches this machine at %s",
		net.JoinHostPort("127.0.0.1", strconv.Itoa(tcp.Port)), frag, strings.Join(classroom.Addrs(addr), ", "))
}

// writeFileAtomic writes data to path so that a reader polling for the
// file never sees it half written.
func writeFileAtomic(path, data string) error {
	tmp, err := os.CreateTemp(filepath.Dir(path), "."+filepath.Base(path)+".*")
	if err != nil {
		return err
	}
	_, err = tmp.WriteString(data)
	if cerr := tmp.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Rename(tmp.Name(), path)
	}
	if err != nil {
		os.Remove(tmp.Name())
	}
	return err
}
