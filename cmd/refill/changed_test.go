package main

import (
	"os/exec"
	"strings"
	"testing"
)

// TestChangedAgainstTheLedger selects the models whose version differs
// from the versions the target's ledger records: none after a run, the
// edited model after an edit, and with changed+ what reads it.
func TestChangedAgainstTheLedger(t *testing.T) {
	t.Parallel()
	dir := shop(t, nil)
	mustRefill(t, dir, "seed")
	// January whole, so that the monthly model publishes too.
	mustRefill(t, dir, "run", "--from", "2024-01-01", "--to", "2024-01-31", "--yes", "--quiet", now)
	days := []string{"--from", "2024-01-01", "--to", "2024-01-03", now}

	r := mustRefill(t, dir, append([]string{"plan", "changed"}, days...)...)
	if !strings.Contains(r.stdout, "Nothing to do") || !strings.Contains(r.stderr, "changed since target dev's ledger: none") {
		t.Fatalf("nothing changed:\n%s%s", r.stdout, r.stderr)
	}
	if r := mustRefill(t, dir, append([]string{"plan", "changed", "-o", "json"}, days...)...); !strings.Contains(r.stdout, `"steps": []`) {
		t.Errorf("nothing changed, as JSON:\n%s", r.stdout)
	}
	orders, err := osReadFile(dir, "models/staging/orders.sql")
	if err != nil {
		t.Fatal(err)
	}
	write(t, dir, "models/staging/orders.sql", strings.Replace(orders, "AND status <> 'test'", "AND status <> 'test' AND amount < 250", 1))

	r = mustRefill(t, dir, append([]string{"plan", "changed"}, days...)...)
	if !strings.Contains(r.stderr, "changed since target dev's ledger: staging.orders\n") {
		t.Errorf("after an edit: %s", r.stderr)
	}
	if !strings.Contains(r.stdout, "staging.orders") || strings.Contains(r.stdout, "marts.") {
		t.Errorf("plan changed:\n%s", r.stdout)
	}
	r = mustRefill(t, dir, append([]string{"plan", "changed+"}, days...)...)
	if !strings.Contains(r.stdout, "marts.daily_revenue") || !strings.Contains(r.stdout, "staging.orders") {
		t.Errorf("plan changed+ lacks the readers:\n%s", r.stdout)
	}
	r = mustRefill(t, dir, append([]string{"diff", "changed"}, days...)...)
	if !strings.Contains(r.stdout, "staging.orders") || !strings.Contains(r.stdout, "3 of 3 partitions differ") {
		t.Errorf("diff changed:\n%s", r.stdout)
	}
	// refill test --changed against the target: the checks of what
	// changed and reads it, then the data diff of what changed there.
	r = mustRefill(t, dir, "test", "--changed", "--state", "dev", now)
	if !strings.Contains(r.stdout, "What the models changed since target dev's ledger do to target dev's data") ||
		!strings.Contains(r.stdout, "3 of 3 partitions differ (1 model)") || !strings.Contains(r.stdout, "marts.daily_revenue") {
		t.Errorf("test --changed --state dev:\n%s%s", r.stdout, r.stderr)
	}
	if r := refill(t, dir, append([]string{"plan", "staging.orders", "--state", "dev"}, days...)...); r.code != exitUsage {
		t.Errorf("--state without the changed selector: exit %d\n%s", r.code, r.stderr)
	}
}

// TestChangedAgainstGit is the pull-request check: refill test --changed
// --state git:REF tests the models that differ from the project's files at
// REF, and what reads them, with no warehouse.
func TestChangedAgainstGit(t *testing.T) {
	t.Parallel()
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("no git")
	}
	dir := shop(t, nil)
	git := func(args ...string) {
		t.Helper()
		cmd := exec.Command("git", append([]string{"-C", dir, "-c", "user.name=refill", "-c", "user.email=refill@example.com"}, args...)...)
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("git %v: %v\n%s", args, err, out)
		}
	}
	git("init", "-q")
	git("add", ".")
	git("commit", "-q", "-m", "the shop")

	r := mustRefill(t, dir, "test", "--changed", "--state", "git:HEAD", now)
	if !strings.Contains(r.stdout, "Nothing to test") {
		t.Fatalf("nothing changed:\n%s%s", r.stdout, r.stderr)
	}
	daily, err := osReadFile(dir, "models/marts/daily_revenue.sql")
	if err != nil {
		t.Fatal(err)
	}
	write(t, dir, "models/marts/daily_revenue.sql", daily+"\n-- a comment changes no version\n")
	if r := mustRefill(t, dir, "test", "--changed", "--state", "git:HEAD", now); !strings.Contains(r.stdout, "Nothing to test") {
		t.Errorf("a comment counted as a change:\n%s%s", r.stdout, r.stderr)
	}
	write(t, dir, "models/marts/daily_revenue.sql", strings.Replace(daily, "sum(amount)", "sum(amount) * 1", 1))
	r = mustRefill(t, dir, "test", "--changed", "--state", "git:HEAD", now)
	if !strings.Contains(r.stderr, "changed since git HEAD: marts.daily_revenue\n") {
		t.Errorf("after an edit: %s", r.stderr)
	}
	// What reads daily_revenue is tested too; staging.orders, which it
	// reads, runs as its upstream but is not a selected model's check.
	for _, want := range []string{"marts.daily_revenue", "marts.monthly_revenue"} {
		if !strings.Contains(r.stdout, want) {
			t.Errorf("test --changed does not check %s:\n%s", want, r.stdout)
		}
	}
	if strings.Contains(r.stdout, "marts.customer_lifetime") {
		t.Errorf("test --changed checks an unchanged model that does not read the change:\n%s", r.stdout)
	}
	if r := refill(t, dir, "test", "--changed", "--state", "git:no-such-ref", now); r.code != exitUsage {
		t.Errorf("an unknown ref: exit %d\n%s", r.code, r.stderr)
	}
}
