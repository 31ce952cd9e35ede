package main

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"net"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/racelab/racelab/scenarios/racefile/starter"
	"github.com/racelab/racelab/targets/storetest"
)

// The README shows racelab's output, and output drifts: a column renamed,
// a figure rounded otherwise, a word changed. So every example whose bytes
// are decided by racelab alone (a seeded run in virtual time, an error, a
// help line) is marked in the README and run here, and what it prints must
// be what the README shows. The mark is an HTML comment on the line before
// a fenced block, which GitHub does not show:
//
//	<!-- readme-test -->                 (or: <!-- readme-test columns=80 exit=2 -->)
//	```
//	$ racelab run five-checkouts --seed 42     # a comment is not an argument
//	…the output, stdout then stderr…
//	```
//
// A block may hold several commands, each starting with "$ ". In a shown
// line, "…" stands for any text (a long list of valid names). A line that
// says it was measured "on the real clock" keeps its words but not its
// figures, which no seed replays: its durations are not compared. Examples
// on the real clock (load, serve, shards) are not marked at all, and the
// README says where their figures come from. servers=1 marks an example
// that needs Redis and PostgreSQL: without them it is skipped, as every
// real-store test is (and fails under CI=true).

// readmeExample is one marked command and the output the README shows.
type readmeExample struct {
	line    int // where the command stands in README.md
	args    []string
	columns int
	exit    int
	servers bool // needs Redis and PostgreSQL
	want    string
}

var readmeMark = regexp.MustCompile(`^\s*<!-- readme-test((?:\s+\w+=\d+)*)\s*-->\s*$`)

// readmeExamples reads every marked example of the README at path.
func readmeExamples(path string) ([]readmeExample, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	lines := strings.Split(string(data), "\n")
	var out []readmeExample
	for i := 0; i < len(lines); i++ {
		m := readmeMark.FindStringSubmatch(lines[i])
		if m == nil {
			if strings.Contains(lines[i], "readme-test") && strings.Contains(lines[i], "<!--") {
				return nil, fmt.Errorf("README.md:%d: a readme-test mark the test cannot read: %q", i+1, lines[i])
			}
			continue
		}
		columns, exit, servers := pipeWidth, exitOK, false
		for _, opt := range strings.Fields(m[1]) {
			name, value, _ := strings.Cut(opt, "=")
			n, _ := strconv.Atoi(value)
			switch name {
			case "columns":
				columns = n
			case "exit":
				exit = n
			case "servers":
				servers = n == 1
			default:
				return nil, fmt.Errorf("README.md:%d: unknown readme-test option %q (want columns=N, exit=N or servers=1)", i+1, name)
			}
		}
		if i+1 >= len(lines) || !strings.HasPrefix(strings.TrimSpace(lines[i+1]), "```") {
			return nil, fmt.Errorf("README.md:%d: a readme-test mark must stand right above a fenced block", i+1)
		}
		fence := lines[i+1]
		indent := fence[:len(fence)-len(strings.TrimLeft(fence, " "))]
		var cur *readmeExample
		for i += 2; ; i++ {
			if i >= len(lines) {
				return nil, fmt.Errorf("README.md: the block marked for readme-test is not closed")
			}
			text := strings.TrimPrefix(lines[i], indent)
			if strings.TrimSpace(text) == "```" {
				break
			}
			if cmd, ok := strings.CutPrefix(text, "$ racelab "); ok {
				args, err := starter.Split(cmd)
				if err != nil {
					return nil, fmt.Errorf("README.md:%d: %v", i+1, err)
				}
				out = append(out, readmeExample{line: i + 1, args: args, columns: columns, exit: exit, servers: servers})
				cur = &out[len(out)-1]
				continue
			}
			if cur == nil {
				return nil, fmt.Errorf("README.md:%d: a block marked for readme-test must start with \"$ racelab …\"", i+1)
			}
			cur.want += text + "\n"
		}
	}
	return out, nil
}

var (
	// realClock finds a line that says its figures come from the real clock.
	realClock = regexp.MustCompile(`on the real clock`)
	// duration is a figure such a line may show differently every run.
	duration = regexp.MustCompile(`\d+(\.\d+)?(ns|µs|us|ms|s|m)\b`)
)

// readmeLineMatches says whether got is the line the README shows: equal,
// but for the durations of a real-clock line and the text a "…" stands for.
func readmeLineMatches(want, got string) bool {
	if realClock.MatchString(want) {
		want, got = duration.ReplaceAllString(want, "D"), duration.ReplaceAllString(got, "D")
	}
	if !strings.Contains(want, "…") {
		return want == got
	}
	parts := strings.Split(want, "…")
	pattern := make([]string, len(parts))
	for i, p := range parts {
		pattern[i] = regexp.QuoteMeta(p)
	}
	return regexp.MustCompile(`^` + strings.Join(pattern, `.*`) + `$`).MatchString(got)
}

// readmeDiff is the first line where got and want part, or "" when every
// line matches.
func readmeDiff(want, got string) string {
	w := strings.Split(strings.TrimRight(want, "\n"), "\n")
	g := strings.Split(strings.TrimRight(got, "\n"), "\n")
	for i := 0; i < len(w) || i < len(g); i++ {
		var wl, gl string
		if i < len(w) {
			wl = w[i]
		}
		if i < len(g) {
			gl = g[i]
		}
		if i >= len(w) || i >= len(g) || !readmeLineMatches(wl, gl) {
			return fmt.Sprintf("output line %d:\n  README shows: %q\n  racelab says: %q", i+1, wl, gl)
		}
	}
	return ""
}

// TestREADMEExamples runs every marked README example and compares what it
// prints with what the README shows.
func TestREADMEExamples(t *testing.T) {
	examples, err := readmeExamples("../../README.md")
	if err != nil {
		t.Fatal(err)
	}
	if len(examples) < 8 {
		t.Fatalf("%d marked examples in README.md; the marks were lost?", len(examples))
	}
	bin := buildRacelab(t)
	for _, ex := range examples {
		t.Run(fmt.Sprintf("line%d", ex.line), func(t *testing.T) {
			// Each example is a racelab process of its own, as a user's
			// command is: they run side by side.
			t.Parallel()
			if ex.servers {
				needServers(t)
			}
			var out, errOut bytes.Buffer
			cmd := exec.Command(bin, ex.args...)
			cmd.Env = append(os.Environ(), "NO_COLOR=1", "COLUMNS="+strconv.Itoa(ex.columns))
			cmd.Stdout, cmd.Stderr = &out, &errOut
			code := exitOK
			if err := cmd.Run(); err != nil {
				var exit *exec.ExitError
				if !errors.As(err, &exit) {
					t.Fatalf("README.md:%d: racelab %s: %v", ex.line, strings.Join(ex.args, " "), err)
				}
				code = exit.ExitCode()
			}
			if code != ex.exit {
				t.Errorf("README.md:%d: racelab %s: exit %d, README says %d", ex.line, strings.Join(ex.args, " "), code, ex.exit)
			}
			if d := readmeDiff(ex.want, out.String()+errOut.String()); d != "" {
				t.Errorf("README.md:%d: racelab %s drifted from the README, %s\nwhole output:\n%s%s",
					ex.line, strings.Join(ex.args, " "), d, out.String(), errOut.String())
			}
		})
	}
}

// buildRacelab builds racelab as a user gets it, without the race
// detector, into a folder t removes. The examples are checked for what
// they print, not for races (every code path they take is tested under
// -race elsewhere), and a race build runs the README's runs of hundreds of
// trials some twenty times slower. The flags are the GitHub Actions
// workflow's build (TestProcesses), so one of the two
// finds the other's packages in the build cache.
func buildRacelab(t *testing.T) string {
	t.Helper()
	bin := filepath.Join(t.TempDir(), "racelab")
	cmd := exec.Command("go", "build", "-trimpath", "-o", bin, ".")
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("go build racelab: %v\n%s", err, out)
	}
	return bin
}

// TestREADMEExampleReader checks the reader itself on what it must catch:
// a changed byte in a shown line, a lost line, a real-clock figure that
// may differ, a mark it cannot read.
func TestREADMEExampleReader(t *testing.T) {
	want := "kv: 5 allowed\nrelease spread: max 1.2ms across the bursts on the real clock (sqlite)\n"
	for _, tc := range []struct {
		got   string
		match bool
	}{
		{"kv: 5 allowed\nrelease spread: max 1.2ms across the bursts on the real clock (sqlite)\n", true},
		{"kv: 5 allowed\nrelease spread: max 31µs across the bursts on the real clock (sqlite)\n", true},
		{"kv: 6 allowed\nrelease spread: max 1.2ms across the bursts on the real clock (sqlite)\n", false},
		{"kv: 5 allowed\nrelease spread: max 1.2ms across the bursts on the real clock (redis)\n", false},
		{"kv: 5 allowed\n", false},
		{"kv: 5 allowed\nrelease spread: max 1.2ms across the bursts on the real clock (sqlite)\nmore\n", false},
	} {
		if got := readmeDiff(want, tc.got) == ""; got != tc.match {
			t.Errorf("readmeDiff(%q, %q): match %v, want %v", want, tc.got, got, tc.match)
		}
	}
	if !readmeLineMatches("valid: kv, …, http://HOST:PORT)", "valid: kv, actor, sqlite, http://HOST:PORT)") ||
		readmeLineMatches("valid: kv, …, http://HOST:PORT)", "valid: actor, http://HOST:PORT)") {
		t.Error("… must stand for any text and nothing else")
	}
	dir := t.TempDir()
	for _, bad := range []string{
		"<!-- readme-test colums=80 -->\n```\n$ racelab list\n```\n",
		"<!-- readme-test -->\ntext\n",
		"<!-- readme-test -->\n```\nlist\n```\n",
		"<!-- readme-test -->\n```\n$ racelab list\n",
		"<!-- readme-test: racelab list -->\n",
	} {
		path := dir + "/README.md"
		if err := os.WriteFile(path, []byte(bad), 0o644); err != nil {
			t.Fatal(err)
		}
		if _, err := readmeExamples(path); err == nil {
			t.Errorf("readmeExamples took %q", bad)
		}
	}
}

// TestREADMEFlagsExist checks every racelab command line in the README's
// shell blocks and inline code for flags racelab no longer has: each is
// parsed with --help added, which checks the flags without running.
func TestREADMEFlagsExist(t *testing.T) {
	f, err := os.Open("../../README.md")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	inSh, n, checked := false, 0, 0
	for sc.Scan() {
		n++
		line := strings.TrimSpace(sc.Text())
		if strings.HasPrefix(line, "```") {
			inSh = !inSh && (line == "```sh" || line == "```")
			continue
		}
		if !inSh {
			continue
		}
		cmd, ok := strings.CutPrefix(strings.TrimPrefix(line, "$ "), "racelab ")
		if !ok {
			continue
		}
		args, err := starter.Split(cmd)
		if err != nil || strings.HasSuffix(cmd, "\\") {
			continue // shell syntax, or a line that goes on: not parsed here
		}
		checked++
		s, _, errOut := testStreams("")
		if code := Main(context.Background(), append(args, "--help"), s, testCatalog); code != exitOK {
			t.Errorf("README.md:%d: racelab %s: %s", n, cmd, strings.TrimSpace(errOut.String()))
		}
	}
	if checked < 20 {
		t.Errorf("checked %d README command lines; the reader lost them?", checked)
	}
}

// needServers skips t, or fails it under CI=true, unless the Redis and
// PostgreSQL servers the real-store targets use answer a connection.
func needServers(t *testing.T) {
	t.Helper()
	for env, def := range map[string]string{
		"RACELAB_REDIS_URL":    "redis://127.0.0.1:56379/0",
		"RACELAB_POSTGRES_URL": "postgres://racelab@127.0.0.1:55432/racelab?sslmode=disable",
	} {
		u, err := url.Parse(storetest.URL(env, def))
		if err != nil {
			t.Fatalf("%s: %v", env, err)
		}
		c, err := net.DialTimeout("tcp", u.Host, 2*time.Second)
		if err != nil {
			storetest.Unreachable(t, env, err)
		}
		c.Close()
	}
}

// TestREADMERunFlags checks that every flag the README's table of run's
// flags names is a flag of racelab run.
func TestREADMERunFlags(t *testing.T) {
	data, err := os.ReadFile("../../README.md")
	if err != nil {
		t.Fatal(err)
	}
	_, section, ok := strings.Cut(string(data), "## Flags of `racelab run`")
	if !ok {
		t.Fatal("README.md has no section \"Flags of `racelab run`\"")
	}
	section, _, _ = strings.Cut(section, "\n## ")
	s, _, _ := testStreams("")
	run, _, err := newRootCmd(s, testCatalog).Find([]string{"run"})
	if err != nil {
		t.Fatal(err)
	}
	names := regexp.MustCompile("`-(-[a-z][a-z-]*|[a-z])\\b").FindAllStringSubmatch(section, -1)
	if len(names) < 30 {
		t.Fatalf("found %d flags in the README's table; the table was lost?", len(names))
	}
	for _, m := range names {
		name := m[1]
		var found bool
		if long, ok := strings.CutPrefix(name, "-"); ok {
			found = run.Flags().Lookup(long) != nil || run.InheritedFlags().Lookup(long) != nil
		} else {
			found = run.Flags().ShorthandLookup(name) != nil || run.InheritedFlags().ShorthandLookup(name) != nil
		}
		if !found {
			t.Errorf("README.md's table of run's flags names -%s, which racelab run does not have", name)
		}
	}
}
