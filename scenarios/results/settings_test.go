package results

import (
	"encoding/json"
	"reflect"
	"testing"
)

// Settings are written as the knobs' texts by name beside the race file,
// and read back the same; the typed settings of earlier results read back
// as the same knobs.
func TestSettingsJSON(t *testing.T) {
	s := Settings{Knobs: map[string]string{"limit": "5", "window": "1m0s"}, Race: &RaceFile{Path: "a.race.yaml", SHA256: "ab"}}
	b, err := json.Marshal(s)
	if err != nil {
		t.Fatal(err)
	}
	if want := `{"limit":"5","race":{"path":"a.race.yaml","sha256":"ab"},"window":"1m0s"}`; string(b) != want {
		t.Errorf("written %s; want %s", b, want)
	}
	var back Settings
	if err := json.Unmarshal(b, &back); err != nil || !reflect.DeepEqual(back, s) {
		t.Errorf("read back %+v (%v); want %+v", back, err, s)
	}
	for legacy, want := range map[string]map[string]string{
		`{"limit":5,"window_ns":60000000000,"tolerance":1}`:        {"limit": "5", "window": "1m0s", "tolerance": "1"},
		`{"rate":0.1,"arrivals":"poisson","bound_ns":45000000000}`: {"rate": "0.1", "arrivals": "poisson", "bound": "45s"},
		`{"stock":3}`: {"stock": "3"},
		`{"rate":20,"rollover":true,"tolerance":0}`: {"rate": "20", "rollover": "true", "tolerance": "0"},
		`{"for_ns":180000000000,"via":"extension"}`: {"for": "3m0s", "via": "extension"},
	} {
		var s Settings
		if err := json.Unmarshal([]byte(legacy), &s); err != nil || !reflect.DeepEqual(s.Knobs, want) || s.Race != nil {
			t.Errorf("%s: read %+v (%v); want knobs %v", legacy, s, err, want)
		}
	}
	for _, bad := range []string{`{"window_ns":1.5}`, `{"limit":{}}`, `{"limit":[5]}`, `[]`} {
		var s Settings
		if err := json.Unmarshal([]byte(bad), &s); err == nil {
			t.Errorf("%s: read %+v; want an error", bad, s)
		}
	}
}
