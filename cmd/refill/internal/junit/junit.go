// Package junit writes refill test's results as JUnit XML, in the form CI
// systems (GitHub Actions reporters, GitLab, Jenkins) read: testsuites >
// testsuite > testcase, with failure and skipped children.
package junit

import (
	"encoding/xml"
	"fmt"
	"os"
	"strings"
	"time"

	"github.com/refill/refill/runner/check"
)

// Suites is the document: one Suite per kind of check.
type Suites struct {
	XMLName  xml.Name `xml:"testsuites"`
	Name     string   `xml:"name,attr"`
	Tests    int      `xml:"tests,attr"`
	Failures int      `xml:"failures,attr"`
	Skipped  int      `xml:"skipped,attr"`
	Time     string   `xml:"time,attr"`
	Suites   []Suite  `xml:"testsuite"`
}

// Suite holds the checks of one kind (validate, render, run, audit, unit).
type Suite struct {
	Name     string `xml:"name,attr"`
	Tests    int    `xml:"tests,attr"`
	Failures int    `xml:"failures,attr"`
	Errors   int    `xml:"errors,attr"`
	Skipped  int    `xml:"skipped,attr"`
	Time     string `xml:"time,attr"`
	Cases    []Case `xml:"testcase"`
	elapsed  time.Duration
}

// Case is one check.
type Case struct {
	Classname string   `xml:"classname,attr"`
	Name      string   `xml:"name,attr"`
	Time      string   `xml:"time,attr"`
	Failure   *Message `xml:"failure,omitempty"`
	Skipped   *Message `xml:"skipped,omitempty"`
	SystemOut string   `xml:"system-out,omitempty"`
}

// Message is a failure's or a skip's reason.
type Message struct {
	Message string `xml:"message,attr"`
	Type    string `xml:"type,attr,omitempty"`
	Text    string `xml:",chardata"`
}

// New returns the document of checks, which took elapsed in all; a check
// that did not run a sampled model fails unless allowUnsampled.
func New(checks []check.Result, elapsed time.Duration, allowUnsampled bool) *Suites {
	out := &Suites{Name: "refill test", Time: seconds(elapsed)}
	index := map[string]int{}
	for _, c := range checks {
		i, ok := index[c.Suite]
		if !ok {
			i = len(out.Suites)
			index[c.Suite] = i
			out.Suites = append(out.Suites, Suite{Name: c.Suite})
		}
		s := &out.Suites[i]
		tc := Case{Classname: "refill." + c.Suite, Name: c.Name, Time: seconds(c.Duration)}
		switch {
		case c.Status.Fails(allowUnsampled):
			tc.Failure = &Message{Message: firstLine(c.Message), Type: c.Suite, Text: c.Message + "\n" + c.Detail}
			s.Failures++
			out.Failures++
		case c.Status == check.Skipped || c.Status == check.NotRun:
			tc.Skipped = &Message{Message: firstLine(c.Message)}
			s.Skipped++
			out.Skipped++
		default:
			tc.SystemOut = c.Message
		}
		s.Tests++
		out.Tests++
		s.elapsed += c.Duration
		s.Time = seconds(s.elapsed)
		s.Cases = append(s.Cases, tc)
	}
	return out
}

// Write writes the document of checks (see New) to path.
func Write(path string, checks []check.Result, elapsed time.Duration, allowUnsampled bool) error {
	b, err := xml.MarshalIndent(New(checks, elapsed, allowUnsampled), "", "  ")
	if err != nil {
		return err
	}
	b = append([]byte(xml.Header), append(b, '\n')...)
	return os.WriteFile(path, b, 0o644)
}

func seconds(d time.Duration) string { return fmt.Sprintf("%.3f", d.Seconds()) }

func firstLine(s string) string {
	line, _, _ := strings.Cut(s, "\n")
	return line
}
