package targets

import (
	"errors"
	"strings"
	"testing"
	"time"
	"unicode/utf8"
)

// FuzzParse feeds any string to Parse, Lookup and bind, the whole of what
// racelab does with a -t value before opening a store. None may panic;
// every error must be a usage error (ErrBadSpec, or an *UnknownNameError
// from Lookup) in one line; a parsed spec's Name must parse again to the
// same Name and never show a URL's password; and Parse and Lookup must
// agree. The seed corpus is in testdata/fuzz/FuzzParse; CI runs it for a
// few seconds with go test -run '^$' -fuzz '^FuzzParse$' -fuzztime 10s
// ./targets/.
func FuzzParse(f *testing.F) {
	for _, seed := range []string{
		"kv", " sqlite:naive ", "kv?latency=5ms&locations=3", "actor:await-fetch?fetch-latency=2ms",
		"kv?locations=3&locations=4", "kv?x=%zz", "kv?", "kv?=3", "kv?a", "kv?a=1&&b=2", "sqlite:", ":naive", "a:b:c",
		"http://127.0.0.1:8787", "HTTP://127.0.0.1:8787", "https://u:secret@example.com:8443/api?x=1&x=2",
		"http://127.0.0.1:99999", "http://[::1]:8787", "http://[fe80::1%25en0]:8787", "http://:80", "http://h:",
		"http://a<b>:1", "http://h/#frag", "ftp://h", "redis?think-time=NaN", "kv?jitter=NaN", "sqlite:naive?think-time=-1s",
		"SQLITE:NAIVE", "postgres:serializable", "kv?path=a%26b", "http://%41:80", "http://h/a%2Fb",
		"sqlite:.0", "sqlite:/tmp/x.db?isolation=serializable", "postgres://u:pw@127.0.0.1:5432/db?isolation=read-committed",
		"mysql://u@127.0.0.1/db?isolation=bogus",
	} {
		f.Add(seed)
	}
	f.Fuzz(func(t *testing.T, raw string) {
		spec, err := Parse(raw)
		if err != nil {
			if !errors.Is(err, ErrBadSpec) {
				t.Fatalf("Parse(%q) = %v, not ErrBadSpec", raw, err)
			}
			oneLine(t, raw, err)
			if _, _, lerr := Lookup(raw); !errors.Is(lerr, ErrBadSpec) {
				t.Fatalf("Parse(%q) refused it but Lookup says %v", raw, lerr)
			}
			return
		}
		name := spec.Name()
		again, err := Parse(name)
		if err != nil {
			t.Fatalf("Parse(%q).Name() = %q, which Parse refuses: %v", raw, name, err)
		}
		if again.Name() != name || again.Store != spec.Store || again.Strategy != spec.Strategy {
			t.Fatalf("Parse(%q).Name() = %q, which parses to %q (store %q strategy %q), want %q (store %q strategy %q)",
				raw, name, again.Name(), again.Store, again.Strategy, name, spec.Store, spec.Strategy)
		}
		if spec.URL != nil {
			if _, ok := spec.URL.User.Password(); ok && !strings.Contains(name, ":…@") {
				t.Fatalf("Parse(%q).Name() = %q shows the password", raw, name)
			}
			if !ByURL(spec.Store) {
				t.Fatalf("Parse(%q): URL with store %q, which is not named by URL", raw, spec.Store)
			}
		}
		for k, vs := range spec.Params {
			if k == "" || len(vs) != 1 || vs[0] == "" {
				t.Fatalf("Parse(%q): parameter %q = %q, want one non-empty value", raw, k, vs)
			}
		}

		_, e, err := Lookup(raw)
		var unknown *UnknownNameError
		switch {
		case errors.As(err, &unknown):
			oneLine(t, raw, err)
		case err != nil:
			t.Fatalf("Lookup(%q) = %v, want nil or *UnknownNameError after Parse accepted it", raw, err)
		case spec.URL == nil && e.Name != name:
			t.Fatalf("Lookup(%q) found %q, want %q", raw, e.Name, name)
		}

		// Every kind of parameter, under the names the spec uses, so that
		// every value reaches a parser.
		var (
			d  time.Duration
			n  int
			x  float64
			b  bool
			s  string
			ps []param
		)
		for k := range spec.Params {
			switch len(k) % 5 {
			case 0:
				ps = append(ps, durationParam(k, &d))
			case 1:
				ps = append(ps, intParam(k, &n))
			case 2:
				ps = append(ps, floatParam(k, &x))
			case 3:
				ps = append(ps, boolParam(k, &b))
			default:
				ps = append(ps, stringParam(k, &s))
			}
		}
		if err := bind(spec, ps...); err != nil {
			if !errors.Is(err, ErrBadSpec) {
				t.Fatalf("bind(%q) = %v, not ErrBadSpec", raw, err)
			}
			oneLine(t, raw, err)
		} else if d < 0 || n < 0 || !(x >= 0 && x <= 1) {
			t.Fatalf("bind(%q) accepted duration %v, count %d, fraction %v", raw, d, n, x)
		}
		if err := bind(spec); err != nil && len(spec.Params) == 0 {
			t.Fatalf("bind(%q) with no parameters = %v", raw, err)
		}
	})
}

// oneLine fails t unless err is printable as the one stderr line racelab
// gives it: no line break and valid UTF-8 whatever the input held.
func oneLine(t *testing.T, raw string, err error) {
	t.Helper()
	msg := err.Error()
	if strings.ContainsAny(msg, "\n\r") || !utf8.ValidString(msg) {
		t.Fatalf("error for %q is not one printable line: %q", raw, msg)
	}
}
