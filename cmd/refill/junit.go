package main

import (
	"encoding/xml"
	"fmt"
	"os"
	"time"

	"github.com/refill/refill/runner/check"
)

// JUnit XML, in the form CI systems (GitHub Actions reporters, GitLab,
// Jenkins) read: testsuites > testsuite > testcase, with failure and
// skipped children.

type junitSuites struct {
	XMLName  xml.Name     `xml:"testsuites"`
	Name     string       `xml:"name,attr"`
	Tests    int          `xml:"tests,attr"`
	Failures int          `xml:"failures,attr"`
	Skipped  int          `xml:"skipped,attr"`
	Time     string       `xml:"time,attr"`
	Suites   []junitSuite `xml:"testsuite"`
}

type junitSuite struct {
	Name     string      `xml:"name,attr"`
	Tests    int         `xml:"tests,attr"`
	Failures int         `xml:"failures,attr"`
	Errors   int         `xml:"errors,attr"`
	Skipped  int         `xml:"skipped,attr"`
	Time     string      `xml:"time,attr"`
	Cases    []junitCase `xml:"testcase"`
}

type junitCase struct {
	Classname string        `xml:"classname,attr"`
	Name      string        `xml:"name,attr"`
	Time      string        `xml:"time,attr"`
	Failure   *junitMessage `xml:"failure,omitempty"`
	Skipped   *junitMessage `xml:"skipped,omitempty"`
	SystemOut string        `xml:"system-out,omitempty"`
}

type junitMessage struct {
	Message string `xml:"message,attr"`
	Type    string `xml:"type,attr,omitempty"`
	Text    string `xml:",chardata"`
}

func seconds(d time.Duration) string { return fmt.Sprintf("%.3f", d.Seconds()) }

// writeJUnit writes one test case per check, grouped into a suite per kind
// of check.
func writeJUnit(path string, checks []check.Result, elapsed time.Duration, allowUnsampled bool) error {
	out := junitSuites{Name: "refill test", Time: seconds(elapsed)}
	index := map[string]int{}
	for _, c := range checks {
		i, ok := index[c.Suite]
		if !ok {
			i = len(out.Suites)
			index[c.Suite] = i
			out.Suites = append(out.Suites, junitSuite{Name: c.Suite})
		}
		s := &out.Suites[i]
		tc := junitCase{Classname: "refill." + c.Suite, Name: c.Name, Time: seconds(c.Duration)}
		switch {
		case c.Status.Fails(allowUnsampled):
			tc.Failure = &junitMessage{Message: firstLine(c.Message), Type: c.Suite, Text: c.Message + "\n" + c.Detail}
			s.Failures++
			out.Failures++
		case c.Status == check.Skipped || c.Status == check.NotRun:
			tc.Skipped = &junitMessage{Message: firstLine(c.Message)}
			s.Skipped++
			out.Skipped++
		default:
			tc.SystemOut = c.Message
		}
		s.Tests++
		out.Tests++
		s.Time = seconds(parseSeconds(s.Time) + c.Duration)
		s.Cases = append(s.Cases, tc)
	}
	b, err := xml.MarshalIndent(out, "", "  ")
	if err != nil {
		return err
	}
	b = append([]byte(xml.Header), append(b, '\n')...)
	return os.WriteFile(path, b, 0o644)
}

func parseSeconds(s string) time.Duration {
	var f float64
	fmt.Sscanf(s, "%g", &f)
	return time.Duration(f * float64(time.Second))
}
