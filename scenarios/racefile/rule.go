package racefile

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"slices"
	"strings"
	"sync"

	"github.com/google/cel-go/cel"
	"github.com/google/cel-go/common/ast"
	"github.com/google/cel-go/common/types"
	"github.com/google/cel-go/ext"
	"gopkg.in/yaml.v3"
)

// costLimit bounds one evaluation of an expression: a rule over a
// thousand answers runs in microseconds, and a crafted one must not hold
// a run (or `racelab verify`) for long.
const costLimit = 10_000_000

// Expr is one CEL expression of a race file, compiled and type-checked
// when the file is loaded.
type Expr struct {
	// Src is the expression as written.
	Src string
	prg cel.Program
	// parts are the variables and fields it reads (account.discounts),
	// each compiled on its own, to show their values when it fails.
	parts []readPart
	// answers says it reads the answers list, one answer at a time: a
	// trial with errored requests is then weighed answer by answer.
	answers bool
}

type readPart struct {
	name string
	prg  cel.Program
}

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

// libraries are cel-go's standard extensions, for every expression.
func libraries() []cel.EnvOption {
	return []cel.EnvOption{ext.Strings(), ext.Lists(), ext.Math(), ext.Sets(), ext.Encoders()}
}

// answerEnv is the environment of allowed: and refused:, over one answer.
var answerEnv = sync.OnceValues(func() (*cel.Env, error) {
	return cel.NewEnv(append(libraries(),
		cel.Variable("status", cel.IntType),
		cel.Variable("body", cel.DynType),
		cel.Variable("headers", cel.MapType(cel.StringType, cel.StringType)))...)
})

// ruleEnv is the environment of the rules: ruleVars and every as: name.
func ruleEnv(names []string) (*cel.Env, error) {
	opts := append(libraries(), ruleVars...)
	for _, n := range names {
		opts = append(opts, cel.Variable(n, cel.DynType))
	}
	return cel.NewEnv(opts...)
}

// expr compiles the expression under key, or def when the file gives
// none ("" for none at all), in env, wanting type want (or dyn, checked
// when it runs).
func (p *parser) expr(fields map[string]*yaml.Node, key string, env func() (*cel.Env, error), want *cel.Type, def string) (*Expr, error) {
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
	x, line, col, err := compile(e, src, want)
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

// compile compiles src; on error, line and col (from 1 and from 0) place
// the first issue within src.
func compile(env *cel.Env, src string, want *cel.Type) (x *Expr, line, col int, err error) {
	checked, iss := env.Compile(src)
	if iss != nil && iss.Err() != nil {
		e := iss.Errors()[0]
		return nil, e.Location.Line(), e.Location.Column(), fmt.Errorf("%s; want CEL %s", e.Message, typeWords(want))
	}
	out := checked.OutputType()
	// want dyn takes any type (a sql: argument).
	if !want.IsExactType(cel.DynType) && !out.IsExactType(want) && !out.IsExactType(cel.DynType) && !(want == numberType && isNumber(out)) {
		return nil, 1, 0, fmt.Errorf("%q is %s; want CEL %s", src, cel.FormatCELType(out), typeWords(want))
	}
	prg, err := env.Program(checked, cel.CostLimit(costLimit))
	if err != nil {
		return nil, 1, 0, err
	}
	x = &Expr{Src: src, prg: prg, answers: readsAnswers(checked.NativeRep())}
	declared := map[string]bool{}
	for _, v := range env.Variables() {
		declared[v.Name()] = true
	}
	for _, name := range readsOf(checked.NativeRep(), declared) {
		sub, iss := env.Compile(name)
		if iss != nil && iss.Err() != nil {
			continue
		}
		if prg, err := env.Program(sub, cel.CostLimit(costLimit)); err == nil {
			x.parts = append(x.parts, readPart{name, prg})
		}
	}
	return x, 0, 0, nil
}

func typeWords(t *cel.Type) string {
	switch {
	case t.IsExactType(cel.BoolType):
		return "that is true or false"
	case t.IsExactType(cel.StringType):
		return "that makes a string"
	case t == numberType:
		return "that makes a number"
	}
	return "that makes a whole number"
}

// readsOf lists what an expression reads, in order and once each: the
// declared variables and the chains of fields below them (account.balance),
// but not the variables of its own macros (a in answers.all(a, …)) nor the
// whole answers list.
func readsOf(a *ast.AST, declared map[string]bool) []string {
	var out []string
	var walk func(e ast.NavigableExpr)
	walk = func(e ast.NavigableExpr) {
		if name, ok := chain(e); ok {
			if parent, has := e.Parent(); !has || parent.Kind() != ast.SelectKind {
				root, _, _ := strings.Cut(name, ".")
				if declared[root] && name != "answers" && !slices.Contains(out, name) {
					out = append(out, name)
				}
			}
		}
		for _, c := range e.Children() {
			walk(c)
		}
	}
	walk(ast.NavigateAST(a))
	return out
}

// chain is a.b.c for an identifier with fields below it.
func chain(e ast.NavigableExpr) (string, bool) {
	switch e.Kind() {
	case ast.IdentKind:
		return e.AsIdent(), true
	case ast.SelectKind:
		s := e.AsSelect()
		if s.IsTestOnly() {
			return "", false
		}
		if base, ok := chain(e.Children()[0]); ok {
			return base + "." + s.FieldName(), true
		}
	}
	return "", false
}

// eval runs the expression on vars.
func (x *Expr) eval(vars map[string]any) (any, error) {
	out, _, err := x.prg.Eval(vars)
	if err != nil {
		return nil, err
	}
	return out.Value(), nil
}

// Bool runs a condition; a result that is not true or false is an error.
func (x *Expr) Bool(vars map[string]any) (bool, error) {
	v, err := x.eval(vars)
	if err != nil {
		return false, err
	}
	b, ok := v.(bool)
	if !ok {
		return false, fmt.Errorf("%s is %s, not true or false", x.Src, jsonKind(v))
	}
	return b, nil
}

// Values says what the expression read, as "allowed = 10, account.discounts
// = 1"; a part that cannot be read says so.
func (x *Expr) Values(vars map[string]any) string {
	var out []string
	for _, p := range x.parts {
		v, _, err := p.prg.Eval(vars)
		if err != nil {
			out = append(out, p.name+" = ?")
			continue
		}
		out = append(out, p.name+" = "+celText(v.Value()))
	}
	return strings.Join(out, ", ")
}

// celText writes a value as JSON would, briefly.
func celText(v any) string {
	if s, ok := v.(string); ok {
		q, _ := json.Marshal(s)
		return string(q)
	}
	b, err := json.Marshal(nativeOf(v))
	if err != nil {
		return fmt.Sprint(v)
	}
	if len(b) > 80 {
		return string(b[:80]) + "…"
	}
	return string(b)
}

// nativeOf turns CEL's lists and maps back into Go's, for JSON.
func nativeOf(v any) any {
	switch x := v.(type) {
	case []any:
		out := make([]any, len(x))
		for i, e := range x {
			out[i] = nativeOf(e)
		}
		return out
	case map[string]any:
		return x
	case types.Null:
		return nil
	}
	return v
}

// decodeJSON reads one JSON value, numbers as int64 when whole and
// float64 otherwise, so that a rule compares them with whole numbers as
// it reads. ok is false when data is not exactly one JSON value.
func decodeJSON(data []byte) (any, bool) {
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil {
		return nil, false
	}
	if _, err := dec.Token(); err != io.EOF {
		return nil, false
	}
	return numbers(v), true
}

func numbers(v any) any {
	switch x := v.(type) {
	case json.Number:
		if i, err := x.Int64(); err == nil {
			return i
		}
		f, _ := x.Float64()
		return f
	case map[string]any:
		for k, e := range x {
			x[k] = numbers(e)
		}
	case []any:
		for i, e := range x {
			x[i] = numbers(e)
		}
	}
	return v
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
	f.Severity, err = p.expr(fields, "severity", env, numberType, "")
	return err
}
