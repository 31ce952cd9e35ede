package report

import (
	"bytes"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/mattn/go-runewidth"
	"github.com/rogpeppe/go-internal/diff"

	"github.com/racelab/racelab/scenarios/results"
)

var update = flag.Bool("update", false, "rewrite golden files")

// testFlags names the fields a report advises as racelab's command line
// does (cmd/racelab's fieldFlags), so the goldens read as the CLI prints.
func testFlags(field string) string {
	return map[string]string{"Requests": "-n", "Trials": "--trials", "KeyChars": "--key-chars", "KeepAll": "--keep-all",
		"HistoryTimeout": "--history-timeout", "Timeline": "--timeline", "Wide": "--wide", "Keys": "--keys"}[field]
}

// goldenExt names a golden file's format.
var goldenExt = map[Format]string{Table: ".table.golden", Markdown: ".md.golden", JSON: ".json.golden",
	JUnit: ".junit.golden", HTML: ".html.golden"}

// goldenWidths are the terminal widths every fixture's table is also
// locked down at, beside its full width (--wide): a narrow laptop
// terminal and a wide one.
var goldenWidths = []int{80, 120}

// widthExt names the golden of a table fitted to width columns.
func widthExt(width int) string { return fmt.Sprintf(".table%d.golden", width) }

// jsonGolden is the one fixture whose JSON is locked down as well: the
// shape of a saved result is a contract with other tools.
const jsonGolden = "five-checkouts-errors"

// moreGoldens are the fixtures whose JUnit and HTML are locked down too:
// the story of the acceptance test, a strict failure, and the evidence.
var moreGoldens = map[string][]Format{
	"five-checkouts-errors": {JUnit, HTML},
	"strict-broke":          {JUnit},
	"evidence":              {JUnit, HTML},
}

// golden compares got with the named file under testdata, or rewrites the
// file under -update.
func golden(t *testing.T, name string, got []byte) {
	t.Helper()
	path := filepath.Join("testdata", name)
	if *update {
		if err := os.WriteFile(path, got, 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v\n(run `go test ./report -update` to create it)", err)
	}
	if !bytes.Equal(got, want) {
		t.Errorf("output differs from %s (run `go test ./report -update` if the change is meant):\n%s",
			path, diff.Diff("want", want, "got", got))
	}
}

// fitsIn fails the test for every line of out wider than width display
// columns. It measures with go-runewidth, not with the measure the
// renderer fits by, so that a wrong measure cannot pass its own check.
func fitsIn(t *testing.T, out string, width int) {
	t.Helper()
	measure := &runewidth.Condition{EastAsianWidth: false}
	for i, line := range strings.Split(strings.TrimSuffix(out, "\n"), "\n") {
		if w := measure.StringWidth(line); w > width {
			t.Errorf("line %d is %d columns wide, more than %d:\n%s", i+1, w, width, line)
		}
	}
}

func render(t *testing.T, r *results.Result, f Format) []byte {
	t.Helper()
	var b bytes.Buffer
	if err := Render(&b, r, f, Options{NoColor: true, Say: testFlags, Saved: true}); err != nil {
		t.Fatalf("Render(%s): %v", f, err)
	}
	return b.Bytes()
}

func TestGolden(t *testing.T) {
	for _, fx := range fixtures {
		for _, f := range append([]Format{Table, Markdown}, moreGoldens[fx.name]...) {
			t.Run(fx.name+"/"+string(f), func(t *testing.T) {
				golden(t, fx.name+goldenExt[f], render(t, fx.result(), f))
			})
		}
	}
	for _, fx := range fixtures {
		for _, width := range goldenWidths {
			t.Run(fmt.Sprintf("%s/table%d", fx.name, width), func(t *testing.T) {
				var b bytes.Buffer
				if err := Render(&b, fx.result(), Table, Options{NoColor: true, Width: width, Say: testFlags, Saved: true}); err != nil {
					t.Fatal(err)
				}
				fitsIn(t, b.String(), width)
				golden(t, fx.name+widthExt(width), b.Bytes())
			})
		}
	}
	t.Run(jsonGolden+"/json", func(t *testing.T) {
		for _, fx := range fixtures {
			if fx.name == jsonGolden {
				golden(t, fx.name+goldenExt[JSON], render(t, fx.result(), JSON))
				return
			}
		}
		t.Fatalf("no fixture %q", jsonGolden)
	})
}

// TestGoldenUnderEastAsianLocale renders the goldens again in a process
// whose environment asks tablewriter for East Asian widths, in which a "…"
// counts two columns: the table must not move.
func TestGoldenUnderEastAsianLocale(t *testing.T) {
	if os.Getenv("RACELAB_REPORT_CHILD") != "" || *update {
		t.Skip("run from the parent test, and not while rewriting goldens")
	}
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(exe, "-test.run=^TestGolden$", "-test.count=1")
	cmd.Env = append(os.Environ(), "RACELAB_REPORT_CHILD=1", "RUNEWIDTH_EASTASIAN=1", "LANG=ja_JP.UTF-8", "LC_ALL=ja_JP.UTF-8")
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("goldens differ under an East Asian locale: %v\n%s", err, out)
	}
}

// TestNoStaleGoldens fails on a golden file that no fixture renders any
// more, so that testdata says only what the tests check.
func TestNoStaleGoldens(t *testing.T) {
	want := map[string]bool{jsonGolden + goldenExt[JSON]: true}
	for _, fx := range fixtures {
		want[fx.name+goldenExt[Table]] = true
		want[fx.name+goldenExt[Markdown]] = true
		for _, width := range goldenWidths {
			want[fx.name+widthExt(width)] = true
		}
		for _, f := range moreGoldens[fx.name] {
			want[fx.name+goldenExt[f]] = true
		}
	}
	for _, g := range loadGoldens {
		want[g.name] = true
	}
	files, err := filepath.Glob(filepath.Join("testdata", "*.golden"))
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range files {
		if !want[filepath.Base(f)] {
			t.Errorf("%s is rendered by no fixture; delete it", f)
		}
	}
	if len(files) != len(want) {
		t.Errorf("testdata holds %d goldens, want %d (run `go test ./report -update`)", len(files), len(want))
	}
}

func TestJSONRoundTrip(t *testing.T) {
	for _, fx := range fixtures {
		t.Run(fx.name, func(t *testing.T) {
			want := fx.result()
			var got results.Result
			if err := json.Unmarshal(render(t, want, JSON), &got); err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(&got, want) {
				t.Errorf("round trip changed the result:\n got %+v\nwant %+v", got, *want)
			}
		})
	}
}

func TestJSONSchema(t *testing.T) {
	for _, tc := range []struct {
		name   string
		schema string
	}{
		{"as set", results.SchemaVersion},
		{"filled in when missing", ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := raceNotShown()
			r.Schema = tc.schema
			out := render(t, r, JSON)
			var doc map[string]any
			if err := json.Unmarshal(out, &doc); err != nil {
				t.Fatal(err)
			}
			if got, want := doc["schema"], "racelab/result/v1"; got != want {
				t.Errorf(`"schema" = %v, want %q`, got, want)
			}
			if r.Schema != tc.schema {
				t.Errorf("Render changed the result's schema to %q", r.Schema)
			}
			if !bytes.HasSuffix(out, []byte("}\n")) || bytes.HasSuffix(out, []byte("\n\n")) {
				t.Errorf("JSON does not end in exactly one newline: %q", out[max(0, len(out)-10):])
			}
		})
	}
}

func TestParseFormat(t *testing.T) {
	for _, tc := range []struct {
		in      string
		want    Format
		wantErr string
	}{
		{"table", Table, ""},
		{"json", JSON, ""},
		{"markdown", Markdown, ""},
		{" Markdown ", Markdown, ""},
		{"JSON", JSON, ""},
		{"junit", JUnit, ""},
		{"HTML", HTML, ""},
		{"x", "", `unknown output format "x"; want table, json, markdown, junit or html`},
		{"", "", `unknown output format ""; want table, json, markdown, junit or html`},
		{"md", "", `unknown output format "md"; want table, json, markdown, junit or html`},
	} {
		t.Run(tc.in, func(t *testing.T) {
			got, err := ParseFormat(tc.in)
			if tc.wantErr == "" {
				if err != nil || got != tc.want {
					t.Fatalf("ParseFormat(%q) = %q, %v; want %q, nil", tc.in, got, err, tc.want)
				}
				return
			}
			if err == nil || err.Error() != tc.wantErr {
				t.Fatalf("ParseFormat(%q) error = %v; want %s", tc.in, err, tc.wantErr)
			}
			if !errors.Is(err, results.ErrUsage) {
				t.Errorf("ParseFormat(%q) error is not a usage error", tc.in)
			}
			var ufe *UnknownFormatError
			if !errors.As(err, &ufe) || ufe.Name != tc.in {
				t.Errorf("ParseFormat(%q) error = %#v; want *UnknownFormatError naming the input", tc.in, err)
			}
		})
	}
}

func TestFormats(t *testing.T) {
	if got, want := Formats(), []string{"table", "json", "markdown", "junit", "html"}; !slices.Equal(got, want) {
		t.Fatalf("Formats() = %q, want %q", got, want)
	}
	Formats()[0] = "changed"
	if Formats()[0] != "table" {
		t.Error("Formats returns the package's own slice")
	}
}

func TestRenderRefuses(t *testing.T) {
	var b bytes.Buffer
	if err := Render(&b, tenHitsOneView(), Format("pdf"), Options{}); err == nil ||
		err.Error() != `unknown output format "pdf"; want table, json, markdown, junit or html` {
		t.Errorf("Render(pdf) error = %v", err)
	}
	if err := Render(&b, nil, Table, Options{}); err == nil {
		t.Error("Render(nil) succeeded")
	}
	if b.Len() != 0 {
		t.Errorf("a refused Render wrote %q", b.String())
	}
}

type failingWriter struct{ err error }

func (w failingWriter) Write([]byte) (int, error) { return 0, w.err }

func TestRenderReturnsWriteError(t *testing.T) {
	boom := errors.New("disk full")
	for _, f := range formats {
		if err := Render(failingWriter{boom}, tenHitsOneView(), f, Options{}); !errors.Is(err, boom) {
			t.Errorf("Render(%s) to a failing writer = %v, want %v", f, err, boom)
		}
	}
}

func TestVerdict(t *testing.T) {
	held := results.Trial{}
	brk := results.Trial{Broken: true}
	failed := results.Trial{Errors: 1}
	brokeWithErrors := results.Trial{Errors: 3, Broken: true}
	for _, tc := range []struct {
		name        string
		tr          results.TargetResult
		multi       bool
		interrupted bool
		want        string
	}{
		{"holds", results.TargetResult{Expect: results.ExpectHold, Strict: true, Trials: []results.Trial{held}}, false, false, "holds"},
		{"holds in all", results.TargetResult{Expect: results.ExpectHold, Strict: true, Trials: []results.Trial{held, held}}, true, false, "holds in 2/2"},
		{"broken as expected", results.TargetResult{Expect: results.ExpectBreak, Trials: []results.Trial{brk}}, false, false, "broken (expected)"},
		{"broken in some as expected", results.TargetResult{Expect: results.ExpectBreak, Trials: []results.Trial{held, brk, held}}, true, false, "broken in 1/3 (expected)"},
		{"strict broke", results.TargetResult{Expect: results.ExpectHold, Strict: true, Trials: []results.Trial{brk}}, false, false, "BROKEN, expected to hold"},
		{"non-strict broke", results.TargetResult{Expect: results.ExpectHold, Trials: []results.Trial{held, brk}}, true, false, "broken in 1/2, expected to hold"},
		{"race not shown", results.TargetResult{Expect: results.ExpectBreak, Trials: []results.Trial{held}}, false, false, "held, race not shown"},
		{"race demanded, not shown", results.TargetResult{Expect: results.ExpectBreak, Strict: true, Trials: []results.Trial{held, held}}, true, false, "HELD in 2/2, race not shown"},
		{"error", results.TargetResult{Expect: results.ExpectHold, Error: "open redis: refused", Trials: []results.Trial{brk}}, false, false, "error"},
		{"cut short", results.TargetResult{Expect: results.ExpectHold}, true, true, "interrupted"},
		{"no trials", results.TargetResult{Expect: results.ExpectHold}, false, false, "no trials"},
		{"strict, every trial errored", results.TargetResult{Expect: results.ExpectHold, Strict: true, Trials: []results.Trial{failed, failed}}, true, false, "INCONCLUSIVE in 2/2"},
		{"strict, one of ten errored", results.TargetResult{Expect: results.ExpectHold, Strict: true, Trials: append(slices.Repeat([]results.Trial{held}, 9), failed)}, true, false, "holds in 10/10"},
		{"strict, two of ten errored", results.TargetResult{Expect: results.ExpectHold, Strict: true, Trials: append(slices.Repeat([]results.Trial{held}, 8), failed, failed)}, true, false, "INCONCLUSIVE in 2/10"},
		{"strict, broke despite errors", results.TargetResult{Expect: results.ExpectHold, Strict: true, Trials: []results.Trial{failed, brokeWithErrors}}, true, false, "BROKEN in 1/2, expected to hold"},
		{"naive, every trial errored", results.TargetResult{Expect: results.ExpectBreak, Trials: []results.Trial{failed}}, false, false, "inconclusive"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := tc.tr.Summary()
			if got := verdict(&tc.tr, &s, tc.multi, tc.interrupted); got != tc.want {
				t.Errorf("verdict = %q, want %q", got, tc.want)
			}
		})
	}
}

func TestFormatDuration(t *testing.T) {
	for _, tc := range []struct {
		d    time.Duration
		want string
	}{
		{0, "0ns"},
		{850, "850ns"},
		{8500, "8.5µs"},
		{84612, "85µs"},
		{999_700, "1ms"},
		{time.Millisecond, "1ms"},
		{1_183_000, "1.2ms"},
		{9_960_000, "10ms"},
		{3 * time.Second, "3s"},
		{90 * time.Second, "90s"},
		{999 * time.Second, "999s"},
		{11*time.Hour + 52*time.Minute + 3*time.Second + 400*time.Millisecond, "11h52m3s"},
	} {
		if got := formatDuration(tc.d); got != tc.want {
			t.Errorf("formatDuration(%d) = %q, want %q", tc.d, got, tc.want)
		}
	}
}

// TestMarkdownEscapes checks that text from targets cannot break the
// markdown: a "|" stays inside its cell and a "*" stays a star.
func TestMarkdownEscapes(t *testing.T) {
	r := raceNotShown()
	r.Targets[0].Guarantee = "read | write *twice*"
	r.Targets[1].Error = "bad answer: *nothing* [here]"
	out := string(render(t, r, Markdown))
	var row string
	for l := range strings.Lines(out) {
		if strings.HasPrefix(l, "| kv ") {
			row = l
		}
	}
	if got, want := strings.Count(row, "|")-strings.Count(row, `\|`), len(summarize(r, Options{}).cols)+1; got != want {
		t.Errorf("kv row has %d cell borders, want %d:\n%s", got, want, row)
	}
	for _, want := range []string{"| read \\| write \\*twice\\* ", `- actor: bad answer: \*nothing\* \[here\]`} {
		if !strings.Contains(out, want) {
			t.Errorf("markdown lacks %q:\n%s", want, out)
		}
	}
}

// TestSameNameTargets checks that two targets of one store are told apart
// by their full spec.
func TestSameNameTargets(t *testing.T) {
	r := raceNotShown()
	r.Targets[1].Target, r.Targets[1].Spec = "kv", "kv?cache-ttl=30s"
	out := string(render(t, r, Table))
	for _, want := range []string{"| kv ", "| kv?cache-ttl=30s "} {
		if !strings.Contains(out, want) {
			t.Errorf("table lacks %q:\n%s", want, out)
		}
	}
}

func TestEscapeMarkdown(t *testing.T) {
	for _, tc := range []struct{ in, want string }{
		{"counted = allowed", "counted = allowed"},
		{"*nothing* [here]", `\*nothing\* \[here\]`},
		{"set RACELAB_REDIS_URL", "set RACELAB_REDIS_URL"},
		{"_start and end_", `\_start and end\_`},
		{"`make services` <br>", "\\`make services\\` \\<br\\>"},
		{"a | b", `a \| b`},
		{`C:\tmp`, `C:\\tmp`},
	} {
		if got := escapeMarkdown(tc.in); got != tc.want {
			t.Errorf("escapeMarkdown(%q) = %q, want %q", tc.in, got, tc.want)
		}
	}
}

// TestSoftCellNeedsProof checks that the soft rule, like the hard one,
// holds only on proof: trials whose requests failed are inconclusive for
// it, even when the hard rule's counts proved a break.
func TestSoftCellNeedsProof(t *testing.T) {
	held := results.Trial{Requests: []results.Request{{Outcome: results.Allowed}}}
	failed := results.Trial{Errors: 1, Requests: []results.Request{{Outcome: results.Errored}}}
	brokeWithError := failed
	brokeWithError.Broken = true
	softBroken := brokeWithError
	softBroken.SoftBroken = true
	for _, tc := range []struct {
		name   string
		trials []results.Trial
		want   string
	}{
		{"all held", []results.Trial{held, held}, "holds in 2/2"},
		{"all failed", []results.Trial{failed, failed}, "inconclusive in 2/2"},
		{"hard break with a failed request", []results.Trial{brokeWithError, brokeWithError}, "inconclusive in 2/2"},
		{"one failed of twenty", append(slices.Repeat([]results.Trial{held}, 19), failed), "holds in 20/20"},
		{"soft break with a failed request", []results.Trial{softBroken, failed}, "broken in 1/2"},
	} {
		s := results.TallyOf(tc.trials)
		if got := softCell(&s, true); got != tc.want {
			t.Errorf("%s: %q, want %q", tc.name, got, tc.want)
		}
	}
}
