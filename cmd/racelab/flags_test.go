package main

import (
	"context"
	"strings"
	"testing"
)

// TestFieldsSaidAsFlags: the plans, the stories and the catalog name
// their own fields and settings; the command line says each as the flag
// that sets it, in one line, exit 2.
func TestFieldsSaidAsFlags(t *testing.T) {
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"run", "ten-hits-one-view", "-t", "redis", "--redis-url", "notaurl"}, `racelab: --redis-url (or RACELAB_REDIS_URL) "notaurl" is not usable: not a URL`},
		{[]string{"run", "five-checkouts", "--stock", "0"}, "racelab: --stock 0: want 1 to 10000 copies\n"},
		{[]string{"run", "six-of-five", "--window", "2s", "--rate", "20000/s"}, "racelab: --rate 20000/s over a 2s window is "},
		{[]string{"run", "ten-hits-one-view", "--trials", "0"}, "racelab: --trials 0: want 1 or more\n"},
		{[]string{"run", "ten-hits-one-view", "--gap", "-1s"}, "racelab: --gap -1s: want a positive duration such as 3s\n"},
		{[]string{"load", "ten-hits-one-view", "--keys", "0"}, "racelab: --keys 0: want 1 to "},
		{[]string{"load", "ten-hits-one-view", "--concurrency", "-2"}, "racelab: --concurrency -2: want 1 to "},
		{[]string{"run", "ten-hits-one-view", "--shard", "0/2", "--run-id", "a b", "-t", "sqlite?path=x.db"}, `racelab: --run-id "a b": want 1 to 40 letters`},
	} {
		code, _, stderr := execute(context.Background(), tc.args...)
		if code != exitUsage || !strings.HasPrefix(stderr, tc.want) || strings.Count(stderr, "\n") != 1 {
			t.Errorf("%s: exit %d, stderr %q; want exit 2 and one line starting %q", strings.Join(tc.args, " "), code, stderr, tc.want)
		}
	}
}

// TestKnobsFromStories: every knob a story declares is a flag of run, with
// the story's help, and a knob given to a story without it names its owner.
func TestKnobsFromStories(t *testing.T) {
	out := executeWant(t, context.Background(), exitOK, "run", "--help", "--wide")
	for _, want := range []string{"--stock string", "five-checkouts: copies of each item", "--rollover", "six-of-five, stale-plan: spacing of a stream's arrivals",
		"six-of-five: stream one caller's requests", "stale-plan: the rate of downloads"} {
		if !strings.Contains(out, want) {
			t.Errorf("run --help lacks %q", want)
		}
	}
	code, _, stderr := execute(context.Background(), "run", "ten-hits-one-view", "--rollover")
	if code != exitUsage || stderr != "racelab: --rollover is a setting of six-of-five, not ten-hits-one-view\n" {
		t.Errorf("--rollover on ten-hits: exit %d, %q", code, stderr)
	}
}

// TestMissingRaceFile: a name that is a race file's, which is not there,
// is said as a missing file, not as an unknown story.
func TestMissingRaceFile(t *testing.T) {
	code, _, stderr := execute(context.Background(), "run", "nothere.race.yaml")
	if code != exitUsage || stderr != "racelab: race file nothere.race.yaml: no such file; want the path of a *.race.yaml file (racelab race init writes one)\n" {
		t.Errorf("exit %d, %q", code, stderr)
	}
}
