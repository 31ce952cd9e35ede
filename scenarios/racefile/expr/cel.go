package expr

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"slices"
	"strings"

	"github.com/google/cel-go/cel"
	"github.com/google/cel-go/common/ast"
	"github.com/google/cel-go/common/types"
	"github.com/google/cel-go/common/types/ref"
	"github.com/google/cel-go/ext"
)

// costLimit bounds one evaluation of an expression: a rule over a
// thousand answers runs in microseconds, and a crafted one must not hold
// a run (or `racelab verify`) for long.
const costLimit = 10_000_000

// CEL is one CEL expression of a race file, compiled and type-checked
// when the file is loaded.
type CEL struct {
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

// Number is what Compile is asked for when any CEL number will do,
// whole or not (int, uint and double are taken for it).
var Number = cel.DoubleType

// Libraries are cel-go's standard extensions, for every expression.
func Libraries() []cel.EnvOption {
	return []cel.EnvOption{ext.Strings(), ext.Lists(), ext.Math(), ext.Sets(), ext.Encoders()}
}

// Compile compiles src in env, wanting type want (dyn takes any type, and
// is checked when it runs). On error, line and col (from 1 and from 0)
// place the first issue within src.
func Compile(env *cel.Env, src string, want *cel.Type) (x *CEL, line, col int, err error) {
	checked, iss := env.Compile(src)
	if iss != nil && iss.Err() != nil {
		e := iss.Errors()[0]
		return nil, e.Location.Line(), e.Location.Column(), fmt.Errorf("%s; want CEL %s", e.Message, TypeWords(want))
	}
	out := checked.OutputType()
	if !want.IsExactType(cel.DynType) && !out.IsExactType(want) && !out.IsExactType(cel.DynType) && !(want == Number && isNumber(out)) {
		return nil, 1, 0, fmt.Errorf("%q is %s; want CEL %s", src, cel.FormatCELType(out), TypeWords(want))
	}
	prg, err := env.Program(checked, cel.CostLimit(costLimit))
	if err != nil {
		return nil, 1, 0, err
	}
	x = &CEL{Src: src, prg: prg, answers: readsAnswers(checked.NativeRep())}
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

// TypeWords says what an expression of type t makes, as Compile's errors
// end: "that is true or false".
func TypeWords(t *cel.Type) string {
	switch {
	case t.IsExactType(cel.BoolType):
		return "that is true or false"
	case t.IsExactType(cel.StringType):
		return "that makes a string"
	case t == Number:
		return "that makes a number"
	}
	return "that makes a whole number"
}

func isNumber(t *cel.Type) bool {
	return t.IsExactType(cel.IntType) || t.IsExactType(cel.UintType) || t.IsExactType(cel.DoubleType)
}

// readsAnswers says whether an expression reads the answers list.
func readsAnswers(a *ast.AST) bool {
	var walk func(e ast.NavigableExpr) bool
	walk = func(e ast.NavigableExpr) bool {
		if e.Kind() == ast.IdentKind && e.AsIdent() == "answers" {
			return true
		}
		for _, c := range e.Children() {
			if walk(c) {
				return true
			}
		}
		return false
	}
	return walk(ast.NavigateAST(a))
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

// ReadsAnswers says the expression reads the answers list, one answer at
// a time.
func (x *CEL) ReadsAnswers() bool { return x.answers }

// Reads lists the variables and fields the expression reads, as Values
// shows them.
func (x *CEL) Reads() []string {
	out := make([]string, len(x.parts))
	for i, p := range x.parts {
		out[i] = p.name
	}
	return out
}

// Eval runs the expression on vars.
func (x *CEL) Eval(vars map[string]any) (any, error) {
	out, _, err := x.prg.Eval(vars)
	if err != nil {
		return nil, err
	}
	return out.Value(), nil
}

// Bool runs a condition; a result that is not true or false is an error.
func (x *CEL) Bool(vars map[string]any) (bool, error) {
	v, err := x.Eval(vars)
	if err != nil {
		return false, err
	}
	b, ok := v.(bool)
	if !ok {
		return false, fmt.Errorf("%s is %s, not true or false", x.Src, JSONKind(v))
	}
	return b, nil
}

// Bind runs an argument of a SQL statement: a value SQL can bind; a list
// or a map is an error.
func (x *CEL) Bind(vars map[string]any) (any, error) {
	out, _, err := x.prg.Eval(vars)
	if err != nil {
		return nil, err
	}
	return bindable(out)
}

func bindable(v ref.Val) (any, error) {
	switch v.Type() {
	case types.NullType:
		return nil, nil
	case types.IntType, types.UintType, types.DoubleType, types.StringType, types.BoolType, types.BytesType:
		return v.Value(), nil
	}
	return nil, fmt.Errorf("is a %s; want a number, text, true, false or null to bind", v.Type().TypeName())
}

// Values says what the expression read, as "allowed = 10, account.discounts
// = 1"; a part that cannot be read says so.
func (x *CEL) Values(vars map[string]any) string {
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
	b, err := json.Marshal(Native(v))
	if err != nil {
		return fmt.Sprint(v)
	}
	if len(b) > 80 {
		return string(b[:80]) + "…"
	}
	return string(b)
}

// Native turns CEL's lists and maps back into Go's, for JSON.
func Native(v any) any {
	switch x := v.(type) {
	case []any:
		out := make([]any, len(x))
		for i, e := range x {
			out[i] = Native(e)
		}
		return out
	case map[string]any:
		return x
	case types.Null:
		return nil
	}
	return v
}

// DecodeJSON reads one JSON value, numbers as int64 when whole and
// float64 otherwise, so that a rule compares them with whole numbers as
// it reads. ok is false when data is not exactly one JSON value.
func DecodeJSON(data []byte) (any, bool) {
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
