package junit_test

import (
	"encoding/xml"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/refill/refill/cmd/refill/internal/junit"
	"github.com/refill/refill/runner/check"
)

func TestWrite(t *testing.T) {
	t.Parallel()
	checks := []check.Result{
		{Suite: "run", Name: "marts.a", Status: check.Passed, Message: "3 partitions", Duration: 1500 * time.Millisecond},
		{Suite: "audit", Name: "marts.a unique(id)", Status: check.Failed, Message: "2 duplicates\nid 7", Detail: "SELECT ...", Duration: 250 * time.Millisecond},
		{Suite: "run", Name: "marts.b", Status: check.NotRun, Message: "the sample ran no partition", Duration: 0},
		{Suite: "run", Name: "marts.c", Status: check.Skipped, Message: "upstream failed", Duration: 0},
		{Suite: "run", Name: "marts.d", Status: check.Passed, Message: "1 partition", Duration: 500 * time.Millisecond},
	}
	for _, allow := range []bool{false, true} {
		path := filepath.Join(t.TempDir(), "report.xml")
		if err := junit.Write(path, checks, 3*time.Second, allow); err != nil {
			t.Fatal(err)
		}
		b, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		if !strings.HasPrefix(string(b), xml.Header) {
			t.Errorf("no XML header:\n%s", b)
		}
		var got junit.Suites
		if err := xml.Unmarshal(b, &got); err != nil {
			t.Fatalf("does not parse: %v\n%s", err, b)
		}
		// Not running a sampled model fails unless allowed, then it is skipped.
		failures, skipped := 2, 1
		if allow {
			failures, skipped = 1, 2
		}
		if got.Tests != 5 || got.Failures != failures || got.Skipped != skipped || got.Time != "3.000" {
			t.Errorf("allow=%v: tests %d failures %d skipped %d time %s; want 5, %d, %d, 3.000", allow, got.Tests, got.Failures, got.Skipped, got.Time, failures, skipped)
		}
		if len(got.Suites) != 2 || got.Suites[0].Name != "run" || got.Suites[1].Name != "audit" {
			t.Fatalf("suites %+v, want run then audit (as first seen)", got.Suites)
		}
		run, audit := got.Suites[0], got.Suites[1]
		if run.Tests != 4 || len(run.Cases) != 4 || run.Time != "2.000" {
			t.Errorf("run suite: %d tests, %d cases, time %s; want 4, 4, 2.000", run.Tests, len(run.Cases), run.Time)
		}
		f := audit.Cases[0].Failure
		if f == nil || f.Message != "2 duplicates" || f.Type != "audit" || f.Text != "2 duplicates\nid 7\nSELECT ..." {
			t.Errorf("audit failure: %+v", f)
		}
		if c := run.Cases[0]; c.Classname != "refill.run" || c.Time != "1.500" || c.SystemOut != "3 partitions" || c.Failure != nil {
			t.Errorf("passed case: %+v", c)
		}
	}
}
