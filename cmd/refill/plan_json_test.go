package main

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"

	"github.com/refill/refill/runner/plan"
)

// refill plan --output json writes its steps one at a time; the document
// must be what encoding/json writes for the whole of it, byte for byte:
// decoded and encoded again (writeJSON) it is unchanged, and it holds
// every step and blocked step the text plan counts.
func TestPlanJSONIsStreamedAsOneDocument(t *testing.T) {
	t.Parallel()
	dir := project(t, "jaffle", nil)
	mustRefill(t, dir, "seed")
	for _, tc := range []struct {
		name          string
		args          []string
		steps, blocks bool
	}{
		{"scheduled", nil, true, false},
		{"a range after the start", []string{"--from", "2018-02-01", "--to", "2018-02-28"}, true, true},
		{"blocked only", []string{"marts.customers", "--from", "2018-02-01", "--to", "2018-02-28"}, false, true},
		{"nothing", []string{"--partitions", "2018-02-01", "--mode", "failed"}, false, false},
	} {
		r := mustRefill(t, dir, append([]string{"plan", jaffleNow, "--output", "json"}, tc.args...)...)
		var out planOutput
		dec := json.NewDecoder(strings.NewReader(r.stdout))
		dec.DisallowUnknownFields()
		if err := dec.Decode(&out); err != nil {
			t.Fatalf("%s: %v\n%s", tc.name, err, r.stdout)
		}
		var again bytes.Buffer
		if err := writeJSON(&again, out); err != nil {
			t.Fatal(err)
		}
		if again.String() != r.stdout {
			t.Errorf("%s: the streamed plan is not what encoding/json writes:\n%s\nwant\n%s", tc.name, r.stdout, again.String())
		}
		if (len(out.Steps) > 0) != tc.steps || (len(out.Blocked) > 0) != tc.blocks {
			t.Errorf("%s: %d steps and %d blocked; want steps %v, blocked %v", tc.name, len(out.Steps), len(out.Blocked), tc.steps, tc.blocks)
		}
		text := mustRefill(t, dir, append([]string{"plan", jaffleNow}, tc.args...)...).stdout
		if n := len(out.Steps); n > 0 && !strings.Contains(text, plan.Plural(n, "partition")+" in ") {
			t.Errorf("%s: %d steps in JSON, but the text plan says\n%s", tc.name, n, text)
		}
		if n := len(out.Blocked); n > 0 && !strings.Contains(text, plan.Plural(n, "partition")+" blocked") {
			t.Errorf("%s: %d blocked in JSON, but the text plan says\n%s", tc.name, n, text)
		}
	}
}
