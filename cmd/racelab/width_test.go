package main

import (
	"context"
	"os"
	"path/filepath"
	"runtime/debug"
	"strings"
	"testing"

	"github.com/creack/pty"
	"github.com/mattn/go-runewidth"
)

// TestOutputWidth checks where the width of tables comes from: the
// terminal's own size on a pty, COLUMNS when stdout is no terminal, and
// 100 for a pipe without it.
func TestOutputWidth(t *testing.T) {
	ptmx, tty, err := pty.Open()
	if err != nil {
		t.Skipf("no pty on this machine: %v", err)
	}
	defer ptmx.Close()
	defer tty.Close()
	for _, cols := range []uint16{80, 120} {
		if err := pty.Setsize(ptmx, &pty.Winsize{Rows: 40, Cols: cols}); err != nil {
			t.Fatal(err)
		}
		// COLUMNS says otherwise: the terminal's own size wins.
		if got := outputWidth(tty, func(string) string { return "33" }); got != int(cols) {
			t.Errorf("pty of %d columns: width %d", cols, got)
		}
	}
	f, err := os.Create(filepath.Join(t.TempDir(), "out"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	for _, tc := range []struct {
		columns string
		want    int
	}{{"", pipeWidth}, {"72", 72}, {" 90 ", 90}, {"wide", pipeWidth}, {"0", pipeWidth}, {"-5", pipeWidth}} {
		if got := outputWidth(f, func(string) string { return tc.columns }); got != tc.want {
			t.Errorf("file, COLUMNS=%q: width %d, want %d", tc.columns, got, tc.want)
		}
	}
}

// TestCommandsFitTerminal runs the commands the issue measured on a real
// pty of 80 and of 120 columns and checks that no line is wider, then that
// --wide gives the full table back.
func TestCommandsFitTerminal(t *testing.T) {
	runs := [][]string{
		{"run", "five-checkouts", "--seed", "42"},
		{"run", "six-become-four", "--trials", "20", "--seed", "3"},
		{"run", "six-become-four", "--sequential", "--trials", "20", "--seed", "3"},
		{"run", "ten-hits-one-view", "-t", "kv", "-t", "actor", "-t", "actor:await-fetch", "--trials", "5", "--seed", "1", "--timeline"},
		{"load", "ten-hits-one-view", "-q", "-t", "kv", "-t", "actor", "-t", "sqlite", "-c", "4", "-n", "100", "--keys", "3"},
		{"list"},
		{"run", "--help"},
		{"load", "--help"},
		{"report", "--help"},
		{"serve", "--help"},
		{"verify", "--help"},
		{"explain", "--help"},
		{"--help"},
	}
	measure := &runewidth.Condition{EastAsianWidth: false}
	for _, cols := range []uint16{80, 120} {
		for _, args := range runs {
			ptmx, tty, err := pty.Open()
			if err != nil {
				t.Skipf("no pty on this machine: %v", err)
			}
			if err := pty.Setsize(ptmx, &pty.Winsize{Rows: 40, Cols: cols}); err != nil {
				t.Fatal(err)
			}
			// The pty's far end is read by nobody: its output goes to a
			// buffer instead, with the width the pty reports.
			s, out, errOut := testStreams("")
			s.Width = outputWidth(tty, os.Getenv)
			ptmx.Close()
			tty.Close()
			if code := Main(context.Background(), args, s, testCatalog); code != exitOK {
				t.Fatalf("%s: exit %d: %s", strings.Join(args, " "), code, errOut.String())
			}
			for i, line := range strings.Split(strings.TrimSuffix(out.String(), "\n"), "\n") {
				if w := measure.StringWidth(line); w > int(cols) {
					t.Errorf("%s at %d columns: line %d is %d wide:\n%s", strings.Join(args, " "), cols, i+1, w, line)
				}
			}
		}
	}
	s, out, _ := testStreams("")
	s.Width = 80
	if code := Main(context.Background(), []string{"run", "five-checkouts", "--seed", "42", "--wide"}, s, testCatalog); code != exitOK {
		t.Fatalf("--wide: exit %d", code)
	}
	for _, want := range []string{"| GUARANTEE ", "| REQUESTS |", "| EXPECTED |", "| HISTORY "} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("--wide lacks %q:\n%s", want, out.String())
		}
	}
}

func TestBuildVersion(t *testing.T) {
	info := func(version string, settings ...string) *debug.BuildInfo {
		bi := &debug.BuildInfo{Main: debug.Module{Version: version}}
		for i := 0; i+1 < len(settings); i += 2 {
			bi.Settings = append(bi.Settings, debug.BuildSetting{Key: settings[i], Value: settings[i+1]})
		}
		return bi
	}
	const rev = "ce2bd4de7ed9ae6dbe9d02aae082aec7ec3ce271"
	for _, tc := range []struct {
		name, linked string
		bi           *debug.BuildInfo
		want         string
	}{
		{"linked", "v1.4.0-3-gabc", info("v0.0.0-x"), "v1.4.0-3-gabc"},
		{"tagged install", "", info("v1.2.0"), "v1.2.0"},
		{"clone", "", info("v0.0.0-20261130221751-ce2bd4de7ed9", "vcs.revision", rev), "v0.0.0-20261130221751-ce2bd4de7ed9"},
		{"devel with commit", "", info("(devel)", "vcs.revision", rev, "vcs.modified", "false"), "devel-ce2bd4de7ed9"},
		{"devel with changes", "", info("(devel)", "vcs.revision", rev, "vcs.modified", "true"), "devel-ce2bd4de7ed9+dirty"},
		{"nothing known", "", info("(devel)"), "(devel)"},
		{"no build info", "", nil, "(devel)"},
	} {
		if got := buildVersion(tc.linked, tc.bi); got != tc.want {
			t.Errorf("%s: buildVersion = %q, want %q", tc.name, got, tc.want)
		}
	}
}

// TestSequentialWaitSaid checks that a sequential run on the real clock
// says how long its gaps will take before it starts, on a terminal.
func TestSequentialWaitSaid(t *testing.T) {
	s, _, errOut := testStreams("")
	s.ErrIsTTY = true
	args := []string{"run", "six-become-four", "-t", "sqlite", "-t", "kv", "--sequential", "--gap", "1ms", "--trials", "2", "-n", "3"}
	if code := Main(context.Background(), args, s, testCatalog); code != exitOK {
		t.Fatalf("exit %d: %s", code, errOut.String())
	}
	// 2 trials × 2 gaps of 1ms on sqlite alone: kv runs in virtual time.
	if want := "racelab: 2 sequential trials on the real clock (sqlite): about 0 seconds of gaps"; !strings.Contains(errOut.String(), want) {
		t.Errorf("stderr lacks %q:\n%s", want, errOut.String())
	}
}
