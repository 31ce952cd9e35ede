package racefile

import (
	"fmt"
	"strings"
	"sync"

	"github.com/google/cel-go/cel"
	"github.com/racelab/racelab/scenarios/racefile/expr"
	"gopkg.in/yaml.v3"
)

// The CEL types an expression may be asked for.
var (
	boolType   = cel.BoolType
	stringType = cel.StringType
	intType    = cel.IntType
)

// ruleVars are the variables every rule has, besides the answers named
// with as:.
var ruleVars = []cel.EnvOption{
	cel.Variable("allowed", cel.IntType),
	cel.Variable("refused", cel.IntType),
	cel.Variable("errors", cel.IntType),
	cel.Variable("requests", cel.IntType),
	cel.Variable("answers", cel.ListType(cel.DynType)),
}

// answerEnv is the environment of allowed: and refused:, over one answer.
var answerEnv = sync.OnceValues(func() (*cel.Env, error) {
	return cel.NewEnv(append(expr.Libraries(),
		cel.Variable("status", cel.IntType),
		cel.Variable("body", cel.DynType),
		cel.Variable("headers", cel.MapType(cel.StringType, cel.StringType)))...)
})

// ruleEnv is the environment of the rules: ruleVars and every as: name.
func ruleEnv(names []string) (*cel.Env, error) {
	opts := append(expr.Libraries(), ruleVars...)
	for _, n := range names {
		opts = append(opts, cel.Variable(n, cel.DynType))
	}
	return cel.NewEnv(opts...)
}

// expr compiles the expression under key, or def when the file gives
// none ("" for none at all), in env, wanting type want (or dyn, checked
// when it runs).
func (p *parser) expr(fields map[string]*yaml.Node, key string, env func() (*cel.Env, error), want *cel.Type, def string) (*expr.CEL, error) {
	n := fields[key]
	src := def
	if n != nil {
		if n.Kind != yaml.ScalarNode || strings.TrimSpace(n.Value) == "" {
			return nil, p.at(n, "%s: is %s; want %s", key, nodeKind(n), keyHelp[key])
		}
		src = n.Value
	}
	if src == "" {
		return nil, nil
	}
	e, err := env()
	if err != nil {
		return nil, fmt.Errorf("CEL environment: %w", err)
	}
	x, line, col, err := expr.Compile(e, src, want)
	if err != nil {
		if n == nil {
			return nil, fmt.Errorf("%s: the default %q: %w", key, src, err) // never: the defaults compile
		}
		at := &Error{File: p.path, Line: n.Line, Col: n.Column, Msg: fmt.Sprintf("%s: %v", key, err)}
		if line == 1 && n.Style&(yaml.LiteralStyle|yaml.FoldedStyle) == 0 {
			at.Col += col
			if n.Style&(yaml.DoubleQuotedStyle|yaml.SingleQuotedStyle) != 0 {
				at.Col++
			}
		} else if line > 1 {
			at.Line += line - 1
			if n.Style&(yaml.LiteralStyle|yaml.FoldedStyle) != 0 {
				at.Line++
			}
		}
		return nil, at
	}
	return x, nil
}

// rules compiles the file's rules, once its steps have named their
// answers.
func (p *parser) rules(fields map[string]*yaml.Node, root *yaml.Node) error {
	f := p.f
	env := func() (*cel.Env, error) { return ruleEnv(p.names) }
	if fields["rule"] == nil {
		return p.at(root, "no rule: here; want %s", keyHelp["rule"])
	}
	var err error
	if f.Rule, err = p.expr(fields, "rule", env, boolType, ""); err != nil {
		return err
	}
	if f.Soft, err = p.expr(fields, "soft", env, boolType, ""); err != nil {
		return err
	}
	if f.Damage, err = p.expr(fields, "damage", env, stringType, ""); err != nil {
		return err
	}
	if f.Counted, err = p.expr(fields, "counted", env, intType, ""); err != nil {
		return err
	}
	f.Severity, err = p.expr(fields, "severity", env, expr.Number, "")
	return err
}
