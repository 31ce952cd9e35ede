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

	"github.com/racelab/racelab/report"
)

func TestOutputFlagsParse(t *testing.T) {
	dir := t.TempDir()
	formats := []string{"table", "json", "junit"}
	for _, tc := range []struct {
		raw     []string
		want    []report.Output
		wantErr string
	}{
		{nil, []report.Output{{Format: "table"}}, ""},
		{[]string{"JSON"}, []report.Output{{Format: "json"}}, ""},
		{[]string{"table", "junit=" + dir + "/r.xml", "json+=" + dir + "/r.json"},
			[]report.Output{{Format: "table"}, {Format: "junit", Path: dir + "/r.xml"}, {Format: "json", Path: dir + "/r.json", Append: true}}, ""},
		{[]string{"json=-"}, []report.Output{{Format: "json"}}, ""},
		{[]string{"xml"}, nil, `-o xml: unknown output format "xml"`},
		{[]string{"table", "json"}, nil, "-o table and -o json would both write to standard output"},
		{[]string{"json="}, nil, "no file after ="},
		{[]string{"json=" + dir + "/a", "junit=" + dir + "/./a"}, nil, "name the same file"},
		{[]string{"json=" + dir + "/no/such/r.json"}, nil, "no folder " + dir + "/no/such"},
		{[]string{"json=" + dir}, nil, "is a folder"},
	} {
		o := outputFlags{raw: tc.raw, formats: formats}
		got, err := o.parse()
		if tc.wantErr != "" {
			if err == nil || !strings.Contains(sayFlags(err), tc.wantErr) || exitCode(err) != exitUsage {
				t.Errorf("%q: error %v (exit %d), want one with %q, exit 2", tc.raw, err, exitCode(err), tc.wantErr)
			}
			continue
		}
		if err != nil || len(got) != len(tc.want) {
			t.Errorf("%q: %+v, %v; want %+v", tc.raw, got, err, tc.want)
			continue
		}
		for i := range got {
			if got[i] != tc.want[i] {
				t.Errorf("%q: output %d = %+v, want %+v", tc.raw, i, got[i], tc.want[i])
			}
		}
	}
}

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
