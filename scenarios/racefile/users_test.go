package racefile_test

import (
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"regexp"
	"strings"
	"sync"
	"testing"

	"github.com/racelab/racelab/scenarios/engine"
	"github.com/racelab/racelab/scenarios/racefile"
)

// TestParseManyUsers refuses what a file with repeat:, capture:, form:
// and key: gets wrong, each in one line at its place.
func TestParseManyUsers(t *testing.T) {
	const base = `race: r
setup:
  - request: POST /login
    form: {user: "u{{n}}"}
    repeat: requests
    capture: {sid: 'cookies["sid"]'}
burst:
  - request: POST /buy/{{key}}
    headers: {Cookie: "sid={{sid[i]}}"}
readback:
  - request: GET /stock/{{key}}
    as: stock
rule: stock.sold == allowed
`
	for _, tc := range []struct{ name, file, want string }{
		{"fine", base, ""},
		{"repeat zero", strings.Replace(base, "repeat: requests", "repeat: 0", 1), `f.yaml:5:13: repeat: "0"; want a whole number from 1 to 10000, or requests`},
		{"repeat too many", strings.Replace(base, "repeat: requests", "repeat: 10001", 1), `f.yaml:5:13: repeat: "10001"; want a whole number from 1 to 10000`},
		{"repeat at most", strings.Replace(base, "repeat: requests", "repeat: 10000", 1), ""},
		{"n without repeat", strings.Replace(base, "    repeat: requests\n", "", 1), "f.yaml:4:20: {{n}} in a step that does not repeat"},
		{"list without index", strings.Replace(base, "{{sid[i]}}", "{{sid}}", 1), "f.yaml:9:28: {{sid}} is a list, one value per repetition of its step; want {{sid[i]}}"},
		{"index on one value", strings.Replace(base, "/buy/{{key}}", "/buy/{{stockx[i]}}", 1), "f.yaml:8:24: {{stockx[i]}} names no variable"},
		{"index on a single capture", strings.Replace(strings.Replace(base, "    repeat: requests\n", "", 1), `"u{{n}}"`, "u", 1), "f.yaml:8:28: {{sid[i]}}: sid is one value, not a list"},
		{"i outside the burst", strings.Replace(base, "/stock/{{key}}", "/stock/{{sid[i]}}", 1), "f.yaml:11:25: {{sid[i]}} in a readback request; only a burst request has an index"},
		{"index on key", strings.Replace(base, "/buy/{{key}}", "/buy/{{key[i]}}", 1), "f.yaml:8:24: {{key[i]}}: key is not a list"},
		{"capture not cel", strings.Replace(base, `'cookies["sid"]'`, `'cookie["sid"]'`, 1), "f.yaml:6:21: sid: undeclared reference to 'cookie' (in container ''); want CEL over status, headers, cookies and body"},
		{"capture reserved", strings.Replace(base, "{sid:", "{allowed:", 1), `f.yaml:6:15: as: "allowed" is a name the rule already has`},
		{"capture twice", strings.Replace(base, "    as: stock\n", "    as: sid\n", 1), `f.yaml:12:9: as: "sid" names two answers`},
		{"capture marked secret", strings.Replace(base, `'cookies["sid"]'`, `{cel: 'cookies["sid"]', secret: true}`, 1), ""},
		{"capture secret not bool", strings.Replace(base, `'cookies["sid"]'`, `{cel: 'cookies["sid"]', secret: maybe}`, 1), `f.yaml:6:52: secret: is "maybe"; want true or false`},
		{"form and json", strings.Replace(base, `form: {user: "u{{n}}"}`, "form: {user: u}\n    json: {a: 1}", 1), "f.yaml:4:11: form: and json: given; want one body"},
		{"form not a mapping", strings.Replace(base, `form: {user: "u{{n}}"}`, "form: [a]", 1), "f.yaml:4:11: form: is a list; want a mapping of fields"},
		{"readback capture only", strings.Replace(base, "    as: stock\n", "    capture: {sold: body.sold}\n", 1) + "", "f.yaml:13:7: rule: undeclared reference to 'stock'"},
		{"json key template", strings.Replace(base, `headers: {Cookie: "sid={{sid[i]}}"}`, `json: {"{{sid[i]}}": 1, "{{nope}}": 2}`, 1), "f.yaml:9:29: {{nope}} names no variable"},
		{"key alnum", strings.Replace(base, "race: r\n", "race: r\nkey: {prefix: u, chars: alnum, length: 12}\n", 1), ""},
		{"key bad chars", strings.Replace(base, "race: r\n", "race: r\nkey: {chars: base64}\n", 1), `f.yaml:2:14: key: chars: "base64"; want alnum, hex, dashed`},
		{"key length short", strings.Replace(base, "race: r\n", "race: r\nkey: {chars: hex, length: 3}\n", 1), `f.yaml:2:27: key: length: "3"; want a whole number from 4 to 64`},
		{"key length dashed", strings.Replace(base, "race: r\n", "race: r\nkey: {prefix: a, length: 8}\n", 1), "f.yaml:2:26: key: length: a dashed key is as long as its numbers"},
		{"key alnum prefix dash", strings.Replace(base, "race: r\n", "race: r\nkey: {prefix: u-1, chars: alnum}\n", 1), `f.yaml:2:15: key: prefix: "u-1"; want letters and digits only`},
		{"header line break", strings.Replace(base, `{Cookie: "sid={{sid[i]}}"}`, `{X-A: "a\r\nX-Evil: 1"}`, 1), "f.yaml:9:22: header X-A holds a line break (CR or LF)"},
		{"header secret mapping", strings.Replace(base, `{Cookie: "sid={{sid[i]}}"}`, `{X-Api-Key: {value: "k", secret: true}, Cookie: "sid={{sid[i]}}"}`, 1), ""},
	} {
		t.Run(tc.name, func(t *testing.T) { parses(t, tc.file, tc.want) })
	}
}

// TestKeyChars makes keys of each alphabet: the prefix, then exactly
// length characters of it, different for two trials, the same when
// asked again.
func TestKeyChars(t *testing.T) {
	for _, tc := range []struct {
		spec racefile.KeySpec
		want *regexp.Regexp
	}{
		{racefile.KeySpec{Prefix: "u", Chars: racefile.KeyAlnum, Length: 12}, regexp.MustCompile(`^u[A-Za-z0-9]{12}$`)},
		{racefile.KeySpec{Prefix: "", Chars: racefile.KeyAlnum, Length: 4}, regexp.MustCompile(`^[A-Za-z0-9]{4}$`)},
		{racefile.KeySpec{Prefix: "id", Chars: racefile.KeyHex, Length: 64}, regexp.MustCompile(`^id[0-9a-f]{64}$`)},
		{racefile.KeySpec{Prefix: "race", Chars: racefile.KeyDashed}, regexp.MustCompile(`^race-run-0-1$`)},
	} {
		a, b := tc.spec.Of("race-run-0-1"), tc.spec.Of("race-run-0-2")
		if !tc.want.MatchString(a) {
			t.Errorf("%+v made %q; want %s", tc.spec, a, tc.want)
		}
		if a == b || a != tc.spec.Of("race-run-0-1") {
			t.Errorf("%+v: trial 1 %q, trial 2 %q, again %q; want two keys, each the same again", tc.spec, a, b, tc.spec.Of("race-run-0-1"))
		}
	}
}

// TestBodiesAndPaths sends, over a real socket, a form body, a JSON body
// whose key is a template, and a path hole holding a captured value with
// / ? # % and a space: the service must see each as it was meant, the
// path value in one segment, decoded once.
func TestBodiesAndPaths(t *testing.T) {
	const odd = "a/b?c#d%e f"
	var mu sync.Mutex
	var seen []string
	mux := http.NewServeMux()
	mux.HandleFunc("POST /login", func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		seen = append(seen, "login "+r.Header.Get("Content-Type")+" "+r.PostFormValue("user")+" "+r.PostFormValue("pass word"))
		mu.Unlock()
		w.Header().Set("Location", "/items/x")
		reply(w, 201, map[string]any{"name": odd})
	})
	mux.HandleFunc("POST /items/{name}/claim", func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		mu.Lock()
		seen = append(seen, "claim "+r.PathValue("name")+" "+string(b))
		mu.Unlock()
		reply(w, 200, map[string]any{})
	})
	mux.HandleFunc("GET /items/{name}", func(w http.ResponseWriter, r *http.Request) {
		reply(w, 200, map[string]any{"name": r.PathValue("name")})
	})
	srv := httptest.NewServer(mux)
	defer srv.Close()
	f, sc := loadText(t, `race: bodies
requests: 1
key: {prefix: u, chars: alnum, length: 8}
setup:
  - request: POST /login
    form: {user: "{{key}}", "pass word": "p&w=1"}
    capture: {name: body.name, where: 'headers["Location"]'}
burst:
  - request: POST /items/{{name}}/claim
    json: {"{{key}}": "{{where}}"}
readback:
  - request: GET /items/{{name}}
    as: item
rule: item.name == "`+odd+`"
`)
	res, err := engine.Run(context.Background(), engine.Plan{Scenario: sc, Trials: 1, Targets: []string{base(srv)}})
	if err != nil {
		t.Fatal(err)
	}
	tr := res.Targets[0]
	if tr.Error != "" || tr.Summary().Broken != 0 || tr.Summary().Inconclusive != 0 {
		t.Fatalf("error %q, summary %+v; want the rule to hold", tr.Error, tr.Summary())
	}
	key := f.Key.Of(tr.Trials[0].Key)
	mu.Lock()
	defer mu.Unlock()
	want := []string{
		"login application/x-www-form-urlencoded " + key + " p&w=1",
		"claim " + odd + ` {"` + key + `":"/items/x"}`,
	}
	if strings.Join(seen, "\n") != strings.Join(want, "\n") {
		t.Errorf("the service saw\n%s\nwant\n%s", strings.Join(seen, "\n"), strings.Join(want, "\n"))
	}
}

// TestLoadRefusesInputs: what is not a race file's text is refused in one
// line naming what it is: a device (and a FIFO, in cmd's tests) without
// waiting, UTF-16 by its encoding; a UTF-8 byte-order mark is skipped.
func TestLoadRefusesInputs(t *testing.T) {
	dir := t.TempDir()
	good := "race: r\nburst:\n  - request: GET /x\nrule: true\n"
	write := func(name, content string) string {
		p := dir + "/" + name
		if err := os.WriteFile(p, []byte(content), 0o600); err != nil {
			t.Fatal(err)
		}
		return p
	}
	for _, tc := range []struct{ path, want string }{
		{"/dev/null", "/dev/null: not a regular file (a device); want a *.race.yaml file"},
		{dir, dir + ": not a regular file (a folder)"},
		{write("bom.race.yaml", "\ufeff"+good), ""},
		{write("bomonly.race.yaml", "\ufeff"), "bomonly.race.yaml:1:1: empty but for a UTF-8 byte-order mark"},
		{write("le.race.yaml", "\xff\xfer\x00a\x00"), "le.race.yaml:1:1: encoded as UTF-16 little-endian; save it as UTF-8"},
		{write("be.race.yaml", "\xfe\xff\x00r"), "be.race.yaml:1:1: encoded as UTF-16 big-endian; save it as UTF-8"},
		{write("nobom.race.yaml", "r\x00a\x00"), "nobom.race.yaml:1:1: encoded as UTF-16 little-endian (no byte-order mark)"},
	} {
		_, err := racefile.Load(context.Background(), tc.path)
		switch {
		case tc.want == "" && err != nil:
			t.Errorf("%s: %v; want it read", tc.path, err)
		case tc.want != "" && (err == nil || !strings.HasSuffix(strings.SplitN(err.Error(), ": ", 2)[0], strings.SplitN(tc.want, ": ", 2)[0]) || !strings.Contains(err.Error(), strings.SplitN(tc.want, ": ", 2)[1])):
			t.Errorf("%s: %v; want %s", tc.path, err, tc.want)
		}
	}
}

// TestCaptureFails: a login that sets no cookie stops the setup, the
// target's error naming the capture's FILE:LINE and what the answer set.
func TestCaptureFails(t *testing.T) {
	mux := http.NewServeMux()
	mux.HandleFunc("POST /login", func(w http.ResponseWriter, r *http.Request) {
		http.SetCookie(w, &http.Cookie{Name: "other", Value: "v4lue-not-shown"})
		reply(w, 200, map[string]any{})
	})
	srv := httptest.NewServer(mux)
	defer srv.Close()
	_, sc := loadText(t, `race: r
setup:
  - request: POST /login
    repeat: 3
    capture:
      sid: 'cookies["sid"]'
burst:
  - request: POST /buy
    headers: {Cookie: "sid={{sid[i]}}"}
rule: true
`)
	res, err := engine.Run(context.Background(), engine.Plan{Scenario: sc, Trials: 1, Targets: []string{base(srv)}})
	if err != nil {
		t.Fatal(err)
	}
	got := res.Targets[0].Error
	if !strings.Contains(got, `t.race.yaml:6: capture sid (cookies["sid"]) on the answer 200 (it set the cookies [other]): no such key: sid`) ||
		!strings.Contains(got, "of 3") || strings.Contains(got, "v4lue-not-shown") {
		t.Errorf("target error %q; want the capture's FILE:LINE, the cookies' names and not their values", got)
	}
}
