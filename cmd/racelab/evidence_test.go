package main

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// editFile applies edit to the file at path, as a forger would, and
// fails when the edit changed nothing.
func editFile(t *testing.T, path, old, new string) string {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	edited := bytes.Replace(b, []byte(old), []byte(new), 1)
	if bytes.Equal(edited, b) {
		t.Fatalf("%s holds no %q", path, old)
	}
	out := filepath.Join(t.TempDir(), filepath.Base(path))
	if err := os.WriteFile(out, edited, 0o644); err != nil {
		t.Fatal(err)
	}
	return out
}

// A part signed with --sign-key verifies under the key; edited, it is
// refused (exit 1), and so is an unsigned one under --require-signature.
// Saved results are signed and checked the same way.
func TestSignedParts(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	db := "sqlite?path=" + filepath.Join(dir, "db.sqlite")
	executeWant(t, ctx, exitOK, "run", "ten-hits-one-view", "-t", db, "-n", "4", "--shard", "0/1", "--run-id", "signed",
		"--shard-dir", filepath.Join(dir, "signed"), "--sign-key", "s3cret", "-q")
	executeWant(t, ctx, exitOK, "run", "ten-hits-one-view", "-t", db, "-n", "4", "--shard", "0/1", "--run-id", "plain",
		"--shard-dir", filepath.Join(dir, "plain"), "-q")
	signed := filepath.Join(dir, "signed", "shard-0-of-1.json")
	plain := filepath.Join(dir, "plain", "shard-0-of-1.json")
	if b, _ := os.ReadFile(signed); !bytes.Contains(b, []byte(`"signature": "hmac-sha256:`)) {
		t.Fatalf("the part is not signed:\n%.300s", b)
	}
	executeWant(t, ctx, exitOK, "verify", signed, "--sign-key", "s3cret", "--require-signature")
	executeWant(t, ctx, exitFailure, "verify", plain, "--sign-key", "s3cret") // with a key, every part must be signed
	executeWant(t, ctx, exitFailure, "verify", plain, "--sign-key", "s3cret", "--require-signature")
	executeWant(t, ctx, exitFailure, "verify", signed, "--sign-key", "other")
	edited := editFile(t, signed, `"outcome": "allowed"`, `"outcome": "error"`)
	executeWant(t, ctx, exitFailure, "verify", edited, "--sign-key", "s3cret")
	executeWant(t, ctx, exitUsage, "verify", signed, "--require-signature")

	// Saved results: run -o json signs, report checks.
	saved := filepath.Join(dir, "a.json")
	executeWant(t, ctx, exitOK, "run", "ten-hits-one-view", "-t", "actor", "-o", "json="+saved, "--sign-key", "s3cret", "-q")
	executeWant(t, ctx, exitOK, "report", saved, "--sign-key", "s3cret", "--require-signature")
	executeWant(t, ctx, exitFailure, "report", editFile(t, saved, `"seed": `, `"seed": 1`), "--sign-key", "s3cret")
}

// Forged parts of a run against a kv service that lost its hits: the
// part's own expectation is not the verifier's, a part without targets
// proves nothing, and -t naming another target is a usage error.
func verifyRefusesForgedParts(t *testing.T) {
	url := serveProcess(t, "kv")
	files := runShards(t, 2, "forged-kv", "run", "ten-hits-one-view", "-t", url, "-n", "20")
	ctx := context.Background()
	claim := func(f string) string {
		return editFile(t, editFile(t, f, `"expect": "holds",`, `"expect": "breaks",`), `"strict": true,`, `"strict": false,`)
	}
	claims := []string{claim(files[0]), claim(files[1])}
	executeWant(t, ctx, exitRuleBroken, append([]string{"verify"}, claims...)...)
	executeWant(t, ctx, exitOK, append([]string{"verify", "--expect", "breaks"}, claims...)...)
	empty := editFile(t, files[0], `"targets": [`, `"targets": [], "was": [`)
	executeWant(t, ctx, exitFailure, "verify", empty, files[1])
	executeWant(t, ctx, exitUsage, "verify", files[0], files[1], "-t", "kv")
	_, _, stderr := execute(ctx, "verify", files[0], files[1], "-t", "kv")
	if !strings.Contains(stderr, "-t kv: the parts ran "+url) {
		t.Errorf("verify -t kv: %q; want the flag and the target the parts ran", stderr)
	}
}
