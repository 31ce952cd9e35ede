package report

import (
	"bytes"
	"encoding/xml"
	"fmt"
	"io"
	"strconv"
	"strings"
	"time"

	"github.com/racelab/racelab/scenarios/results"
)

// The JUnit XML report, for CI systems that show test results (GitLab,
// Jenkins, GitHub test reporters): one <testsuite> per scenario, one
// <testcase> per target. A test case fails exactly when the target fails
// the run (exit 3), errors when racelab could not run it (exit 1), and is
// skipped when an interrupt left it without trials. Its failure text has
// the counts, the plain-words lines about the target, and the bound on the
// rate of breaking; passing cases carry the same in <system-out>, so that
// the proof of a fix is on record too.
//
// The element and attribute names are those of the common JUnit schema
// (Ant's, as Jenkins and GitLab read it). encoding/xml writes the text, so
// every string is escaped, and characters XML cannot hold become U+FFFD.

type junitSuites struct {
	XMLName  xml.Name     `xml:"testsuites"`
	Name     string       `xml:"name,attr"`
	Tests    int          `xml:"tests,attr"`
	Failures int          `xml:"failures,attr"`
	Errors   int          `xml:"errors,attr"`
	Time     string       `xml:"time,attr"`
	Suites   []junitSuite `xml:"testsuite"`
	total    time.Duration
}

// add puts a suite that took d into the document and its totals.
func (doc *junitSuites) add(suite junitSuite, d time.Duration) {
	doc.Suites = append(doc.Suites, suite)
	doc.Tests += suite.Tests
	doc.Failures += suite.Failures
	doc.Errors += suite.Errors
	doc.total += d
}

// write encodes the document, indented, after the XML header.
func (doc *junitSuites) write(b *bytes.Buffer) error {
	doc.Time = seconds(doc.total)
	b.WriteString(xml.Header)
	enc := xml.NewEncoder(b)
	enc.Indent("", "  ")
	if err := enc.Encode(doc); err != nil {
		return fmt.Errorf("encode junit: %w", err)
	}
	b.WriteByte('\n')
	return nil
}

type junitSuite struct {
	Name       string          `xml:"name,attr"`
	Tests      int             `xml:"tests,attr"`
	Failures   int             `xml:"failures,attr"`
	Errors     int             `xml:"errors,attr"`
	Skipped    int             `xml:"skipped,attr"`
	Time       string          `xml:"time,attr"`
	Properties []junitProperty `xml:"properties>property"`
	Cases      []junitCase     `xml:"testcase"`
}

type junitProperty struct {
	Name  string `xml:"name,attr"`
	Value string `xml:"value,attr"`
}

type junitCase struct {
	Name      string        `xml:"name,attr"`
	Classname string        `xml:"classname,attr"`
	Time      string        `xml:"time,attr"`
	Failure   *junitProblem `xml:"failure"`
	Error     *junitProblem `xml:"error"`
	Skipped   *junitSkipped `xml:"skipped"`
	SystemOut *junitOut     `xml:"system-out"`
}

// junitProblem is a <failure> or an <error>: a one-line message and the
// whole story as text. The text is CDATA so that its lines stay lines for
// whoever opens the file; encoding/xml would write each newline as &#xA;.
type junitProblem struct {
	Message string `xml:"message,attr"`
	Type    string `xml:"type,attr"`
	Text    string `xml:",cdata"`
}

// junitOut is a <system-out>.
type junitOut struct {
	Text string `xml:",cdata"`
}

type junitSkipped struct {
	Message string `xml:"message,attr"`
}

// renderJUnit writes every result as one JUnit document.
func renderJUnit(w io.Writer, rs []*results.Result, o Options) error {
	doc := junitSuites{Name: "racelab"}
	for _, r := range rs {
		doc.add(junitSuiteOf(r, o))
	}
	var b bytes.Buffer
	if err := doc.write(&b); err != nil {
		return err
	}
	_, err := w.Write(b.Bytes())
	return err
}

// junitSuiteOf is one scenario's suite, and the time its bursts took.
func junitSuiteOf(r *results.Result, o Options) (junitSuite, time.Duration) {
	s := summarize(r, o)
	suite := junitSuite{
		Name: r.Scenario,
		Properties: []junitProperty{
			{"rule", r.Rule},
			{"requests", strconv.Itoa(r.Requests)},
			{"trials", strconv.Itoa(r.Trials)},
			{"seed", strconv.FormatInt(r.Seed, 10)},
			{"schema", results.SchemaVersion},
		},
	}
	if r.MaxRate > 0 {
		suite.Properties = append(suite.Properties,
			junitProperty{"confidence", results.Percent(r.Confidence)}, junitProperty{"max-rate", results.Percent(r.MaxRate)})
	}
	labels := results.Labels(r.Targets)
	var total time.Duration
	for i := range r.Targets {
		tr := &r.Targets[i]
		d := burstTime(tr)
		total += d
		c := junitCase{Name: labels[i], Classname: "racelab." + r.Scenario, Time: seconds(d)}
		text := xmlSafe(junitText(r, s, tr, i, labels[i]))
		switch {
		case tr.Error != "":
			c.Error = &junitProblem{Message: prefixed(labels[i], tr.Error), Type: "error", Text: text}
			suite.Errors++
		case tr.Strict && tr.Inconclusive():
			// No verdict is not a pass: an error, as a target that could
			// not be run, not a failure of the rule.
			sum := tr.Summary()
			c.Error = &junitProblem{Message: sum.InconclusiveWhy(labels[i]), Type: "inconclusive", Text: text}
			suite.Errors++
		case len(tr.Trials) == 0:
			c.Skipped = &junitSkipped{Message: s.verdict(i)} // "interrupted", "no trials"
			suite.Skipped++
		case tr.Failed():
			c.Failure = &junitProblem{Message: labels[i] + ": " + s.verdict(i), Type: "rule", Text: text}
			suite.Failures++
		default:
			c.SystemOut = &junitOut{Text: text}
		}
		suite.Cases = append(suite.Cases, c)
	}
	suite.Tests = len(suite.Cases)
	suite.Time = seconds(total)
	return suite, total
}

// junitText is a target's whole account: its row of the summary as
// "COLUMN: cell" lines, the bound, then the plain-words lines about it.
func junitText(r *results.Result, s summary, tr *results.TargetResult, i int, label string) string {
	var b strings.Builder
	fmt.Fprintf(&b, "%s on %s: %s\n%s\n\n", r.Scenario, label, r.Rule, s.scale)
	for j, c := range s.cols {
		fmt.Fprintf(&b, "%s: %s\n", strings.ToLower(c.label()), s.rows[i][j])
	}
	if len(tr.Trials) > 0 {
		bnd := tr.Evidence()
		fmt.Fprintf(&b, "bound: %d of %d conclusive trials broke", bnd.Broken, bnd.Trials)
		switch {
		case bnd.Trials == 0:
			b.WriteString(": nothing proven\n")
		case bnd.Broken == 0:
			fmt.Fprintf(&b, "; at %s confidence the rate of breaking is below %s\n", results.Percent(bnd.Level), results.PercentUp(bnd.Upper))
		case bnd.Upper >= 1:
			fmt.Fprintf(&b, ": rate %s\n", results.PercentNear(float64(bnd.Broken)/float64(bnd.Trials)))
		default:
			fmt.Fprintf(&b, ": rate %s, at most %s at %s confidence\n",
				results.PercentNear(float64(bnd.Broken)/float64(bnd.Trials)), results.PercentUp(bnd.Upper), results.Percent(bnd.Level))
		}
	}
	if own := s.own[i]; len(own) > 0 {
		b.WriteString("\n" + strings.Join(own, "\n") + "\n")
	}
	return b.String()
}

// burstTime is the time the target's bursts took, from each release to
// its last answer: what the result knows of how long the test ran.
func burstTime(tr *results.TargetResult) time.Duration { s := tr.Summary(); return s.BurstTime }

// xmlSafe replaces the characters XML 1.0 cannot hold, such as control
// characters in a target's error text, with U+FFFD: encoding/xml does so
// for escaped text, but writes CDATA as it is.
func xmlSafe(s string) string {
	return strings.Map(func(r rune) rune {
		switch {
		case r == '\t' || r == '\n' || r == '\r',
			r >= 0x20 && r <= 0xD7FF, r >= 0xE000 && r <= 0xFFFD, r >= 0x10000 && r <= 0x10FFFF:
			return r
		}
		return '\uFFFD'
	}, s)
}

// seconds writes d as JUnit's time attribute: seconds, to the millisecond.
func seconds(d time.Duration) string { return strconv.FormatFloat(d.Seconds(), 'f', 3, 64) }
