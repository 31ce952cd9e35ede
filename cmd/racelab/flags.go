package main

import (
	"bytes"
	"cmp"
	"context"
	"errors"
	"fmt"
	"io"
	"math"
	"math/rand/v2"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/racelab/racelab/internal/readfile"
	"github.com/racelab/racelab/internal/sign"
	"github.com/racelab/racelab/internal/usage"
	"github.com/racelab/racelab/report"
	"github.com/racelab/racelab/report/output"
	"github.com/racelab/racelab/scenarios"
	"github.com/racelab/racelab/scenarios/engine"
	"github.com/racelab/racelab/scenarios/results"
	"github.com/racelab/racelab/scenarios/shards"
	"github.com/racelab/racelab/targets"
	"github.com/racelab/racelab/targets/httpapi"
)

// The flags the commands share are declared here, once each: the name,
// the shorthand, the type and the default live in one function, and a
// command adds only what the flag means for it. What run, load and verify
// share is one struct, firing, registered and read into the plans in one
// place. The plans' checks live in the domain (engine.Plan.Validate,
// load.LoadPlan.Validate), which names fields; flagOf is the one place
// where a field becomes a flag.

// fieldFlags names, for each field of the plans, the flag that sets it.
// A story's knob is its own flag (--stock) and needs no line here.
var fieldFlags = map[string]string{
	"Targets":        "-t",
	"Expect":         "--expect",
	"Requests":       "--requests",
	"Trials":         "--trials",
	"Timeout":        "--timeout",
	"Gap":            "--gap",
	"Sequential":     "--sequential",
	"KeyChars":       "--key-chars",
	"Confidence":     "--confidence",
	"MaxRate":        "--max-rate",
	"MaxTrials":      "--max-trials",
	"HistoryTimeout": "--history-timeout",
	"HistoryHTML":    "--history-html",
	"MaxSpread":      "--max-spread",
	"Shard":          "--shard",
	"RunID":          "--run-id",
	"StartAt":        "--start-at",
	"RealClock":      "--clock real",
	"Wait":           "--wait",
	"Period":         "--period",
	"Duration":       "--duration",
	"Concurrency":    "--concurrency",
	"MaxInFlight":    "--max-in-flight",
	"Keys":           "--keys",
	"Samples":        "--samples",
	"Stages":         "--stages",
	"KeyDist":        "--key-dist",
	"Schedule":       "--rate",
	"Fixed":          "--fixed",
	"Background":     "--background",
	"BackgroundKeys": "--background-keys",
	// Settings a report advises (report.Options.Say) but no plan holds.
	"KeepAll":  "--keep-all",
	"Timeline": "--timeline",
	"Wide":     "--wide",
	// Settings of the commands' own (output.Parse, shards.ExpandDirs,
	// engine.Explainer).
	"Output":   "-o",
	"ShardDir": "--shard-dir",
	"Target":   "--target",
	// racelab serve's server (server.Server)
	"MaxConns": "--max-conns",
	"Public":   "--public",
	"Token":    "--token",
}

// flagOf is the flag that sets a plan's field.
func flagOf(field string) string {
	if f, ok := fieldFlags[field]; ok {
		return f
	}
	return "--" + field // a story's knob
}

// reportOptions are the options of a report written to a width: its
// advice names flags, and saved says the result is (or was) kept as JSON,
// so that what the JSON keeps is worth a line.
func (s Streams) reportOptions(width int, saved bool) report.Options {
	return report.Options{NoColor: s.NoColor, Width: width, Say: flagOf, Saved: saved}
}

// sayFlags writes err as the command line reads it: every field a
// *usage.FieldError in it names is said as its flag.
func sayFlags(err error) string {
	var found []*usage.FieldError
	var walk func(error)
	walk = func(err error) {
		for err != nil {
			if fe, ok := err.(*usage.FieldError); ok && !slices.Contains(found, fe) {
				found = append(found, fe)
			}
			if j, ok := err.(interface{ Unwrap() []error }); ok {
				for _, e := range j.Unwrap() {
					walk(e)
				}
				return
			}
			err = errors.Unwrap(err)
		}
	}
	walk(err)
	// Each field error's text is marked first and said after, so that a
	// flag's name never meets a second replacement.
	msg := err.Error()
	for i, fe := range found {
		msg = strings.Replace(msg, fe.Error(), fmt.Sprintf("\x00%d\x00", i), 1)
	}
	for i, fe := range found {
		msg = strings.Replace(msg, fmt.Sprintf("\x00%d\x00", i), fe.Say(flagOf), 1)
	}
	return msg
}

// firstError is the first of a plan's errors, or nil: a command line is
// told one thing to fix at a time.
func firstError(errs []error) error {
	if len(errs) == 0 {
		return nil
	}
	return errs[0]
}

// explicitZero refuses a value given on the command line as zero for a
// field whose zero the plan reads as "the default": the user meant zero,
// and it is not a value the field takes. The words are the domain's.
func explicitZero(set func(string) bool, invalid func(field string, value any) *usage.FieldError, checks ...zeroCheck) error {
	for _, c := range checks {
		if c.zero && set != nil && set(strings.TrimPrefix(flagOf(c.field), "--")) {
			return invalid(c.field, c.value)
		}
	}
	return nil
}

type zeroCheck struct {
	field string
	value any
	zero  bool
}

func zeroIf(field string, value any, zero bool) zeroCheck { return zeroCheck{field, value, zero} }

// firing is what the commands that fire at targets share, run, load and
// verify (and report --merge, verify's read-back): the targets and how
// to reach them, what each must do, each request's time limit, the
// outputs and the signing key; run and load also share the seed,
// --quiet and the shard flags. It is embedded in each command's options,
// its flags are registered by register and read into the plans by
// targeting, here only: a flag they share is added in this file and in
// the plans' engine.Targeting.
type firing struct {
	// catalog is where the targets are looked up.
	catalog *targets.Catalog
	Targets []string
	Timeout time.Duration
	Expect  []string
	Outputs outputFlags
	Servers serverFlags
	HTTP    httpFlags
	Store   storeFlags
	Sign    signFlags
	Seed    int64
	Quiet   bool
	Shard   shardFlags
	// set tells which flags the command line gave: an explicit zero is a
	// mistake, not the default, and a seed not given is drawn.
	set func(name string) bool
	// outs are the outputs -o asked for, read by the command's plan.
	outs []output.Output
}

// firingWords are what the shared flags mean on one command: the help of
// -t, --timeout, and of run's and load's --seed and --quiet; -o's formats
// (none: the command registers its own -o); and which flags it has:
// --sync on a command that releases bursts, --period on one whose shards
// release trials, and for one that reads parts (verify), the signature's
// check and no seed, --quiet or shards.
type firingWords struct {
	targets, timeout, seed, quiet string
	formats                       []string
	sync, period, reads           bool
}

// register defines the shared flags on c in w's words.
func (f *firing) register(c *cobra.Command, w firingWords) {
	fs := c.Flags()
	fs.StringArrayVarP(&f.Targets, "target", "t", nil, w.targets)
	_ = c.RegisterFlagCompletionFunc("target", completeTargets)
	fs.DurationVar(&f.Timeout, "timeout", engine.DefaultTimeout, w.timeout)
	addExpect(c, &f.Expect)
	if w.formats != nil {
		f.Outputs.register(c, w.formats)
	}
	f.Servers.register(fs, cmp.Or(f.catalog, targets.Builtin()), "targets")
	if w.sync {
		f.HTTP.register(fs)
	} else {
		f.HTTP.registerMapping(fs)
	}
	f.Store.register(fs)
	f.Sign.register(fs, w.reads)
	if !w.reads {
		addSeed(fs, &f.Seed, 0, w.seed)
		addQuiet(fs, &f.Quiet, w.quiet)
		f.Shard.register(fs, w.period)
	}
}

// given says whether the command line gave the flag called name.
func (f *firing) given(name string) bool { return f.set != nil && f.set(name) }

// seed is --seed, or one drawn when it was not given: short enough to
// retype.
func (f *firing) seed() int64 {
	if !f.given("seed") {
		return rand.Int64N(1 << 31)
	}
	return f.Seed
}

// targeting reads the shared flags into what every plan takes. lineup is
// the plan's own targets, opened when -t gives none (a story's line-up,
// the specs a sharded run's parts recorded), for the http flags' check;
// tweak, when set, adjusts the http client's settings.
func (f *firing) targeting(lineup []string, tweak func(*httpapi.Config)) (engine.Targeting, error) {
	expect, expectOf, err := parseExpect(f.Expect)
	if err != nil {
		return engine.Targeting{}, err
	}
	t := engine.Targeting{Catalog: f.catalog, Targets: f.Targets, Options: f.Servers.options(), Timeout: f.Timeout, Expect: expect, ExpectOf: expectOf}
	return t, f.HTTP.apply(f.specs(lineup), f.Timeout, &t.Options, tweak)
}

// specs are the targets a plan opens: -t's, else its own lineup.
func (f *firing) specs(lineup []string) []string {
	if len(f.Targets) > 0 {
		return f.Targets
	}
	return lineup
}

// checkShard refuses the shard flags without --shard, where they would
// do nothing, and with it any -o but the JSON part a shard writes.
func (f *firing) checkShard() error {
	if err := f.Shard.check(); err != nil || !f.Shard.on() {
		return err
	}
	if len(f.Outputs.raw) > 0 && (len(f.outs) != 1 || f.outs[0].Format != string(report.JSON) || f.outs[0].Path != "") {
		return usageError{errors.New("-o: a shard writes its part as JSON to standard output (or --shard-dir), for racelab verify to merge and render in any format")}
	}
	return nil
}

// targetsUsage is -t's help for a command that fires at targets.
const targetsUsage = "target spec STORE[:STRATEGY][?PARAMS] or URL, or NAME=SPEC to name it in reports;\n" +
	"repeatable (default: the story's line-up)"

// addExpect is --expect, one grammar for every command: WHAT for every
// target, NAME=WHAT for one (parseExpect).
func addExpect(c *cobra.Command, dst *[]string) {
	c.Flags().StringArrayVar(dst, "expect", nil, "what every target must do: auto (naive may break, others must hold), hold, breaks or race;\n"+
		"NAME=WHAT for one target, by the name given with -t NAME=SPEC or its spec (repeatable; default auto)")
	_ = c.RegisterFlagCompletionFunc("expect", cobra.FixedCompletions([]string{"auto", "hold", "breaks", "race"}, cobra.ShellCompDirectiveNoFileComp))
}

// addRequests is -n, --requests.
func addRequests[N int | int64](f *pflag.FlagSet, dst *N, what string) {
	switch p := any(dst).(type) {
	case *int:
		f.IntVarP(p, "requests", "n", 0, what)
	case *int64:
		f.Int64VarP(p, "requests", "n", 0, what)
	}
}

// addSeed is --seed; def is the command's own default.
func addSeed(f *pflag.FlagSet, dst *int64, def int64, what string) {
	f.Int64Var(dst, "seed", def, what)
}

// addQuiet is -q, --quiet.
func addQuiet(f *pflag.FlagSet, dst *bool, what string) {
	f.BoolVarP(dst, "quiet", "q", false, what)
}

// parseExpect reads --expect: one bare value for every target, and
// NAME=VALUE for one target each. The value is split at the last "=", so
// that a URL given as the name keeps its own.
func parseExpect(raw []string) (engine.Override, map[string]engine.Override, error) {
	all := engine.OverrideAuto
	var one map[string]engine.Override
	allSet := false
	for _, v := range raw {
		key, what, named := "", v, false
		if i := strings.LastIndex(v, "="); i >= 0 {
			key, what, named = v[:i], v[i+1:], true
		}
		ov, err := engine.ParseOverride(what)
		if err != nil || named && key == "" {
			return "", nil, usageError{fmt.Errorf("--expect %s: want auto, hold, breaks or race, or NAME=one of them for one target", v)}
		}
		switch {
		case !named && allSet:
			return "", nil, usageError{fmt.Errorf("--expect %s: a second expectation for every target; give one, and NAME=%s for single targets", v, what)}
		case !named:
			all, allSet = ov, true
		case hasKey(one, key):
			return "", nil, usageError{fmt.Errorf("--expect %s: %s already has an expectation", v, key)}
		default:
			if one == nil {
				one = map[string]engine.Override{}
			}
			one[key] = ov
		}
	}
	return all, one, nil
}

func hasKey[V any](m map[string]V, k string) bool { _, ok := m[k]; return ok }

// outputFlags is a command's -o flag: FORMAT, FORMAT=FILE or FORMAT+=FILE,
// repeatable, read by output.Parse.
type outputFlags struct {
	raw []string
	// formats are the names the command knows, its default first.
	formats []string
}

// register adds -o to c for a command that writes the formats named, the
// first being the default.
func (o *outputFlags) register(c *cobra.Command, formats []string) {
	o.formats = formats
	c.Flags().StringArrayVarP(&o.raw, "output", "o", nil,
		"output `FORMAT`, to standard output; FORMAT=FILE writes a file, FORMAT+=FILE appends to one;\n"+
			"repeat for several (default "+formats[0]+"; formats: "+strings.Join(formats, ", ")+")")
	_ = c.RegisterFlagCompletionFunc("output", func(_ *cobra.Command, _ []string, _ string) ([]string, cobra.ShellCompDirective) {
		return o.formats, cobra.ShellCompDirectiveNoFileComp | cobra.ShellCompDirectiveNoSpace
	})
}

// parse reads the -o values, checking them before any work is done.
func (o *outputFlags) parse() ([]output.Output, error) { return output.Parse(o.raw, o.formats) }

// serverFlags are the servers of the real-store targets as flags: one for
// each server a catalog entry declares (targets.Server: --redis-url,
// --postgres-url), defaulting to its environment variable. Every command
// that opens targets registers them through here, so that a new
// server-backed store brings its flag with its catalog entry.
type serverFlags struct {
	urls map[string]*string
}

// register defines the flags on f. What names, in the command's own words,
// what the servers are for: "targets" for run, "stores" for serve.
func (s *serverFlags) register(f *pflag.FlagSet, cat *targets.Catalog, what string) {
	s.urls = map[string]*string{}
	for _, srv := range cat.Servers() {
		u := new(string)
		s.urls[srv.Setting] = u
		f.StringVar(u, srv.Setting, os.Getenv(srv.Env), fmt.Sprintf("%s %s (env %s; default %s)", srv.What, what, srv.Env, srv.Default))
	}
}

// options point the targets opened with them at the servers.
func (s *serverFlags) options() []targets.Option {
	var out []targets.Option
	for setting, u := range s.urls {
		out = append(out, targets.WithServerURL(setting, *u))
	}
	return out
}

// httpFlags are the flags for http:// and https:// targets: how a burst
// is released, and how the stories map onto a service with its own API.
// They go to every http target of a command as targets.WithHTTP, with
// --timeout as the bound of each connection's warm-up.
type httpFlags struct {
	Sync     string
	Calls    []string
	MapFile  readfile.Named
	Headers  []string
	Insecure bool

	// set tells which of the flags the command line gave; nil (flags
	// filled in by a test) counts any value but the default as given.
	set *pflag.FlagSet
}

// httpFlagNames are the flags that mean something for http targets only.
var httpFlagNames = []string{"sync", "http-call", "http-map", "http-header", "http-insecure"}

// register defines every http flag, for a command that releases bursts.
func (h *httpFlags) register(f *pflag.FlagSet) {
	f.StringVar(&h.Sync, "sync", string(httpapi.SyncAuto),
		"how http targets release a burst: h2 (one packet ends every HTTP/2 stream),\n"+
			"lastbyte (HTTP/1.1, last bytes withheld), none, or auto (h2 if the server speaks it)")
	h.registerMapping(f)
}

// registerMapping defines the flags that say what the requests are, not
// how a burst is released: all a load needs.
func (h *httpFlags) registerMapping(f *pflag.FlagSet) {
	h.set = f
	f.StringArrayVar(&h.Calls, "http-call", nil,
		"map a call onto the service's own API, repeatable (calls: hit get get-many download quota "+
			"checkout item limit window subscribe cancel plan original originals):\n"+
			"'CALL=[METHOD] PATH [yes=CODES] [no=CODES] [field=NAME] [key=NAME] [ok=NAME]',\n"+
			"e.g. 'hit=PUT /api/posts/{slug}/views field=data.total'")
	f.Var(&h.MapFile, "http-map", "JSON file of the same mappings: {\"hit\": {\"path\": \"/v/{slug}\", \"field\": \"total\"}, ...}")
	f.StringArrayVar(&h.Headers, "http-header", nil, "header sent with every http request, 'Name: value', repeatable (an API key, a cookie)")
	f.BoolVar(&h.Insecure, "http-insecure", false, "https targets: accept any certificate (self-signed test servers)")
}

// config turns the flags into the client's settings; every error is the
// user's to fix.
func (h *httpFlags) config() (httpapi.Config, error) {
	var cfg httpapi.Config
	mode, err := httpapi.ParseSync(h.Sync)
	if err != nil {
		return cfg, fmt.Errorf("--sync %q: want auto, h2, lastbyte or none", h.Sync)
	}
	cfg.Wire.Sync = mode
	cfg.Wire.Insecure = h.Insecure
	mapping := httpapi.Contract()
	if h.MapFile.Path != "" {
		data, err := h.MapFile.Read(httpapi.MaxMappingBytes, "a mapping, a few lines of JSON")
		if err != nil {
			return cfg, fmt.Errorf("--http-map %w", err)
		}
		m, err := httpapi.LoadMapping(bytes.NewReader(data))
		if err != nil {
			return cfg, fmt.Errorf("--http-map %s: %w", h.MapFile.Path, err)
		}
		mapping = mapping.Merge(m)
	}
	// A call given twice is a mistake to point out, not a last one to
	// keep silently: the two may differ in a way the user did not see.
	given := map[httpapi.Call]string{}
	for _, s := range h.Calls {
		call, route, err := httpapi.ParseCall(s)
		if err != nil {
			return cfg, fmt.Errorf("--http-call %w", err)
		}
		if first, twice := given[call]; twice {
			return cfg, fmt.Errorf("--http-call maps %s twice (%q and %q); give each call once", call, first, s)
		}
		given[call] = s
		mapping = mapping.Merge(httpapi.Mapping{call: route})
	}
	if err := mapping.Validate(); err != nil {
		return cfg, fmt.Errorf("--http-call/--http-map: %w", err)
	}
	cfg.Mapping = mapping
	for _, s := range h.Headers {
		name, value, ok := strings.Cut(s, ":")
		name, value = strings.TrimSpace(name), strings.TrimSpace(value)
		if !ok || name == "" {
			return cfg, fmt.Errorf("--http-header %q: want 'Name: value'", s)
		}
		if cfg.Wire.Header == nil {
			cfg.Wire.Header = http.Header{}
		}
		cfg.Wire.Header.Add(name, value)
	}
	return cfg, nil
}

// apply checks the flags against specs, the targets a command opens, and
// hands them to its http targets in opts. Given to a command without one,
// they would do nothing, which is worse than an error: the user meant
// something by them. timeout is one request's limit; tweak, when set,
// adjusts the client's settings (a load sends whole requests, never
// staged bursts).
func (h *httpFlags) apply(specs []string, timeout time.Duration, opts *[]targets.Option, tweak func(*httpapi.Config)) error {
	if given := h.given(); len(given) > 0 && !targets.HasHTTP(specs) {
		verb := "applies"
		if len(given) > 1 {
			verb = "apply"
		}
		list := strings.Join(given[:len(given)-1], ", ")
		if list != "" {
			list += " and "
		}
		list += given[len(given)-1]
		return fmt.Errorf("%s %s to http targets only, and this run has none (add -t http://HOST:PORT)%.0w", list, verb, usage.Err)
	}
	cfg, err := h.config()
	if errors.Is(err, context.Canceled) {
		return err // interrupted while reading --http-map: exit 130
	}
	if err != nil {
		return fmt.Errorf("%w%.0w", err, usage.Err)
	}
	// Warming a connection (connect, TLS, the HTTP/2 settings, a harmless
	// GET) is one request, so it has one request's time limit: a silent
	// service fails the run after --timeout, and a slow one gets all of it.
	cfg.Wire.DialTimeout = timeout
	if tweak != nil {
		tweak(&cfg)
	}
	*opts = append(*opts, targets.WithHTTP(cfg))
	return nil
}

// given lists the http flags the command line gave, as --name.
func (h *httpFlags) given() []string {
	var out []string
	for _, name := range httpFlagNames {
		if h.set != nil {
			if h.set.Changed(name) {
				out = append(out, "--"+name)
			}
			continue
		}
		set := map[string]bool{
			"sync":          h.Sync != "" && h.Sync != string(httpapi.SyncAuto),
			"http-call":     len(h.Calls) > 0,
			"http-map":      h.MapFile.Path != "",
			"http-header":   len(h.Headers) > 0,
			"http-insecure": h.Insecure,
		}[name]
		if set {
			out = append(out, "--"+name)
		}
	}
	return out
}

// signFlags are --sign-key (run, load and their shards sign what they
// write as JSON; verify and report check what they read) and, for the
// readers, --require-signature.
type signFlags struct {
	Key     signKey
	Require bool
}

// signKey is --sign-key's value: any text but the empty one. `--sign-key
// ”` (a secret that expanded to nothing) is refused rather than taken as
// no key, which would let a reader accept unsigned documents.
type signKey string

func (k *signKey) String() string { return string(*k) }

// Type keeps the help's placeholder: a key is any string.
func (k *signKey) Type() string { return "string" }

func (k *signKey) Set(s string) error {
	if s == "" {
		return flagWant("a key that is not empty (leave --sign-key out to give none)")
	}
	*k = signKey(s)
	return nil
}

func (f *signFlags) register(fs *pflag.FlagSet, reader bool) {
	what := "sign every JSON document written (-o json, shard parts) with HMAC-SHA-256 under this key"
	if reader {
		what = "check the signature of every document read that has one under this key"
		fs.BoolVar(&f.Require, "require-signature", false, "refuse a document that is not signed under --sign-key (or RACELAB_SIGN_KEY)")
	}
	fs.Var(&f.Key, "sign-key", what+" (default $RACELAB_SIGN_KEY;\nthe environment keeps it out of the process list)")
}

// key is the key to sign and check with, nil for none.
func (f *signFlags) key() []byte { return sign.Key(string(f.Key), nil) }

// signed is render with its JSON signed, when there is a key.
func (f *signFlags) signed(render output.RenderFunc) output.RenderFunc {
	key := f.key()
	return func(w io.Writer, format string, width int) error {
		if key == nil || report.Format(format) != report.JSON {
			return render(w, format, width)
		}
		return sign.Render(w, key, func(w io.Writer) error { return render(w, format, width) })
	}
}

// verifier is the checks of every document read: runs judged again by
// their stories, parts checked against their plan, and, with a key, the
// signatures.
func (f *signFlags) verifier() (results.Verifier, error) {
	v := results.Verifier{Run: scenarios.Check,
		Shard: func(s *results.ShardResult) error { return shards.CheckShard(s, scenarios.Find) },
		Load:  func(l *results.LoadResult) error { return shards.CheckLoad(l, scenarios.Find) }}
	// With a key every document must be signed: --require-signature
	// only insists that there is a key.
	switch key := f.key(); {
	case f.Require && key == nil:
		return v, usageError{errors.New("--require-signature needs the key: give --sign-key or set RACELAB_SIGN_KEY")}
	case key != nil:
		v.Signed = sign.Checker(key)
	}
	return v, nil
}

// shardFlags are run's and load's flags for playing one shard of a run
// spread over several processes or machines (a Kubernetes Indexed Job, a
// CI matrix): which shard, the run they share, and when to release.
type shardFlags struct {
	Shard   string
	RunID   string
	StartAt string
	Wait    bool
	Period  time.Duration
	Dir     string

	set *pflag.FlagSet
}

// shardFlagNames are the flags that need --shard.
var shardFlagNames = []string{"run-id", "start-at", "wait", "period", "shard-dir"}

func (f *shardFlags) register(fs *pflag.FlagSet, trials bool) {
	f.set = fs
	fs.StringVar(&f.Shard, "shard", "", "play one shard of a run spread over N processes: I/N (I from 0), or auto/N with I from\n"+
		"JOB_COMPLETION_INDEX (a Kubernetes Indexed Job); writes the shard's part as JSON for 'racelab verify'")
	fs.StringVar(&f.RunID, "run-id", "", "with --shard: the run's id, the same on every shard, so that all shards hit the same keys")
	fs.StringVar(&f.StartAt, "start-at", "", "with --shard: release at this wall-clock instant, RFC 3339 (2026-05-01T12:00:00Z) or +30s;\n"+
		"compute it once and give every shard the same; a shard started past it fires at once; more than a day ahead only with --wait")
	fs.BoolVar(&f.Wait, "wait", false, "with --start-at more than a day ahead: wait for it (without, such a date is taken for a typo)")
	if trials {
		fs.DurationVar(&f.Period, "period", engine.DefaultPeriod, "with --shard and --start-at: time between two trials' releases")
	}
	fs.StringVar(&f.Dir, "shard-dir", "", "with --shard: write the part to DIR/shard-I-of-N.json instead of standard output")
}

// on says whether this process plays a shard.
func (f *shardFlags) on() bool { return f.Shard != "" }

// check refuses the shard flags without --shard, where they would do
// nothing.
func (f *shardFlags) check() error {
	if f.on() || f.set == nil {
		return nil
	}
	for _, name := range shardFlagNames {
		if fl := f.set.Lookup(name); fl != nil && f.set.Changed(name) {
			return usageError{fmt.Errorf("--%s needs --shard I/N: it only means something for one shard of a sharded run", name)}
		}
	}
	return nil
}

// sharding reads the flags into the shard this process plays.
func (f *shardFlags) sharding() (engine.Sharding, error) {
	if f.set != nil && f.set.Changed("start-at") && strings.TrimSpace(f.StartAt) == "" {
		return engine.Sharding{}, usageError{errors.New("--start-at '': want an RFC 3339 instant such as 2026-05-01T12:00:00Z, or +DURATION such as +30s; leave the flag out to release as soon as ready")}
	}
	if f.Dir != "" {
		if err := shards.CheckDir(f.Dir); err != nil {
			return engine.Sharding{}, err
		}
	}
	spec := shards.Spec{Shard: f.Shard, RunID: f.RunID, StartAt: f.StartAt, Wait: f.Wait, Period: f.Period,
		Trials: f.set != nil && f.set.Lookup("period") != nil}
	return spec.Sharding(time.Now(), os.Getenv)
}

// evidenceFlags are the flags for the strength of a verdict: the
// confidence of the bound on the rate of breaking, trials added until a
// bound is met, the linearizability check of every trial's history, and
// the requests kept. verify has the ones a merge of parts can use.
type evidenceFlags struct {
	Confidence     percentage
	MaxRate        percentage
	MaxTrials      int
	CheckHistory   bool
	HistoryTimeout time.Duration
	HistoryHTML    string
	MaxSpread      time.Duration
	KeepAll        bool
	// flags is the set the flags live in, to tell an explicit value from
	// the default.
	flags *pflag.FlagSet
}

// register defines the flags on f: run's, or, merged, verify's.
func (e *evidenceFlags) register(f *pflag.FlagSet, merged bool) {
	e.Confidence = percentage(results.DefaultConfidence)
	e.flags = f
	f.Var(&e.Confidence, "confidence", "confidence level of the bound on the rate of breaking, such as 95% or 99%")
	f.DurationVar(&e.MaxSpread, "max-spread", engine.DefaultMaxSpread, "widest release spread of a burst that still proves anything; a trial spread wider is inconclusive\n"+
		"unless its counts prove a break (burst not simultaneous)")
	if merged {
		f.BoolVar(&e.CheckHistory, "check-history", true, "check each merged trial's history for linearizability, when every shard ran on one machine (one clock)")
		f.DurationVar(&e.HistoryTimeout, "history-timeout", results.DefaultHistoryTimeout, "time limit of one trial's history check")
		f.BoolVar(&e.KeepAll, "keep-all", false, "keep every merged trial's requests in the result (-o json)")
		return
	}
	f.Var(&e.MaxRate, "max-rate", "add trials until the rate of breaking is shown below this, such as 1%, or a trial breaks;\n"+
		"a target expected to hold then holds only if the bound is met")
	f.IntVar(&e.MaxTrials, "max-trials", results.DefaultMaxTrials, "most trials per target with --max-rate")
	f.BoolVar(&e.CheckHistory, "check-history", true, "check each trial's history for linearizability (porcupine); a history that is not breaks the trial")
	f.DurationVar(&e.HistoryTimeout, "history-timeout", results.DefaultHistoryTimeout, "time limit of one trial's history check; past it the check says unknown")
	f.StringVar(&e.HistoryHTML, "history-html", "", "write porcupine's picture of the first trial that is not linearizable (else the first trial) to `FILE`")
	f.BoolVar(&e.KeepAll, "keep-all", false, fmt.Sprintf("keep every trial's requests in the result (-o json); by default the first %d trials keep them\n"+
		"(at most %d requests in all) with the first broken, first inconclusive and worst trial, and the rest are only counted", results.DefaultKeepTrials, results.DefaultKeepRequests))
}

// evidence reads run's flags into p, raising its trials to what a bound
// needs.
func (e *evidenceFlags) apply(p *engine.Plan) error {
	changed := func(name string) bool { return e.flags != nil && e.flags.Changed(name) }
	// An explicit value that would mean "unset" is refused rather than
	// quietly replaced by the default; the rest is the plan's to check.
	err := explicitZero(changed, engine.Wants.Invalid, zeroIf("Confidence", e.Confidence.String(), e.Confidence == 0),
		zeroIf("MaxRate", e.MaxRate.String(), e.MaxRate == 0), zeroIf("MaxTrials", e.MaxTrials, e.MaxTrials == 0),
		zeroIf("HistoryTimeout", e.HistoryTimeout, e.HistoryTimeout == 0), zeroIf("MaxSpread", e.MaxSpread, e.MaxSpread == 0))
	if err != nil {
		return err
	}
	if changed("max-trials") && e.MaxRate == 0 {
		return usageError{errors.New("--max-trials needs --max-rate; without a rate to prove, --trials says how many trials run")}
	}
	if e.HistoryHTML != "" {
		// Refused before anything runs, not after an hour of trials.
		dir := filepath.Dir(e.HistoryHTML)
		if fi, err := os.Stat(dir); err != nil || !fi.IsDir() {
			return fmt.Errorf("%w: --history-html %s: folder %s does not exist", results.ErrUsage, e.HistoryHTML, dir)
		}
	}
	p.Evidence = e.evidence()
	p.Evidence.MaxRate, p.Evidence.MaxTrials = float64(e.MaxRate), e.MaxTrials
	p.Keep = results.Keep{All: e.KeepAll}
	if e.MaxRate > 0 {
		// The trials the bound needs are known in advance; planning them
		// lets the progress bar show the real total. Run would raise the
		// count to the same number by itself.
		p.Trials = max(p.Trials, results.TrialsNeeded(float64(e.Confidence), float64(e.MaxRate)))
	}
	return nil
}

// evidence is what run and verify alike ask of a verdict.
func (e *evidenceFlags) evidence() engine.Evidence {
	return engine.Evidence{Confidence: float64(e.Confidence), SkipHistory: !e.CheckHistory, HistoryTimeout: e.HistoryTimeout, MaxSpread: e.MaxSpread}
}

// percentage is a flag value given as a percentage: "99%", "0.5%". The
// sign is required: a bare "0.5" could mean 0.5% or 50%, and "1" 1% or
// 100%, so a bare number is refused rather than guessed at.
type percentage float64

func (p *percentage) String() string {
	if *p == 0 {
		return "0"
	}
	// Rounded to a millionth of a percent: 0.95×100 is 94.99999999999999.
	return strconv.FormatFloat(math.Round(float64(*p)*1e8)/1e6, 'f', -1, 64) + "%"
}

func (p *percentage) Set(s string) error {
	num, pct := strings.CutSuffix(strings.TrimSpace(s), "%")
	num = strings.TrimSpace(num)
	f, err := strconv.ParseFloat(num, 64)
	if err == nil && pct {
		// Parsed with the exponent, 99.9% is the float nearest 0.999;
		// divided by 100 it would be 0.9990000000000001.
		f, err = strconv.ParseFloat(num+"e-2", 64)
	}
	switch {
	case err != nil:
		return errors.New("not a number")
	case !pct:
		return errors.New("ambiguous: write a percentage with %, such as 1%")
	}
	*p = percentage(f)
	return nil
}

// Type names the value in help and in errors: "want a percentage".
func (p *percentage) Type() string { return "percentage" }

// knobFlags are the stories' own settings as flags (--stock, --rate, …),
// registered from what each story declares (engine.Knob): a story with a
// knob of its own adds its flag by saying so. Stories that share a knob's
// name share its flag; its help says what it means for each.
type knobFlags struct {
	values map[string]*knobValue
}

func (k *knobFlags) register(f *pflag.FlagSet) {
	k.values = map[string]*knobValue{}
	var order []string
	for _, sc := range scenarios.All() {
		for _, knob := range sc.Knobs {
			v, ok := k.values[knob.Name]
			if !ok {
				v = &knobValue{knob: knob}
				k.values[knob.Name] = v
				order = append(order, knob.Name)
			}
			v.usage = append(v.usage, [2]string{sc.Name, knob.Usage})
		}
	}
	for _, name := range order {
		v := k.values[name]
		fl := f.VarPF(v, name, "", v.help())
		if v.knob.Bool {
			fl.NoOptDefVal = "true"
		}
	}
}

// settings reads the knobs given into a Settings.
func (k *knobFlags) settings() (results.Settings, error) {
	var s results.Settings
	for _, v := range k.values {
		if v.given {
			if err := v.knob.Set(&s, v.raw); err != nil {
				return s, err
			}
		}
	}
	return s, nil
}

// knobValue is one knob's flag: the text given, read by the knob when the
// story is known.
type knobValue struct {
	knob  engine.Knob
	usage [][2]string // story, what the knob means for it
	raw   string
	given bool
}

func (v *knobValue) String() string { return v.raw }
func (v *knobValue) Set(s string) error {
	v.raw, v.given = s, true
	return nil
}

func (v *knobValue) Type() string {
	if v.knob.Bool {
		return "bool"
	}
	return "string"
}

// help is the flag's help: the story's words, each prefixed by its story
// when stories read it differently.
func (v *knobValue) help() string {
	same := true
	for _, u := range v.usage {
		same = same && u[1] == v.usage[0][1]
	}
	if same {
		var names []string
		for _, u := range v.usage {
			names = append(names, u[0])
		}
		return strings.Join(names, ", ") + ": " + v.usage[0][1]
	}
	var lines []string
	for _, u := range v.usage {
		lines = append(lines, u[0]+": "+u[1])
	}
	return strings.Join(lines, ";\n")
}

// takesOneStory makes c a command of one scenario, like run and load: it
// takes the scenario's name, completes it, and notes which flags were
// given before run.
func takesOneStory(c *cobra.Command, s Streams, scenario *string, set *func(string) bool, run func(context.Context, Streams) error) {
	c.Args = exactArgs(1, "one scenario ("+strings.Join(scenarios.Names(), ", ")+")")
	c.ValidArgsFunction = completeScenarios
	c.RunE = func(c *cobra.Command, args []string) error {
		*scenario, *set = args[0], c.Flags().Changed
		return run(c.Context(), s.of(c))
	}
}
