package main

import (
	"bytes"
	"context"
	"encoding/json"
	"encoding/xml"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestSeveralOutputs runs once and writes a table, JUnit, JSON and
// markdown (appended, as to a CI job summary), then re-renders the JSON
// with report, several outputs again.
func TestSeveralOutputs(t *testing.T) {
	dir := t.TempDir()
	summary := filepath.Join(dir, "summary.md")
	if err := os.WriteFile(summary, []byte("earlier step\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	xmlPath, jsonPath := filepath.Join(dir, "r.xml"), filepath.Join(dir, "r.json")
	stdout := executeWant(t, context.Background(), exitOK, "run", "five-checkouts", "--seed", "42",
		"-o", "table", "-o", "junit="+xmlPath, "-o", "json="+jsonPath, "-o", "markdown+="+summary)
	if !strings.Contains(stdout, "| TARGET ") || strings.Contains(stdout, "<testsuites") {
		t.Errorf("stdout is not the table alone:\n%s", stdout)
	}
	data, err := os.ReadFile(xmlPath)
	if err != nil {
		t.Fatal(err)
	}
	var suites struct {
		Tests int `xml:"tests,attr"`
	}
	if err := xml.Unmarshal(data, &suites); err != nil || suites.Tests != 3 {
		t.Errorf("r.xml: %d tests, %v; want 3:\n%s", suites.Tests, err, data)
	}
	data, err = os.ReadFile(jsonPath)
	if err != nil {
		t.Fatal(err)
	}
	var res struct{ Scenario string }
	if err := json.Unmarshal(data, &res); err != nil || res.Scenario != "five-checkouts" {
		t.Errorf("r.json: scenario %q, %v", res.Scenario, err)
	}
	data, err = os.ReadFile(summary)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(string(data), "earlier step\n### five-checkouts") {
		t.Errorf("markdown was not appended:\n%s", data)
	}
	htmlPath := filepath.Join(dir, "r.html")
	stdout = executeWant(t, context.Background(), exitOK, "report", jsonPath, "-o", "html="+htmlPath, "-o", "junit")
	if !strings.HasPrefix(stdout, "<?xml") {
		t.Errorf("report's stdout is not JUnit:\n%s", stdout)
	}
	if data, err := os.ReadFile(htmlPath); err != nil || !bytes.Contains(data, []byte("<html")) {
		t.Errorf("report's r.html: %v\n%.200s", err, data)
	}
}

// TestFilesStillShowTheTable: with every output going to a file, run
// still prints the table on standard output (as k6 prints its summary),
// and -q leaves it out; one output on standard output is the only one
// there.
func TestFilesStillShowTheTable(t *testing.T) {
	dir := t.TempDir()
	for _, tc := range []struct {
		args  []string
		table bool
	}{
		{[]string{"-o", "json=" + filepath.Join(dir, "a.json")}, true},
		{[]string{"-o", "json=" + filepath.Join(dir, "b.json"), "-o", "junit=" + filepath.Join(dir, "b.xml")}, true},
		{[]string{"-o", "json=" + filepath.Join(dir, "c.json"), "-q"}, false},
		{[]string{"-o", "json=" + filepath.Join(dir, "d.json"), "-o", "junit"}, false},
	} {
		args := append([]string{"run", "ten-hits-one-view", "-t", "actor", "--seed", "3"}, tc.args...)
		stdout := executeWant(t, context.Background(), exitOK, args...)
		if got := strings.Contains(stdout, "| TARGET "); got != tc.table {
			t.Errorf("racelab %s: table on stdout %v, want %v:\n%s", strings.Join(args, " "), got, tc.table, stdout)
		}
	}
}
