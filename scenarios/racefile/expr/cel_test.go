package expr_test

import (
	"strings"
	"testing"

	"github.com/google/cel-go/cel"

	"github.com/racelab/racelab/scenarios/racefile/expr"
)

func env(t *testing.T) *cel.Env {
	t.Helper()
	e, err := cel.NewEnv(append(expr.Libraries(),
		cel.Variable("allowed", cel.IntType),
		cel.Variable("account", cel.DynType),
		cel.Variable("answers", cel.ListType(cel.DynType)))...)
	if err != nil {
		t.Fatal(err)
	}
	return e
}

// TestCompileWantsItsType: an expression of the wrong type is refused
// when compiled, in words a file's author reads, with where it went wrong.
func TestCompileWantsItsType(t *testing.T) {
	e := env(t)
	for _, tt := range []struct {
		src  string
		want *cel.Type
		err  string
		col  int
	}{
		{"allowed <= 1", cel.BoolType, "", 0},
		{"allowed + 1", cel.BoolType, `"allowed + 1" is int; want CEL that is true or false`, 0},
		{"double(allowed) * 1.5", expr.Number, "", 0},
		{"allowed", expr.Number, "", 0},
		{"'x'", expr.Number, `"'x'" is string; want CEL that makes a number`, 0},
		{"allowed <= nope", cel.BoolType, "undeclared reference to 'nope'", 11},
	} {
		_, _, col, err := expr.Compile(e, tt.src, tt.want)
		switch {
		case tt.err == "" && err != nil:
			t.Errorf("Compile(%q) = %v; want no error", tt.src, err)
		case tt.err != "" && (err == nil || !strings.Contains(err.Error(), tt.err)):
			t.Errorf("Compile(%q) = %v; want %q", tt.src, err, tt.err)
		case tt.err != "" && col != tt.col:
			t.Errorf("Compile(%q) placed the error at column %d; want %d", tt.src, col, tt.col)
		}
	}
}

// TestValuesAndReads: a failed rule shows what it read, fields included,
// and not the variables of its own macros.
func TestValuesAndReads(t *testing.T) {
	x, _, _, err := expr.Compile(env(t), "allowed <= 1 && account.discounts == 1 && answers.all(a, a.status == 200)", cel.BoolType)
	if err != nil {
		t.Fatal(err)
	}
	vars := map[string]any{"allowed": int64(3), "account": map[string]any{"discounts": int64(2)}, "answers": []any{}}
	if got, want := x.Values(vars), "allowed = 3, account.discounts = 2"; got != want {
		t.Errorf("Values = %q; want %q", got, want)
	}
	if !x.ReadsAnswers() {
		t.Error("ReadsAnswers = false for a rule over answers.all")
	}
	if ok, err := x.Bool(vars); ok || err != nil {
		t.Errorf("Bool = %v, %v; want false, nil", ok, err)
	}
}

// TestBindRefusesWhatSQLCannotBind: a SQL argument is a number, text, a
// boolean or null; a list is refused, not sent.
func TestBindRefusesWhatSQLCannotBind(t *testing.T) {
	e := env(t)
	for src, want := range map[string]any{"allowed + 1": int64(4), "'a' + 'b'": "ab", "null": nil} {
		x, _, _, err := expr.Compile(e, src, cel.DynType)
		if err != nil {
			t.Fatal(err)
		}
		if got, err := x.Bind(map[string]any{"allowed": int64(3)}); err != nil || got != want {
			t.Errorf("Bind(%s) = %v, %v; want %v", src, got, err, want)
		}
	}
	x, _, _, _ := expr.Compile(e, "[1, 2]", cel.DynType)
	if _, err := x.Bind(nil); err == nil || !strings.Contains(err.Error(), "want a number, text, true, false or null") {
		t.Errorf("Bind([1, 2]) = %v; want a refusal", err)
	}
}

// TestDecodeJSONNumbers: whole numbers decode as int64, so that a rule
// compares them as it reads; trailing data is not one value.
func TestDecodeJSONNumbers(t *testing.T) {
	v, ok := expr.DecodeJSON([]byte(`{"n": 3, "f": 1.5, "l": [2]}`))
	m, _ := v.(map[string]any)
	if !ok || m["n"] != int64(3) || m["f"] != 1.5 || m["l"].([]any)[0] != int64(2) {
		t.Errorf("DecodeJSON = %#v, %v", v, ok)
	}
	if _, ok := expr.DecodeJSON([]byte(`1 2`)); ok {
		t.Error("DecodeJSON accepted two values")
	}
}
