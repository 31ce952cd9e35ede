package main

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// executeRefused runs racelab, wants exit code want and the one line of
// stderr to contain why: each refusal for its own reason.
func executeRefused(t *testing.T, ctx context.Context, want int, why string, args ...string) {
	t.Helper()
	code, _, stderr := execute(ctx, args...)
	if code != want || strings.Count(stderr, "\n") != 1 || !strings.Contains(stderr, why) {
		t.Errorf("racelab %s: exit %d, %q; want exit %d and one line saying %q", strings.Join(args, " "), code, stderr, want, why)
	}
}

// writeTemp writes data to a new file called name in a fresh folder.
func writeTemp(t *testing.T, name string, data []byte) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), name)
	if err := os.WriteFile(path, data, 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

func readFile(t *testing.T, path string) []byte {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// repeated is a file holding data n times, as a forger pads one run into
// a hundred.
func repeated(t *testing.T, data []byte, n int) string {
	t.Helper()
	return writeTemp(t, "repeated.json", []byte(strings.Repeat(string(data)+"\n", n)))
}

// runIDField is a saved document's run id, which results of before this
// change lack.
var runIDField = regexp.MustCompile(`\n  "run_id": "[0-9a-f]{32}",`)

// One run's evidence counts once: a result given twice, repeated in one
// file (signed or not), merged into a result given beside it, or saved
// before run ids (told by its trial keys) is refused, exit 1, naming the
// run or the key; two runs are merged.
func TestReportRefusesReplays(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	a, b, signed, merged := filepath.Join(dir, "a.json"), filepath.Join(dir, "b.json"), filepath.Join(dir, "s.json"), filepath.Join(dir, "m.json")
	executeWant(t, ctx, exitOK, "run", "ten-hits-one-view", "-t", "actor", "--trials", "5", "-q", "-o", "json="+a)
	executeWant(t, ctx, exitOK, "run", "ten-hits-one-view", "-t", "actor", "--trials", "5", "-q", "-o", "json="+b)
	executeWant(t, ctx, exitOK, "run", "ten-hits-one-view", "-t", "actor", "--trials", "5", "-q", "-o", "json="+signed, "--sign-key", "k")
	id := runIDField.Find(readFile(t, a))
	if id == nil {
		t.Fatalf("%s has no run id:\n%.400s", a, readFile(t, a))
	}
	executeWant(t, ctx, exitOK, "report", a, b, "-o", "json="+merged)
	out := executeWant(t, ctx, exitOK, "report", a, b)
	if !strings.Contains(out, "holds in 10/10") {
		t.Errorf("two runs merged:\n%s", out)
	}
	runID := strings.Split(string(id), `"`)[3]
	executeRefused(t, ctx, exitFailure, "a.json: the same evidence twice: run "+runID+" is given twice", "report", a, a)
	executeRefused(t, ctx, exitFailure, "run "+runID+" is given twice", "report", repeated(t, readFile(t, a), 100))
	executeRefused(t, ctx, exitFailure, "is given twice", "report", repeated(t, readFile(t, signed), 100), "--sign-key", "k", "--require-signature")
	executeRefused(t, ctx, exitFailure, "a.json: the same evidence twice: run "+runID+" is given twice", "report", merged, a)
	executeWant(t, ctx, exitOK, "report", merged)

	// Saved before run ids: read as before, and told apart by their keys.
	legacy := runIDField.ReplaceAll(readFile(t, a), nil)
	executeWant(t, ctx, exitOK, "report", writeTemp(t, "legacy.json", legacy))
	executeRefused(t, ctx, exitFailure, "target actor: trial key slug-", "report", repeated(t, legacy, 2))
	// Two runs of one seed in virtual time are one run replayed.
	s1, s2 := filepath.Join(dir, "s1.json"), filepath.Join(dir, "s2.json")
	executeWant(t, ctx, exitOK, "run", "ten-hits-one-view", "-t", "actor", "--trials", "3", "--seed", "9", "-q", "-o", "json="+s1)
	executeWant(t, ctx, exitOK, "run", "ten-hits-one-view", "-t", "actor", "--trials", "3", "--seed", "9", "-q", "-o", "json="+s2)
	executeRefused(t, ctx, exitFailure, "s2.json: the same evidence twice: run ", "report", s1, s2)

	// Loads too.
	load := executeWant(t, ctx, exitOK, "load", "ten-hits-one-view", "-q", "-t", "actor", "-c", "4", "-n", "40", "--keys", "2", "-o", "json")
	executeRefused(t, ctx, exitFailure, "is given twice", "report", repeated(t, []byte(load), 2))
}

// With a key, every document read must be signed by it: an unsigned part
// beside signed ones, a part whose signature is "", and a signed load
// stripped of its signature are refused (exit 1); --sign-key ” is a
// usage error, not "no key".
func TestKeyRefusesDowngrades(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	db := "sqlite?path=" + filepath.Join(dir, "db.sqlite")
	for i := range 2 {
		executeWant(t, ctx, exitOK, "run", "ten-hits-one-view", "-t", db, "-n", "4", "--shard", []string{"0/2", "1/2"}[i], "--run-id", "down",
			"--shard-dir", filepath.Join(dir, "parts"), "--sign-key", "k", "-q")
	}
	part0, part1 := filepath.Join(dir, "parts", "shard-0-of-2.json"), filepath.Join(dir, "parts", "shard-1-of-2.json")
	// The shards released one after the other, in one process: a wide
	// bound lets them count, so that only the signatures decide.
	executeWant(t, ctx, exitOK, "verify", part0, part1, "--sign-key", "k", "--max-spread", "1h")
	unsigned := stripSignature(t, readFile(t, part1))
	executeRefused(t, ctx, exitFailure, "signature: not signed", "verify", part0, writeTemp(t, "p1.json", unsigned), "--sign-key", "k", "--max-spread", "1h")
	empty := strings.Replace(string(unsigned), "{", `{"signature": "",`, 1)
	executeRefused(t, ctx, exitFailure, "signature: not signed", "verify", part0, writeTemp(t, "p1.json", []byte(empty)), "--sign-key", "k", "--max-spread", "1h")
	t.Setenv("RACELAB_SIGN_KEY", "k") // the key from the environment holds the same
	executeRefused(t, ctx, exitFailure, "signature: not signed", "verify", part0, writeTemp(t, "p1.json", unsigned), "--max-spread", "1h")
	t.Setenv("RACELAB_SIGN_KEY", "")

	load := filepath.Join(dir, "load.json")
	executeWant(t, ctx, exitOK, "load", "ten-hits-one-view", "-q", "-t", "actor", "-c", "4", "-n", "40", "--keys", "2", "-o", "json="+load, "--sign-key", "k")
	executeWant(t, ctx, exitOK, "report", load, "--sign-key", "k")
	executeRefused(t, ctx, exitFailure, "signature: not signed", "report", writeTemp(t, "load.json", stripSignature(t, readFile(t, load))), "--sign-key", "k")

	for _, args := range [][]string{
		{"report", load, "--sign-key", ""},
		{"verify", part0, "--sign-key", ""},
		{"run", "ten-hits-one-view", "-t", "actor", "--sign-key", ""},
	} {
		executeRefused(t, ctx, exitUsage, `--sign-key "": want a key that is not empty`, args...)
	}
}

// stripSignature is a signed document without its signature field.
func stripSignature(t *testing.T, doc []byte) []byte {
	t.Helper()
	var m map[string]json.RawMessage
	if err := json.Unmarshal(doc, &m); err != nil {
		t.Fatal(err)
	}
	if _, ok := m["signature"]; !ok {
		t.Fatalf("not signed:\n%.300s", doc)
	}
	delete(m, "signature")
	b, err := json.Marshal(m)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// editJSON decodes a saved document, lets edit change it, and writes it
// to a new file.
func editJSON(t *testing.T, path string, edit func(doc map[string]any)) string {
	t.Helper()
	var doc map[string]any
	if err := json.Unmarshal(readFile(t, path), &doc); err != nil {
		t.Fatal(err)
	}
	edit(doc)
	b, err := json.MarshalIndent(doc, "", "  ")
	if err != nil {
		t.Fatal(err)
	}
	return writeTemp(t, filepath.Base(path), b)
}

func targetOf(doc map[string]any) map[string]any {
	return doc["targets"].([]any)[0].(map[string]any)
}

// Forged verdicts are refused, exit 1, naming the field: a trial's
// "broken": true its requests do not show, a tally broken beyond a
// sample that keeps no broken trial, a heading's trials its targets did
// not run, and a load target that leaves out a threshold it missed.
func TestReportRefusesForgedVerdicts(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	run, sampled, load := filepath.Join(dir, "run.json"), filepath.Join(dir, "sampled.json"), filepath.Join(dir, "load.json")
	executeWant(t, ctx, exitOK, "run", "ten-hits-one-view", "-t", "actor", "--trials", "5", "-q", "-o", "json="+run)
	executeWant(t, ctx, exitOK, "run", "ten-hits-one-view", "-t", "actor", "-n", "2", "--trials", "1003", "-q", "-o", "json="+sampled)

	broken := editJSON(t, run, func(doc map[string]any) {
		tr := targetOf(doc)["trials"].([]any)[2].(map[string]any)
		tr["broken"], tr["why"] = true, "actor: forged"
		// The bound as 1 broken of 5 makes it at 95%, so that only the
		// trial's own recheck can tell.
		b := targetOf(doc)["bound"].(map[string]any)
		b["broken"], b["upper"] = 1, 0.6574083180011385
	})
	executeRefused(t, ctx, exitFailure, "targets[0].trials[2].broken: true; its requests and count (10) say false", "report", broken)

	tally := editJSON(t, sampled, func(doc map[string]any) {
		tg := targetOf(doc)
		tg["tally"].(map[string]any)["broken"] = 3
		b := tg["bound"].(map[string]any)
		b["broken"], b["upper"] = 3, 0.0076873 // the bound recomputed is checked too; wrong here, but the tally is refused first
	})
	executeRefused(t, ctx, exitFailure, "tally.broken: 3, yet no kept trial broke", "report", tally)

	heading := editJSON(t, run, func(doc map[string]any) { doc["trials"] = 1000 })
	executeRefused(t, ctx, exitFailure, "trials: 1000, but targets[0] ran 5", "report", heading)
	short := editJSON(t, run, func(doc map[string]any) { doc["trials"] = 6 })
	executeRefused(t, ctx, exitFailure, "trials: 6, but targets[0] ran 5 and was neither interrupted nor failed", "report", short)

	// lost==0 holds on actor; p99<1ns cannot: the load misses it (exit 3).
	executeWant(t, ctx, exitRuleBroken, "load", "ten-hits-one-view", "-q", "-t", "actor", "-c", "4", "-n", "40", "--keys", "2",
		"--threshold", "lost==0", "--threshold", "p99<1ns", "-o", "json="+load)
	executeWant(t, ctx, exitRuleBroken, "report", load)
	dropped := editJSON(t, load, func(doc map[string]any) {
		tg := targetOf(doc)
		tg["thresholds"] = tg["thresholds"].([]any)[:1]
	})
	executeRefused(t, ctx, exitFailure, `thresholds ["lost==0"] judged; the load asks ["lost==0" "p99<1ns"]`, "report", dropped)
	none := editJSON(t, load, func(doc map[string]any) { delete(targetOf(doc), "thresholds") })
	executeRefused(t, ctx, exitFailure, `no threshold judged; the load asks ["lost==0" "p99<1ns"]`, "report", none)
}

// report judges a saved result by the expectation it was saved with, as
// README shows (run --expect … -o json=r.json, then report r.json exits
// as the run did); --expect overrides it, for every target or one.
func TestReportKeepsTheSavedExpectation(t *testing.T) {
	ctx := context.Background()
	r := filepath.Join(t.TempDir(), "r.json")
	// actor holds; a race demanded of it does not show: exit 3, kept.
	executeWant(t, ctx, exitRuleBroken, "run", "ten-hits-one-view", "-t", "kv", "-t", "actor", "--expect", "actor=race", "--trials", "3", "-q", "-o", "json="+r)
	executeWant(t, ctx, exitRuleBroken, "report", r)
	executeWant(t, ctx, exitOK, "report", r, "--expect", "actor=auto")
	executeWant(t, ctx, exitOK, "report", r, "--expect", "auto")
	// kv breaks where it is expected to: exit 0, kept; made to hold, 3.
	executeWant(t, ctx, exitOK, "run", "ten-hits-one-view", "-t", "kv", "--trials", "3", "-q", "-o", "json="+r)
	executeWant(t, ctx, exitOK, "report", r)
	executeWant(t, ctx, exitRuleBroken, "report", r, "--expect", "kv=hold")
	executeWant(t, ctx, exitRuleBroken, "report", r, "--expect", "hold")
}
