package racefile

import (
	"fmt"
	"net/http"
	"slices"
	"strings"
	"sync"

	"github.com/google/cel-go/cel"
	"gopkg.in/yaml.v3"

	"github.com/racelab/racelab/scenarios/racefile/expr"
	"github.com/racelab/racelab/targets/httpapi"
)

// Capture takes one value from a setup or readback answer (capture:): a
// CEL expression over its status, headers, cookies and body, named as an
// as: name is, for the templates after it and the rules.
type Capture struct {
	Name string
	Expr *expr.CEL
	// Secret says the value never shows: the file marked it, or it is a
	// cookie, which holds a session.
	Secret bool
	Line   int
}

// captureEnv is the environment of capture:, over one answer: headers by
// their canonical names (Set-Cookie, Location), each its first value;
// cookies by name, from the answer's Set-Cookie headers.
var captureEnv = sync.OnceValues(func() (*cel.Env, error) {
	return cel.NewEnv(append(expr.Libraries(),
		cel.Variable("status", cel.IntType),
		cel.Variable("body", cel.DynType),
		cel.Variable("headers", cel.MapType(cel.StringType, cel.StringType)),
		cel.Variable("cookies", cel.MapType(cel.StringType, cel.StringType)))...)
})

// capture reads a step's capture:, a mapping from names to CEL, each
// either the expression or {cel: EXPR, secret: true}.
func (p *parser) capture(n *yaml.Node, s *Step) error {
	if n == nil {
		return nil
	}
	if n.Kind != yaml.MappingNode || len(n.Content) == 0 {
		return p.at(n, "capture: is %s; want a mapping from names to CEL, such as {sid: 'cookies[\"sid\"]'}", nodeKind(n))
	}
	for i := 0; i+1 < len(n.Content); i += 2 {
		k, v := n.Content[i], n.Content[i+1]
		if err := p.checkAs(k, k.Value); err != nil {
			return err
		}
		c := &Capture{Name: k.Value, Line: k.Line}
		src := v
		if v.Kind == yaml.MappingNode {
			fields, err := p.mapping(v, []string{"cel", "secret"}, "a capture")
			if err != nil {
				return err
			}
			if src = fields["cel"]; src == nil {
				return p.at(v, "capture %s: no cel: here; want {cel: EXPR, secret: true}", c.Name)
			}
			if c.Secret, err = p.flag(fields["secret"], "secret"); err != nil {
				return err
			}
		}
		want := cel.DynType
		if e, err := captureEnv(); err == nil && src.Kind == yaml.ScalarNode {
			if checked, iss := e.Compile(src.Value); iss == nil || iss.Err() == nil {
				want = checked.OutputType() // any type will do: checked by its use
			}
		}
		x, err := p.expr(map[string]*yaml.Node{c.Name: src}, c.Name, captureEnv, want, "")
		if e, ok := err.(*Error); ok {
			// Any type will do: say so rather than the fallback's.
			e.Msg = strings.Replace(e.Msg, "; want CEL "+expr.TypeWords(want), "; want CEL over status, headers, cookies and body", 1)
		}
		if err != nil {
			return err
		}
		c.Expr = x
		c.Secret = c.Secret || slices.Contains(x.Reads(), "cookies")
		s.Captures = append(s.Captures, c)
		if c.Secret {
			p.f.secretCaptures = append(p.f.secretCaptures, c.Name)
		}
	}
	return nil
}

// flag reads a true-or-false key; nil is false.
func (p *parser) flag(n *yaml.Node, key string) (bool, error) {
	if n == nil {
		return false, nil
	}
	var b bool
	if n.Kind != yaml.ScalarNode || n.Tag != "!!bool" || n.Decode(&b) != nil {
		return false, p.at(n, "%s: is %s; want true or false", key, nodeKind(n))
	}
	return b, nil
}

// take evaluates the step's captures on its answer. One that fails (no
// such cookie, a field missing) is an error naming the step's line.
func (f *File) take(s *Step, resp httpapi.Response) (map[string]any, error) {
	took := map[string]any{}
	if len(s.Captures) == 0 {
		return took, nil
	}
	headers, cookies := map[string]string{}, map[string]string{}
	for name, vs := range resp.Header {
		if len(vs) > 0 {
			headers[http.CanonicalHeaderKey(name)] = vs[0]
		}
	}
	for _, c := range (&http.Response{Header: resp.Header}).Cookies() {
		if _, twice := cookies[c.Name]; !twice {
			cookies[c.Name] = c.Value
		}
	}
	body, ok := expr.DecodeJSON(resp.Body)
	if !ok {
		body = string(resp.Body)
	}
	vars := map[string]any{"status": int64(resp.Status), "headers": headers, "cookies": cookies, "body": body}
	for _, c := range s.Captures {
		v, err := c.Expr.Eval(vars)
		if err == nil && expr.JSONKind(expr.Native(v)) == "null" {
			err = fmt.Errorf("is null")
		}
		if err != nil {
			return nil, fmt.Errorf("%s:%d: capture %s (%s) on the answer %d%s: %v", f.Path, c.Line, c.Name, c.Expr.Src, resp.Status, f.seenCookies(cookies), err)
		}
		took[c.Name] = expr.Native(v)
	}
	return took, nil
}

// seenCookies names the cookies an answer set, for a capture's error:
// their names, never their values.
func (f *File) seenCookies(cookies map[string]string) string {
	if len(cookies) == 0 {
		return " (it set no cookie)"
	}
	var names []string
	for name := range cookies {
		names = append(names, name)
	}
	slices.Sort(names)
	return fmt.Sprintf(" (it set the cookies %v)", names)
}
