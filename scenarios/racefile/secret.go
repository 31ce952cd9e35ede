package racefile

import (
	"encoding/json"
	"net/http"
	"slices"
	"strings"

	"github.com/racelab/racelab/scenarios/racefile/expr"
	"gopkg.in/yaml.v3"
)

// Hidden is what a secret shows as, wherever racelab writes it: the
// explanation, the tables, the JSON, JUnit and Markdown reports, errors.
const Hidden = "…"

// secretHeaders always carry a secret: a credential or a session.
var secretHeaders = []string{"Authorization", "Cookie", "Set-Cookie", "Proxy-Authorization"}

// SecretHeader says the header named name always carries a secret.
func SecretHeader(name string) bool {
	return slices.Contains(secretHeaders, http.CanonicalHeaderKey(name))
}

// header reads one header of a step: its value as text, or
// {value: TEXT, secret: true}. A value holding a line break would end
// the header early on the wire, so it is refused here, not when sent.
func (p *parser) header(k, v *yaml.Node, list string) (Header, error) {
	h := Header{Name: k.Value, Secret: SecretHeader(k.Value)}
	if v.Kind == yaml.MappingNode {
		fields, err := p.mapping(v, []string{"value", "secret"}, "a header")
		if err != nil {
			return h, err
		}
		secret, err := p.flag(fields["secret"], "secret")
		if err != nil {
			return h, err
		}
		h.Secret = h.Secret || secret
		if v = fields["value"]; v == nil {
			return h, p.at(k, "header %s: no value: here; want {value: TEXT, secret: true}", k.Value)
		}
	}
	if v.Kind != yaml.ScalarNode {
		return h, p.at(v, "header %s is %s; want its value as text", k.Value, nodeKind(v))
	}
	if i := strings.IndexAny(v.Value, "\r\n"); i >= 0 {
		return h, p.atOffset(v, i, "header %s holds a line break (CR or LF), which would end the header on the wire; want its value on one line", k.Value)
	}
	t, err := p.template(v, v.Value, list, 0)
	h.Value = t
	return h, err
}

// secrets lists the values a trial must never show: what its secret
// captures hold, and what its secret headers' holes read (an environment
// variable, a setup answer's token), each element of a list.
func (f *File) secrets(v *expr.Vars) []string {
	var out []string
	add := func(x any) {
		for _, s := range flatten(x) {
			if len(s) >= 4 && !slices.Contains(out, s) { // shorter values are words, not secrets
				out = append(out, s)
			}
		}
	}
	for _, c := range f.secretCaptures {
		add(v.Captures[c])
	}
	for _, s := range slices.Concat(f.Setup, f.Burst, f.Readback) {
		for _, h := range s.Headers {
			if !h.Secret {
				continue
			}
			for _, p := range h.Value.Holes() {
				if p.Index == "" || p.Index != "i" && p.Index != "n" {
					x, _ := v.Value(p)
					add(x)
					continue
				}
				list, _ := v.Captures[p.Ref[0]].([]any)
				for n := range list {
					w := *v
					w.I, w.Own, w.N = 0, n, n
					x, _ := w.Value(p)
					add(x)
				}
			}
		}
	}
	return out
}

// secretEnv lists the env: variables that are secret: those the file
// marks secret, and those a secret header reads (an Authorization
// header's token), which a result must not record either.
func (f *File) secretEnv() []string {
	out := slices.Clone(f.Secret)
	for _, s := range slices.Concat(f.Setup, f.Burst, f.Readback) {
		for _, h := range s.Headers {
			if !h.Secret {
				continue
			}
			for _, p := range h.Value.Holes() {
				if len(p.Ref) == 2 && p.Ref[0] == "env" && !slices.Contains(out, p.Ref[1]) {
					out = append(out, p.Ref[1])
				}
			}
		}
	}
	return out
}

// flatten lists the strings in x: x itself, or a list's elements.
func flatten(x any) []string {
	switch x := x.(type) {
	case string:
		return []string{x}
	case []any:
		var out []string
		for _, e := range x {
			out = append(out, flatten(e)...)
		}
		return out
	}
	return nil
}

// shown is a named value as a result keeps it: a secret capture's value,
// or each element of its list, Hidden.
func (f *File) shown(name string, v any) any {
	if f.ShowSecrets || !slices.Contains(f.secretCaptures, name) {
		return v
	}
	if list, ok := v.([]any); ok {
		out := make([]any, len(list))
		for i := range out {
			out[i] = Hidden
		}
		return out
	}
	return Hidden
}

// hide replaces each secret in text by Hidden.
func (f *File) hide(secrets []string, text string) string {
	if f.ShowSecrets {
		return text
	}
	for _, s := range secrets {
		text = strings.ReplaceAll(text, s, Hidden)
		if q, _ := json.Marshal(s); string(q) != `"`+s+`"` {
			text = strings.ReplaceAll(text, string(q[1:len(q)-1]), Hidden) // as a JSON body writes it
		}
	}
	return text
}

// hiddenError is an error whose message has its secrets hidden.
type hiddenError struct {
	msg string
	err error
}

func (e *hiddenError) Error() string { return e.msg }
func (e *hiddenError) Unwrap() error { return e.err }

// hideErr hides the secrets in err's message, keeping what it wraps.
func (f *File) hideErr(secrets []string, err error) error {
	if err == nil || len(secrets) == 0 || f.ShowSecrets {
		return err
	}
	return &hiddenError{f.hide(secrets, err.Error()), err}
}

// hideHeader is an answer's header as a trial keeps it: a secret one's
// value Hidden, the secrets in another's hidden.
func (f *File) hideHeader(secrets []string, name, value string) string {
	if SecretHeader(name) && !f.ShowSecrets {
		return Hidden
	}
	return f.hide(secrets, value)
}
