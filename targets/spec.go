package targets

import (
	"net/url"
	"strings"
)

// Spec is a parsed target spec: STORE[:STRATEGY][?PARAMS], or a URL.
type Spec struct {
	// Raw is the spec exactly as given.
	Raw string
	// Store is the store's name ("kv", "sqlite"), or the URL scheme for an
	// HTTP target.
	Store string
	// Strategy is the named strategy ("naive"), empty for the default one.
	Strategy string
	// Params holds the store's settings from the query part.
	Params url.Values
	// URL is set for http and https targets.
	URL *url.URL
}

// Name is the spec without its parameters: "kv", "sqlite:naive", or the URL.
func (s Spec) Name() string {
	if s.URL != nil {
		return s.Raw
	}
	if s.Strategy == "" {
		return s.Store
	}
	return s.Store + ":" + s.Strategy
}

// Parse splits a target spec into its parts. It checks only the form of the
// spec; Lookup says whether racelab knows the target.
func Parse(raw string) (Spec, error) {
	s := strings.TrimSpace(raw)
	if s == "" {
		return Spec{}, badSpec("empty target; want STORE[:STRATEGY][?PARAMS] or an http(s) URL")
	}
	if strings.HasPrefix(s, "http://") || strings.HasPrefix(s, "https://") {
		u, err := url.Parse(s)
		if err != nil || u.Host == "" {
			return Spec{}, badSpec("target %q is not a valid URL; want e.g. http://127.0.0.1:8787", raw)
		}
		return Spec{Raw: s, Store: u.Scheme, URL: u}, nil
	}
	name, query, _ := strings.Cut(s, "?")
	params, err := url.ParseQuery(query)
	if err != nil {
		return Spec{}, badSpec("parameters of target %q: %v; want NAME=VALUE pairs joined by &", raw, err)
	}
	store, strategy, _ := strings.Cut(name, ":")
	if store == "" || strings.ContainsAny(name, " /") || strings.Contains(strategy, ":") {
		return Spec{}, badSpec("malformed target %q; want STORE[:STRATEGY][?PARAMS] such as kv, sqlite:naive or kv?locations=3", raw)
	}
	return Spec{Raw: s, Store: store, Strategy: strategy, Params: params}, nil
}
