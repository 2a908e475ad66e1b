package main

import (
	"context"
	"io"
	"os"
	"strings"

	"github.com/refill/refill/runner/plan"
)

// checkPlans plans a few selections twice over the oracle's warehouse: as
// refill plans them, from the ledger's monthly summaries and the records
// they cannot vouch for, and from every record. The two plans must agree
// step for step: the summaries only ever save reading records.
func (o *oracle) checkPlans() {
	o.t.Helper()
	a := &app{ctx: context.Background(), stdin: strings.NewReader(""), stdout: io.Discard, stderr: io.Discard,
		getenv: os.LookupEnv, projectDir: o.dir}
	s, err := a.session(readOnly, false, "oracle", nil)
	if err != nil {
		o.t.Fatalf("opening the warehouse: %v", err)
	}
	defer s.close()
	now := mustParse(oracleNow)
	first := oracleFirst.AddDate(0, 0, o.rng.IntN(16))
	sels := []plan.Selection{
		{Now: now},
		{Now: now, Select: []string{"+" + o.pick().name}},
		{Now: now, Select: []string{o.pick().name + "+"}, From: first.Format("2006-01-02"), To: first.AddDate(0, 0, o.rng.IntN(10)).Format("2006-01-02")},
		{Now: now, Mode: plan.ModeMissing},
	}
	for _, sel := range sels {
		fast, err := s.runner.Plan(a.ctx, sel)
		if err != nil {
			o.t.Fatalf("plan %+v: %v", sel, err)
		}
		facts, err := s.runner.Facts(a.ctx, sel)
		if err != nil {
			o.t.Fatal(err)
		}
		full, err := plan.NewPlanFacts(s.project, s.scope, *facts, sel)
		if err != nil {
			o.t.Fatal(err)
		}
		// As refill plan --output json prints them.
		var got, want strings.Builder
		if err := writePlanJSON(&got, planJSON(s, fast), fast); err != nil {
			o.t.Fatal(err)
		}
		if err := writePlanJSON(&want, planJSON(s, full), full); err != nil {
			o.t.Fatal(err)
		}
		if got.String() != want.String() {
			o.errorf("plan %+v from the ledger's summaries:\n%s\nfrom every record:\n%s", sel, got.String(), want.String())
		}
	}
}
