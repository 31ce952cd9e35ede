package main

import (
	"context"
	"strings"
	"testing"
)

// TestCompletionOffersWhatRuns checks that the shell is offered only what
// the command would take: after a scenario, the targets that can play it;
// --wide only on commands that draw tables.
func TestCompletionOffersWhatRuns(t *testing.T) {
	ctx := context.Background()
	offers := func(args ...string) []string {
		t.Helper()
		out := executeWant(t, ctx, exitOK, append([]string{"__complete"}, args...)...)
		var names []string
		for _, line := range strings.Split(out, "\n") {
			if name, _, _ := strings.Cut(line, "\t"); name != "" && !strings.HasPrefix(name, ":") {
				names = append(names, name)
			}
		}
		return names
	}
	has := func(list []string, name string) bool {
		for _, n := range list {
			if n == name {
				return true
			}
		}
		return false
	}
	for _, tc := range []struct {
		args   []string
		name   string
		offers bool
	}{
		{[]string{"run", "five-checkouts", "-t", ""}, "hybrid", false},
		{[]string{"run", "five-checkouts", "-t", ""}, "sqlite", true},
		{[]string{"run", "stale-plan", "-t", ""}, "hybrid", true},
		{[]string{"explain", "five-checkouts", "--fixed", ""}, "hybrid", false},
		{[]string{"serve", "--store", ""}, "hybrid", true}, // no scenario: every store
		{[]string{"run", "five-checkouts", "--"}, "--wide", true},
		{[]string{"list", "--"}, "--wide", true},
		{[]string{"version", "--"}, "--wide", false},
		{[]string{"completion", "bash", "--"}, "--wide", false},
	} {
		if got := has(offers(tc.args...), tc.name); got != tc.offers {
			t.Errorf("racelab __complete %s: offers %s = %v, want %v", strings.Join(tc.args, " "), tc.name, got, tc.offers)
		}
	}
	for _, cmd := range []string{"version", "completion"} {
		if help := executeWant(t, ctx, exitOK, cmd, "--help"); strings.Contains(help, "--wide") {
			t.Errorf("racelab %s --help offers --wide:\n%s", cmd, help)
		}
	}
	if help := executeWant(t, ctx, exitOK, "--help"); !strings.Contains(help, "racelab's version, with Go's") {
		t.Errorf("racelab --help does not say what --version prints:\n%s", help)
	}
}

// TestUsageWords checks the words of refusals a newcomer meets first.
func TestUsageWords(t *testing.T) {
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"list", "extra"}, "got 1 argument (see"},
		{[]string{"version", "a", "b"}, "got 2 arguments (see"},
		{[]string{"explain"}, "racelab explain takes one scenario (ten-hits-one-view, six-become-four, five-checkouts, six-of-five, stale-plan); got 0 arguments"},
		{[]string{"run", "five-checkouts", "-t", "shop:fail-open"}, "shop:… rows are the shop designs"},
	} {
		code, _, stderr := execute(context.Background(), tc.args...)
		if code != exitUsage || !strings.Contains(stderr, tc.want) {
			t.Errorf("racelab %s: exit %d, stderr %q; want exit %d saying %q", strings.Join(tc.args, " "), code, stderr, exitUsage, tc.want)
		}
	}
}
