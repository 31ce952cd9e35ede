package targets

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"
)

func TestParse(t *testing.T) {
	tests := []struct {
		raw                   string
		store, strategy, name string
		params                string
		wantErr               bool
	}{
		{raw: "kv", store: "kv", name: "kv"},
		{raw: " sqlite:naive ", store: "sqlite", strategy: "naive", name: "sqlite:naive"},
		{raw: "kv?latency=5ms&locations=3", store: "kv", name: "kv", params: "latency=5ms&locations=3"},
		{raw: "actor:await-fetch?fetch-latency=2ms", store: "actor", strategy: "await-fetch", name: "actor:await-fetch", params: "fetch-latency=2ms"},
		{raw: "http://127.0.0.1:8787", store: "http", name: "http://127.0.0.1:8787"},
		{raw: "", wantErr: true},
		{raw: ":naive", wantErr: true},
		{raw: "a:b:c", wantErr: true},
		{raw: "kv?x=%zz", wantErr: true},
		{raw: "http://", wantErr: true},
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

// TestCatalogAbilities opens every embedded target and checks that it
// implements exactly the story interfaces its entry declares.
func TestCatalogAbilities(t *testing.T) {
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
			if got := AbilitiesOf(tg.Store); got != e.Abilities {
				t.Errorf("abilities %b, entry declares %b", got, e.Abilities)
			}
		})
	}
}
