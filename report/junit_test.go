package report

import (
	"bytes"
	"encoding/xml"
	"strings"
	"testing"

	"github.com/racelab/racelab/scenarios/results"
)

// The test's own reading of a JUnit file: what a CI system looks for,
// declared apart from the renderer's types so that a renamed field there
// cannot make both sides agree on a wrong document.
type parsedSuites struct {
	XMLName  xml.Name      `xml:"testsuites"`
	Tests    int           `xml:"tests,attr"`
	Failures int           `xml:"failures,attr"`
	Errors   int           `xml:"errors,attr"`
	Suites   []parsedSuite `xml:"testsuite"`
}

type parsedSuite struct {
	Name     string `xml:"name,attr"`
	Tests    int    `xml:"tests,attr"`
	Failures int    `xml:"failures,attr"`
	Errors   int    `xml:"errors,attr"`
	Skipped  int    `xml:"skipped,attr"`
	Props    []struct {
		Name  string `xml:"name,attr"`
		Value string `xml:"value,attr"`
	} `xml:"properties>property"`
	Cases []parsedCase `xml:"testcase"`
}

type parsedCase struct {
	Name      string `xml:"name,attr"`
	Classname string `xml:"classname,attr"`
	Time      string `xml:"time,attr"`
	Failure   *struct {
		Message string `xml:"message,attr"`
		Text    string `xml:",chardata"`
	} `xml:"failure"`
	Error *struct {
		Message string `xml:"message,attr"`
		Text    string `xml:",chardata"`
	} `xml:"error"`
	Skipped   *struct{} `xml:"skipped"`
	SystemOut string    `xml:"system-out"`
}

// parseJUnit reads a JUnit document strictly: well-formed XML, one root.
func parseJUnit(t *testing.T, doc []byte) parsedSuites {
	t.Helper()
	var p parsedSuites
	dec := xml.NewDecoder(bytes.NewReader(doc))
	dec.Strict = true
	if err := dec.Decode(&p); err != nil {
		t.Fatalf("not valid JUnit XML: %v\n%s", err, doc)
	}
	return p
}

// TestJUnitParses checks every fixture's JUnit against its result: one
// case per target, failing exactly when the target fails the run, the
// totals adding up, and the failure text carrying the counts and bound.
func TestJUnitParses(t *testing.T) {
	for _, fx := range fixtures {
		t.Run(fx.name, func(t *testing.T) {
			r := fx.result()
			p := parseJUnit(t, render(t, r, JUnit))
			if len(p.Suites) != 1 {
				t.Fatalf("%d suites, want 1", len(p.Suites))
			}
			s := p.Suites[0]
			if s.Name != r.Scenario || s.Tests != len(r.Targets) || len(s.Cases) != len(r.Targets) || p.Tests != s.Tests {
				t.Fatalf("suite %q with %d (%d) cases, root %d; want %q with %d", s.Name, s.Tests, len(s.Cases), p.Tests, r.Scenario, len(r.Targets))
			}
			var failures, errs, skipped int
			for i, c := range s.Cases {
				tr := &r.Targets[i]
				if c.Classname != "racelab."+r.Scenario || c.Name == "" || c.Time == "" {
					t.Errorf("case %d: name %q, classname %q, time %q", i, c.Name, c.Classname, c.Time)
				}
				switch {
				case tr.Error != "":
					errs++
					if c.Error == nil || !strings.Contains(c.Error.Message, tr.Error) {
						t.Errorf("%s: want an <error> with %q, got %+v", c.Name, tr.Error, c.Error)
					}
				case len(tr.Trials) == 0:
					skipped++
					if c.Skipped == nil {
						t.Errorf("%s: no trials, want <skipped>", c.Name)
					}
				case tr.Failed():
					failures++
					if c.Failure == nil {
						t.Fatalf("%s fails the run but has no <failure>", c.Name)
					}
					for _, want := range []string{"allowed: ", "counted", "worst trial: ", "bound: ", tr.Target + ": "} {
						if !strings.Contains(c.Failure.Text, want) {
							t.Errorf("%s: failure text lacks %q:\n%s", c.Name, want, c.Failure.Text)
						}
					}
				default:
					if c.Failure != nil || c.Error != nil {
						t.Errorf("%s passes the run but has a failure or an error", c.Name)
					}
					if !strings.Contains(c.SystemOut, "bound: ") {
						t.Errorf("%s: system-out lacks the bound:\n%s", c.Name, c.SystemOut)
					}
				}
			}
			if s.Failures != failures || s.Errors != errs || s.Skipped != skipped || p.Failures != failures || p.Errors != errs {
				t.Errorf("counts: suite %d/%d/%d root %d/%d; want failures %d, errors %d, skipped %d",
					s.Failures, s.Errors, s.Skipped, p.Failures, p.Errors, failures, errs, skipped)
			}
		})
	}
}

// TestJUnitHostileText checks that text XML cannot hold, or that would
// close a CDATA section, still makes a valid document that says it.
func TestJUnitHostileText(t *testing.T) {
	r := strictBroke()
	r.Targets[0].Trials[17].Why = "svc: ]]> <failure> & \x00\x1b[31m"
	r.Targets[1].Error = "boom \x07 ]]>"
	p := parseJUnit(t, render(t, r, JUnit))
	c := p.Suites[0].Cases
	if c[0].Failure == nil || !strings.Contains(c[0].Failure.Text, "svc: ]]> <failure> & \uFFFD\uFFFD[31m") {
		t.Errorf("failure text lost the hostile line: %+v", c[0].Failure)
	}
	if c[1].Error == nil || !strings.Contains(c[1].Error.Message, "boom \uFFFD ]]>") {
		t.Errorf("error lost its message: %+v", c[1].Error)
	}
}

// TestJUnitSeveralResults checks that results of several scenarios make
// one document with a suite each.
func TestJUnitSeveralResults(t *testing.T) {
	var b bytes.Buffer
	rs := []*results.Result{tenHitsOneView(), fiveCheckoutsErrors(), strictBroke()}
	if err := RenderAll(&b, rs, JUnit, Options{}); err != nil {
		t.Fatal(err)
	}
	p := parseJUnit(t, b.Bytes())
	if len(p.Suites) != 3 || p.Tests != 3+4+2 || p.Failures != 1 || p.Errors != 2 {
		t.Errorf("%d suites, %d tests, %d failures, %d errors; want 3, 9, 1, 2", len(p.Suites), p.Tests, p.Failures, p.Errors)
	}
}
