package main

import (
	"fmt"
	"net/http"
	"os"
	"strings"

	"github.com/racelab/racelab/scenarios"
	"github.com/racelab/racelab/targets"
	"github.com/racelab/racelab/targets/httpapi"
	"github.com/spf13/pflag"
)

// httpFlags are run's flags for http:// and https:// targets: how a burst
// is released, and how the stories map onto a service with its own API.
// They go to every http target of the run as targets.WithHTTP.
type httpFlags struct {
	Sync     string
	Calls    []string
	MapFile  string
	Headers  []string
	Insecure bool
}

func (h *httpFlags) register(f *pflag.FlagSet) {
	f.StringVar(&h.Sync, "sync", string(httpapi.SyncAuto),
		"how http targets release a burst: h2 (one packet ends every HTTP/2 stream),\n"+
			"lastbyte (HTTP/1.1, last bytes withheld), none, or auto (h2 if the server speaks it)")
	f.StringArrayVar(&h.Calls, "http-call", nil,
		"map a call onto the service's own API, repeatable (calls: hit get download quota checkout item):\n"+
			"'CALL=[METHOD] PATH [yes=CODES] [no=CODES] [field=NAME] [key=NAME] [ok=NAME]',\n"+
			"e.g. 'hit=PUT /api/posts/{slug}/views field=data.total'")
	f.StringVar(&h.MapFile, "http-map", "", "JSON file of the same mappings: {\"hit\": {\"path\": \"/v/{slug}\", \"field\": \"total\"}, ...}")
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
	cfg.Sync = mode
	cfg.Insecure = h.Insecure
	mapping := httpapi.Contract()
	if h.MapFile != "" {
		f, err := os.Open(h.MapFile)
		if err != nil {
			return cfg, fmt.Errorf("--http-map: %w", err)
		}
		m, err := httpapi.LoadMapping(f)
		f.Close()
		if err != nil {
			return cfg, fmt.Errorf("--http-map %s: %w", h.MapFile, err)
		}
		mapping = mapping.Merge(m)
	}
	for _, s := range h.Calls {
		call, route, err := httpapi.ParseCall(s)
		if err != nil {
			return cfg, fmt.Errorf("--http-call %w", err)
		}
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

func (h *httpFlags) apply(p *scenarios.Plan) error {
	cfg, err := h.config()
	if err != nil {
		return usageError{err}
	}
	p.Options = append(p.Options, targets.WithHTTP(cfg))
	return nil
}
