package report

import (
	"bytes"
	"errors"
	"reflect"
	"strings"
	"testing"

	"github.com/racelab/racelab/scenarios"
)

// TestReadJSONRoundTrip reads back what RenderAll writes: one result, or a
// stream of several.
func TestReadJSONRoundTrip(t *testing.T) {
	want := []*scenarios.Result{tenHitsOneView(), evidence(), fiveCheckoutsErrors()}
	var b bytes.Buffer
	if err := RenderAll(&b, want, JSON, Options{}); err != nil {
		t.Fatal(err)
	}
	got, err := ReadJSON(&b)
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("read back %d results, not the %d written", len(got), len(want))
	}
}

func TestReadJSONRefuses(t *testing.T) {
	for _, tc := range []struct {
		name, in, want string
	}{
		{"empty", "", "not a racelab result: no JSON in it"},
		{"bad JSON", "{\n\"schema\": \"racelab/result/v1\",\n\"targets\": [,]\n}", "not a racelab result: bad JSON on line 3: invalid character ','"},
		{"no schema", `{"scenario": "five-checkouts"}`, `not a racelab result: document 1 has no "schema" field`},
		{"not an object", `[1, 2]`, `not a racelab result: document 1 has no "schema" field`},
		{"other schema", `{"schema": "racelab/result/v2"}`, `not a racelab result: document 1 has schema "racelab/result/v2"; this racelab reads "racelab/result/v1"`},
		{"second bad", `{"schema": "racelab/result/v1"} {"schema": 7}`, `not a racelab result: document 2 has no "schema" field`},
		{"wrong type", `{"schema": "racelab/result/v1", "requests": "ten"}`, "not a racelab result: document 1: json: cannot unmarshal string"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := ReadJSON(strings.NewReader(tc.in))
			if err == nil || !strings.HasPrefix(err.Error(), tc.want) || !errors.Is(err, ErrNotResult) {
				t.Errorf("ReadJSON error = %v, want one starting %q and wrapping ErrNotResult", err, tc.want)
			}
		})
	}
}

// TestRenderAllTable checks that several results in the table and
// markdown formats are one report after the other.
func TestRenderAllTable(t *testing.T) {
	for _, f := range []Format{Table, Markdown} {
		var all bytes.Buffer
		if err := RenderAll(&all, []*scenarios.Result{tenHitsOneView(), raceNotShown()}, f, Options{}); err != nil {
			t.Fatal(err)
		}
		want := string(render(t, tenHitsOneView(), f)) + "\n" + string(render(t, raceNotShown(), f))
		if all.String() != want {
			t.Errorf("%s: RenderAll is not the reports one after the other", f)
		}
	}
	if err := RenderAll(&bytes.Buffer{}, nil, Table, Options{}); err == nil {
		t.Error("RenderAll of nothing succeeded")
	}
}
