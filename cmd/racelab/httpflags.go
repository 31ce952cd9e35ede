package main

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"time"

	"github.com/spf13/pflag"

	"github.com/racelab/racelab/internal/readfile"
	"github.com/racelab/racelab/internal/usage"
	"github.com/racelab/racelab/scenarios/engine"
	"github.com/racelab/racelab/targets"
	"github.com/racelab/racelab/targets/httpapi"
)

// Flags are the flags for http:// and https:// targets: how a burst is
// released, and how the stories map onto a service with its own API.
// They go to every http target of a command as targets.WithHTTP, with
// --timeout as the bound of each connection's warm-up.
type Flags struct {
	Sync     string
	Calls    []string
	MapFile  readfile.Named
	Headers  []string
	Insecure bool

	// set tells which of the flags the command line gave; nil (flags
	// filled in by a test) counts any value but the default as given.
	set *pflag.FlagSet
}

// names are the flags that mean something for http targets only.
var names = []string{"sync", "http-call", "http-map", "http-header", "http-insecure"}

func (h *Flags) Register(f *pflag.FlagSet) {
	h.set = f
	f.StringVar(&h.Sync, "sync", string(httpapi.SyncAuto),
		"how http targets release a burst: h2 (one packet ends every HTTP/2 stream),\n"+
			"lastbyte (HTTP/1.1, last bytes withheld), none, or auto (h2 if the server speaks it)")
	h.RegisterMapping(f)
}

// RegisterMapping defines the flags that say what the requests are, not
// how a burst is released: all a load needs.
func (h *Flags) RegisterMapping(f *pflag.FlagSet) {
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

// Config turns the flags into the client's settings; every error is the
// user's to fix.
func (h *Flags) Config() (httpapi.Config, error) {
	var cfg httpapi.Config
	mode, err := httpapi.ParseSync(h.Sync)
	if err != nil {
		return cfg, fmt.Errorf("--sync %q: want auto, h2, lastbyte or none", h.Sync)
	}
	cfg.Sync = mode
	cfg.Insecure = h.Insecure
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
		if cfg.Header == nil {
			cfg.Header = http.Header{}
		}
		cfg.Header.Add(name, value)
	}
	return cfg, nil
}

// Apply checks the flags against the plan's targets and hands them to its
// http targets. Given to a run without one, they would do nothing, which
// is worse than an error: the user meant something by them.
func (h *Flags) Apply(p *engine.Plan) error {
	specs := p.Targets
	if len(specs) == 0 && p.Scenario != nil {
		specs = p.Scenario.Lineup
	}
	return h.ApplyTo(specs, p.Timeout, &p.Options, nil)
}

// ApplyTo is Apply for any command: specs are its targets, timeout one
// request's limit; tweak, when set, adjusts the client's settings (a load
// sends whole requests, never staged bursts).
func (h *Flags) ApplyTo(specs []string, timeout time.Duration, opts *[]targets.Option, tweak func(*httpapi.Config)) error {
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
	cfg, err := h.Config()
	if errors.Is(err, context.Canceled) {
		return err // interrupted while reading --http-map: exit 130
	}
	if err != nil {
		return fmt.Errorf("%w%.0w", err, usage.Err)
	}
	// Warming a connection (connect, TLS, the HTTP/2 settings, a harmless
	// GET) is one request, so it has one request's time limit: a silent
	// service fails the run after --timeout, and a slow one gets all of it.
	cfg.DialTimeout = timeout
	if tweak != nil {
		tweak(&cfg)
	}
	*opts = append(*opts, targets.WithHTTP(cfg))
	return nil
}

// given lists the http flags the command line gave, as --name.
func (h *Flags) given() []string {
	var out []string
	for _, name := range names {
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
