package targets

import (
	"fmt"
	"net/netip"
	"net/url"
	"strconv"
	"strings"

	"github.com/racelab/racelab/targets/internal/server"
)

// Spec is a parsed target spec: STORE[:STRATEGY][?PARAMS], or a URL.
type Spec struct {
	// Raw is the spec as given, without surrounding spaces.
	Raw string
	// Store is the store's name ("kv", "sqlite"), or the URL scheme, in
	// lower case, for an HTTP target.
	Store string
	// Strategy is the named strategy ("naive"), empty for the default one.
	Strategy string
	// Params holds the store's settings from the query part, one value per
	// name: Parse refuses a name given twice or without a value.
	Params url.Values
	// URL is set for http and https targets and for databases (postgres://…,
	// mysql://…, sqlite:PATH), with its scheme in lower case.
	URL *url.URL
}

// redacted is u with its password shown as server.Hidden, the mark every
// secret has in racelab's outputs (url.URL.Redacted writes "xxxxx").
// Only a password the URL really holds is hidden, in its own place: an '@'
// in the path or query ("http://h/@") is not a user part, and hiding from
// it on, as server.HidePassword does with a string it cannot parse, would
// cut the host out of the name.
func redacted(u *url.URL) string {
	if _, ok := u.User.Password(); !ok {
		return u.String()
	}
	v := *u
	v.User = url.User(u.User.Username())
	user := v.Scheme + "://" + v.User.String()
	return user + ":" + server.Hidden + strings.TrimPrefix(v.String(), user)
}

// Name is the spec without its parameters: "kv", "sqlite:naive", or the
// URL with its scheme in lower case and any password hidden, so that a
// report never shows one. Parse(s.Name()) names the same target.
func (s Spec) Name() string {
	if s.URL != nil {
		return redacted(s.URL)
	}
	if s.Strategy == "" {
		return s.Store
	}
	return s.Store + ":" + s.Strategy
}

// specForm is what a target spec looks like, for error messages.
const specForm = "want STORE[:STRATEGY][?PARAMS] such as kv, sqlite:naive or kv?locations=3, or an http(s) URL such as http://127.0.0.1:8787"

// Parse splits a target spec into its parts. It checks only the form of the
// spec; Lookup says whether racelab knows the target. Every error wraps
// ErrBadSpec.
//
// The form is strict, so that a typo is refused rather than read as
// something else: spaces around a spec are refused, not trimmed; a store
// or strategy name is made of letters, digits, '-', '_' and '.'; "sqlite:"
// (an empty strategy) is refused rather than taken for the default one; parameters are NAME=VALUE pairs joined by '&', each
// name given once, made of the same characters as a store's, and with a
// non-empty value ("kv?" alone has none). A URL's scheme is
// case-insensitive (HTTP:// is http://); its host must be a host name or an
// IP address, its port, if given, a number from 1 to 65535, and it may not
// have a fragment, which would never be sent. A URL's query, repeated names
// included, belongs to the service and is passed on untouched.
func Parse(raw string) (Spec, error) {
	s := strings.TrimSpace(raw)
	if s == "" {
		return Spec{}, badSpec("empty target; %s", specForm)
	}
	// Not trimmed silently: a space may be a quoting slip that cut or
	// joined words, and the user should see what racelab read.
	if s != raw {
		return Spec{}, badSpec("target %q has spaces around it; write %q", raw, s)
	}
	if database(s) {
		return parseDatabase(s)
	}
	if scheme, _, ok := strings.Cut(s, "://"); ok && !strings.ContainsAny(scheme, "?&=") {
		return parseURL(s, raw)
	}
	name, query, _ := strings.Cut(s, "?")
	store, strategy, hasStrategy := strings.Cut(name, ":")
	if strings.Contains(strategy, ":") {
		return Spec{}, badSpec("target %q has more than one colon; %s", raw, specForm)
	}
	// The characters first, so that every message below may show the
	// names as they are.
	for _, part := range []string{store, strategy} {
		if i := strings.IndexFunc(part, func(r rune) bool { return !nameRune(r) }); i >= 0 {
			return Spec{}, badSpec("target %q: %q cannot be part of a store or strategy name; %s", raw, []rune(part[i:])[0], specForm)
		}
	}
	switch {
	case store == "":
		return Spec{}, badSpec("target %q has no store before the colon; %s", raw, specForm)
	case hasStrategy && strategy == "":
		return Spec{}, badSpec("target %q has an empty strategy after the colon; write %s for the default strategy", raw, store)
	}
	params, err := parseParams(query)
	if err != nil {
		return Spec{}, badSpec("target %q: %v; want NAME=VALUE pairs joined by &, each name once, such as kv?locations=3&cache-ttl=30s", raw, err)
	}
	return Spec{Raw: s, Store: store, Strategy: strategy, Params: params}, nil
}

// nameRune says whether r may appear in a store or strategy name.
func nameRune(r rune) bool {
	return 'a' <= r && r <= 'z' || 'A' <= r && r <= 'Z' || '0' <= r && r <= '9' || r == '-' || r == '_' || r == '.'
}

// parseParams reads a spec's query. url.ParseQuery would keep every value
// of a repeated name and skip a pair with no name, so that
// kv?locations=3&locations=4 or kv?=3 would pass unnoticed; a store's
// settings take one value each, so both are refused here.
func parseParams(query string) (url.Values, error) {
	params := url.Values{}
	if query == "" {
		return params, nil
	}
	for pair := range strings.SplitSeq(query, "&") {
		k, v, hasValue := strings.Cut(pair, "=")
		name, err := url.QueryUnescape(k)
		if err != nil {
			return nil, fmt.Errorf("parameter name %q is badly escaped", k)
		}
		value, err := url.QueryUnescape(v)
		if err != nil {
			return nil, fmt.Errorf("parameter %q has a badly escaped value %q", name, v)
		}
		switch {
		case pair == "":
			return nil, fmt.Errorf("empty parameter (two & in a row, or & at an end)")
		case name == "":
			return nil, fmt.Errorf("parameter %q has no name", pair)
		case strings.IndexFunc(name, func(r rune) bool { return !nameRune(r) }) >= 0:
			return nil, fmt.Errorf("parameter name %q is not made of letters, digits, '-', '_' and '.'", name)
		case !hasValue || value == "":
			return nil, fmt.Errorf("parameter %q has no value", name)
		case params.Has(name):
			return nil, fmt.Errorf("parameter %q is given twice (%q and %q)", name, params.Get(name), value)
		}
		params.Set(name, value)
	}
	return params, nil
}

// parseURL parses an http or https target. The scheme is normalised to
// lower case, as URL schemes are case-insensitive. The host and port are
// checked here, so that a URL no connection could be made to is a usage
// error before anything runs rather than a failed target after.
func parseURL(s, raw string) (Spec, error) {
	const example = "want e.g. http://127.0.0.1:8787 or https://example.com/api"
	scheme, _, _ := strings.Cut(s, "://")
	scheme = strings.ToLower(scheme)
	if scheme != "http" && scheme != "https" {
		return Spec{}, badSpec("target %q: scheme %q is not supported; %s", server.HidePassword(raw), scheme, example)
	}
	// A saved result names its target with the password hidden (Name);
	// judging it again parses that name, so the mark parses as a password
	// (one that no server holds), as url.URL.Redacted's "xxxxx" did.
	u, err := url.Parse(strings.Replace(s, ":"+server.Hidden+"@", ":"+url.PathEscape(server.Hidden)+"@", 1))
	if err != nil {
		// url.Error repeats the whole URL, password included; its inner
		// error says what is wrong without it.
		reason := err
		if ue, ok := err.(*url.Error); ok {
			reason = ue.Err
		}
		return Spec{}, badSpec("target %q is not a valid URL: %v; %s", server.HidePassword(raw), reason, example)
	}
	u.Scheme = scheme // url.Parse lowers it already; said here so it is sure
	if err := checkHost(u); err != nil {
		return Spec{}, badSpec("target %q: %v; %s", redacted(u), err, example)
	}
	if u.Fragment != "" || strings.Contains(s, "#") {
		return Spec{}, badSpec("target %q: a fragment (#…) is never sent to the service; leave it out", redacted(u))
	}
	return Spec{Raw: s, Store: scheme, URL: u}, nil
}

// checkHost says what is wrong with u's host and port, if anything.
func checkHost(u *url.URL) error {
	host := u.Hostname()
	if host == "" {
		return fmt.Errorf("no host")
	}
	if port := u.Port(); port != "" {
		n, err := strconv.Atoi(port)
		if err != nil || n < 1 || n > 65535 {
			return fmt.Errorf("port %s is outside 1-65535", port)
		}
	} else if strings.HasSuffix(u.Host, ":") {
		return fmt.Errorf("empty port after the colon; give a port from 1 to 65535 or leave the colon out")
	}
	if strings.HasPrefix(u.Host, "[") {
		addr, err := netip.ParseAddr(host)
		if err != nil {
			return fmt.Errorf("%q is not an IPv6 address", host)
		}
		// A zone is an interface's name or number (fe80::1%eth0); any
		// other byte would not survive being written back into a URL.
		if zone := addr.Zone(); strings.ContainsFunc(zone, func(r rune) bool {
			return !('a' <= r && r <= 'z' || 'A' <= r && r <= 'Z' || '0' <= r && r <= '9' || r == '-' || r == '_' || r == '.')
		}) {
			return fmt.Errorf("zone %q of %q is not an interface name such as eth0", zone, host)
		}
		return nil
	}
	if _, err := netip.ParseAddr(host); err == nil {
		if strings.Contains(host, ":") {
			return fmt.Errorf("an IPv6 address must be in brackets, as in http://[::1]:8787")
		}
		return nil
	}
	if !hostName(host) {
		return fmt.Errorf("%q is not a host name or an IP address", host)
	}
	return nil
}

// hostName says whether h is a DNS host name: dot-separated labels of
// letters, digits, '-' and '_' (which some internal names use), each 1 to
// 63 bytes, at most 253 in all, with an optional final dot.
func hostName(h string) bool {
	h = strings.TrimSuffix(h, ".")
	if h == "" || len(h) > 253 {
		return false
	}
	for label := range strings.SplitSeq(h, ".") {
		if label == "" || len(label) > 63 {
			return false
		}
		for _, r := range label {
			if !('a' <= r && r <= 'z' || 'A' <= r && r <= 'Z' || '0' <= r && r <= '9' || r == '-' || r == '_') {
				return false
			}
		}
	}
	return true
}

// HasHTTP says whether specs may name an http target: one of them is an
// http(s) URL, or is malformed, in which case a plan's own check reports
// the spec rather than a flag for http targets given without one.
func HasHTTP(specs []string) bool {
	for _, raw := range specs {
		spec, err := Parse(raw)
		if err != nil || spec.URL != nil {
			return true
		}
	}
	return false
}
