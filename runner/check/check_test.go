package check_test

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"strings"
	"testing"
	"testing/fstest"
	"time"

	"github.com/refill/refill/adapters"
	"github.com/refill/refill/adapters/adaptertest"
	"github.com/refill/refill/adapters/duckdb"
	"github.com/refill/refill/models"
	"github.com/refill/refill/runner/check"
)

// checkProject is the shop's refill.yml with a DuckDB target and one for
// another warehouse, which checkDialect renders as DuckDB.
const checkProject = `name: shop
models: models
seeds: seeds
target: dev
targets:
  dev:
    adapter: duckdb
  prod:
    adapter: other
vars:
  min_amount: 10
`

// checkDialect accepts the targets of checkProject.
func checkDialect(t *models.Target) (models.Dialect, string, error) {
	switch t.Adapter {
	case "duckdb", "other":
		return duckdb.Dialect{}, "main", nil
	}
	return nil, "", fmt.Errorf("unknown adapter %q in target %s", t.Adapter, t.Name)
}

func duckdbSandbox() check.Sandbox {
	return check.Sandbox{Adapter: "duckdb", Name: "DuckDB", Schema: "main",
		Open: func(ctx context.Context) (adapters.Adapter, error) { return duckdb.Open(ctx, duckdb.Config{}) }}
}

// runChecks runs the checks of fsys's project with the options change
// makes, and returns them by suite and name.
func runChecks(t *testing.T, fsys fstest.MapFS, change func(*check.Options)) ([]check.Result, map[string]check.Result) {
	t.Helper()
	opts := check.Options{
		Load: func() (*models.Project, fs.FS, error) {
			p, err := models.Load(fsys, loadOptions)
			return p, fsys, err
		},
		Dialect: checkDialect,
		Sandbox: duckdbSandbox(),
	}
	if change != nil {
		change(&opts)
	}
	checks := check.Run(t.Context(), opts)
	byName := map[string]check.Result{}
	for _, c := range checks {
		byName[c.Suite+" "+c.Name] = c
	}
	return checks, byName
}

// loadOptions load the test projects, whose targets may set DuckDB's
// settings.
var loadOptions = models.LoadOptions{Adapters: []models.AdapterKeys{duckdb.Engine().Keys()}}

// shopFS returns the example project as an in-memory tree, with the given
// files added or replaced.
func shopFS(t *testing.T, changes map[string]string) fstest.MapFS {
	t.Helper()
	fsys, _ := adaptertest.Shop(t, duckdb.Engine())
	for k, v := range changes {
		fsys[k] = &fstest.MapFile{Data: []byte(v)}
	}
	return fsys
}

// editFS replaces old with new in a file of fsys, failing if old is absent.
func editFS(t *testing.T, fsys fstest.MapFS, name, old, new string) {
	t.Helper()
	text := string(fsys[name].Data)
	if !strings.Contains(text, old) {
		t.Fatalf("%s does not contain %q", name, old)
	}
	fsys[name] = &fstest.MapFile{Data: []byte(strings.Replace(text, old, new, 1))}
}

// wantCheck fails unless the check suite+" "+name ended as status with a
// message containing each of msgs.
func wantCheck(t *testing.T, byName map[string]check.Result, key string, status check.Status, msgs ...string) {
	t.Helper()
	c, ok := byName[key]
	if !ok {
		t.Errorf("no check %q", key)
		return
	}
	if c.Status != status {
		t.Errorf("%s: %s, want %s: %s", key, c.Status, status, c.Message)
	}
	for _, m := range msgs {
		if !strings.Contains(c.Message, m) {
			t.Errorf("%s: message lacks %q:\n%s", key, m, c.Message)
		}
	}
}

func TestRunChecksPassOnTheShop(t *testing.T) {
	t.Parallel()
	checks, byName := runChecks(t, shopFS(t, map[string]string{"refill.yml": checkProject}), nil)
	suites := map[string]int{}
	for _, c := range checks {
		suites[c.Suite]++
		if c.Status != check.Passed {
			t.Errorf("%s %s: %s: %s", c.Suite, c.Name, c.Status, c.Message)
		}
	}
	// Every model renders and runs, every unit test runs; audits are
	// reported after the models, validation first.
	if suites["validate"] != 1 || suites["render"] != 7 || suites["run"] != 7 || suites["unit"] != 6 || suites["audit"] < 5 {
		t.Errorf("checks per suite: %v", suites)
	}
	if checks[0].Suite != "validate" || checks[len(checks)-1].Suite != "unit" {
		t.Errorf("report order: first %s, last %s", checks[0].Suite, checks[len(checks)-1].Suite)
	}
	wantCheck(t, byName, "validate project", check.Passed, "7 models, 2 targets, 6 unit tests, 2 seeds")
	wantCheck(t, byName, "render marts.daily_revenue", check.Passed, "partition 2024-01-01 on dev (duckdb), prod (duckdb)")
	wantCheck(t, byName, "run marts.rolling_revenue", check.Passed, "3 partitions ran (2024-01-01 .. 2024-01-03)")
	wantCheck(t, byName, "run marts.customer_lifetime", check.Passed, "1 partition ran (all)")
	wantCheck(t, byName, "audit staging.orders unique(order_id)", check.Passed)
	wantCheck(t, byName, `unit marts.daily_revenue "sums the day's orders and returns"`, check.Passed,
		"models/marts/daily_revenue.test.yml:3, partition 2024-01-02")
}

func TestRunChecksCatchBreakage(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name   string
		change func(t *testing.T, fsys fstest.MapFS)
		key    string
		status check.Status
		want   []string
	}{
		{"broken SQL", func(t *testing.T, fsys fstest.MapFS) {
			editFS(t, fsys, "models/marts/daily_revenue.sql", "sum(amount) AS revenue", "sum(amount_typo) AS revenue")
		}, "run marts.daily_revenue", check.Failed, []string{"marts.daily_revenue (models/marts/daily_revenue.sql): 2024-01-01: ", "amount_typo"}},
		{"broken template", func(t *testing.T, fsys fstest.MapFS) {
			editFS(t, fsys, "models/marts/daily_revenue.sql", "{{ end }}", "{{ ned }}")
		}, "validate models/marts/daily_revenue.sql", check.Failed, []string{"models/marts/daily_revenue.sql:19:53: template: unknown name ned"}},
		{"broken expectation", func(t *testing.T, fsys fstest.MapFS) {
			editFS(t, fsys, "models/marts/daily_revenue.test.yml", "revenue: 30.5", "revenue: 31.5")
		}, `unit marts.daily_revenue "sums the day's orders and returns"`, check.Failed,
			[]string{"models/marts/daily_revenue.test.yml:3: ", "revenue: 31.5", "revenue: 30.5"}},
		{"broken unit test file", func(t *testing.T, fsys fstest.MapFS) {
			editFS(t, fsys, "models/marts/daily_revenue.test.yml", "revenue: 30.5", "revenue: [30.5")
		}, "validate models/marts/daily_revenue.test.yml", check.Failed, []string{"models/marts/daily_revenue.test.yml:"}},
		{"broken audit", func(t *testing.T, fsys fstest.MapFS) {
			editFS(t, fsys, "models/staging/orders.sql", "values: [placed, shipped, returned]", "values: [placed, shipped]")
		}, "audit staging.orders accepted_values(status)", check.Failed, []string{"models/staging/orders.sql:12: accepted_values(status) on 2024-01-", "returned"}},
		{"unknown adapter", func(t *testing.T, fsys fstest.MapFS) {
			editFS(t, fsys, "refill.yml", "adapter: other", "adapter: nosuch")
		}, "validate refill.yml", check.Failed, []string{`unknown adapter "nosuch" in target prod`}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			fsys := shopFS(t, map[string]string{"refill.yml": checkProject})
			tc.change(t, fsys)
			_, byName := runChecks(t, fsys, nil)
			wantCheck(t, byName, tc.key, tc.status, tc.want...)
		})
	}
}

// TestRunChecksAuditsFailAlone checks that a model whose only failures are
// its audits runs, fails, and its audits fail on their own lines.
func TestRunChecksAuditsFailAlone(t *testing.T) {
	t.Parallel()
	fsys := shopFS(t, map[string]string{"refill.yml": checkProject})
	editFS(t, fsys, "models/staging/orders.sql", "values: [placed, shipped, returned]", "values: [placed, shipped]")
	_, byName := runChecks(t, fsys, nil)
	wantCheck(t, byName, "run staging.orders", check.Failed, "partitions ran; audits failed (see below)")
	wantCheck(t, byName, "run marts.daily_revenue", check.Skipped, "partitions skipped: an upstream model failed")
	wantCheck(t, byName, "audit staging.orders unique(order_id)", check.Passed)
}

// TestRunChecksNotPortable checks that a model failing in the sandbox
// while no target uses its warehouse is skipped, not failed, with its unit
// tests.
func TestRunChecksNotPortable(t *testing.T) {
	t.Parallel()
	fsys := shopFS(t, map[string]string{"refill.yml": strings.Replace(checkProject, "adapter: duckdb", "adapter: other", 1)})
	editFS(t, fsys, "models/marts/daily_revenue.sql", "sum(amount) AS revenue", "sum(amount_typo) AS revenue")
	checks, byName := runChecks(t, fsys, nil)
	for _, c := range checks {
		if c.Status == check.Failed {
			t.Errorf("%s %s failed: %s", c.Suite, c.Name, c.Message)
		}
	}
	wantCheck(t, byName, "run marts.daily_revenue", check.Skipped, "not portable to DuckDB: marts.daily_revenue (models/marts/daily_revenue.sql): ")
	wantCheck(t, byName, `unit marts.daily_revenue "sums the day's orders and returns"`, check.Skipped,
		"the model does not run on DuckDB: 2024-01-01: ", "amount_typo")
	if msg := byName[`unit marts.daily_revenue "a day without orders has no row"`].Message; strings.Contains(msg, "\n") {
		t.Errorf("a skipped unit test gives the first line of why:\n%s", msg)
	}
	wantCheck(t, byName, "run marts.rolling_revenue", check.Skipped, "3 of 3 partitions skipped: an upstream model failed")
	wantCheck(t, byName, `unit marts.rolling_revenue "sums the seven days ending on the day"`, check.Passed)
}

func TestRunChecksSelectAndSample(t *testing.T) {
	t.Parallel()
	fsys := shopFS(t, map[string]string{"refill.yml": checkProject})
	checks, byName := runChecks(t, fsys, func(o *check.Options) {
		o.Select, o.From, o.To = []string{"marts.daily_revenue"}, "2024-01-05", "2024-01-09"
	})
	// The selected model and the upstream it reads run; only its own
	// render and unit checks.
	for _, c := range checks {
		if (c.Suite == "render" || c.Suite == "unit") && !strings.HasPrefix(c.Name, "marts.daily_revenue") {
			t.Errorf("unselected check %s %s", c.Suite, c.Name)
		}
	}
	wantCheck(t, byName, "render marts.daily_revenue", check.Passed, "partition 2024-01-05 on")
	wantCheck(t, byName, "run marts.daily_revenue", check.Passed, "5 partitions ran (2024-01-05 .. 2024-01-09)")
	wantCheck(t, byName, "run staging.orders", check.Passed)

	// A sample that runs nothing of a model says so, never ok.
	_, byName = runChecks(t, fsys, func(o *check.Options) { o.From = "2030-01-01" })
	wantCheck(t, byName, "run marts.daily_revenue", check.NotRun,
		"no partition in the sample 2030-01-01..2030-01-01: its last partition complete at", "is 2024-04-30 (--now pins the clock)")
	_, byName = runChecks(t, fsys, func(o *check.Options) {
		o.From, o.Now = "2023-12-01", time.Date(2024, 6, 1, 0, 0, 0, 0, time.UTC)
	})
	wantCheck(t, byName, "run marts.daily_revenue", check.NotRun,
		"no partition in the sample 2023-12-01..2023-12-01: its first partition is 2024-01-01 (refill test --from 2024-01-01 samples it")
	if !check.NotRun.Fails(false) || check.NotRun.Fails(true) {
		t.Errorf("not run must fail refill test unless unsampled models are allowed")
	}

	_, byName = runChecks(t, fsys, func(o *check.Options) { o.From = "notadate" })
	wantCheck(t, byName, "render marts.daily_revenue", check.Failed, `--from: invalid date or partition key "notadate"`)
	wantCheck(t, byName, "render marts.revenue_by_region", check.Passed)
	wantCheck(t, byName, "run plan", check.Failed, "notadate")

	checks, byName = runChecks(t, fsys, func(o *check.Options) { o.Select = []string{"nosuch.model"} })
	wantCheck(t, byName, "validate selection", check.Failed, "nosuch.model")
	if last := checks[len(checks)-1]; last.Name != "selection" {
		t.Errorf("checks after a failed selection: last is %s %s", last.Suite, last.Name)
	}
}

func TestRunChecksReportProjectsThatDoNotLoad(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name string
		err  error
		want []string // validate check names
	}{
		{"error list", models.ErrorList{{File: "models/a.sql", Line: 1, Msg: "bad"}, {File: "refill.yml", Line: 2, Msg: "worse"}},
			[]string{"models/a.sql", "refill.yml"}},
		{"one error", fmt.Errorf("loading: %w", &models.Error{File: "models/a.sql", Line: 1, Msg: "bad"}), []string{"models/a.sql"}},
		{"no project", errors.New("no refill.yml in this folder or any above it"), []string{"project"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			checks, _ := runChecks(t, nil, func(o *check.Options) {
				o.Load = func() (*models.Project, fs.FS, error) { return nil, nil, tc.err }
				o.Sandbox.Open = func(context.Context) (adapters.Adapter, error) {
					t.Fatal("a project that did not load needs no sandbox")
					return nil, nil
				}
			})
			var names []string
			for _, c := range checks {
				if c.Suite != "validate" || c.Status != check.Failed {
					t.Errorf("%s %s: %s", c.Suite, c.Name, c.Status)
				}
				names = append(names, c.Name)
			}
			if strings.Join(names, ",") != strings.Join(tc.want, ",") {
				t.Errorf("checks %v, want %v", names, tc.want)
			}
		})
	}
}

// TestRunChecksSandboxFails checks that a sandbox that cannot open fails
// the run and every unit test, and the rest is still checked.
func TestRunChecksSandboxFails(t *testing.T) {
	t.Parallel()
	opened := 0
	_, byName := runChecks(t, shopFS(t, map[string]string{"refill.yml": checkProject}), func(o *check.Options) {
		o.Sandbox.Open = func(context.Context) (adapters.Adapter, error) {
			opened++
			return nil, errors.New("no memory")
		}
	})
	if opened != 7 { // the sample run, and each of 6 unit tests
		t.Errorf("opened %d sandboxes, want 7", opened)
	}
	wantCheck(t, byName, "run duckdb", check.Failed, "no memory")
	wantCheck(t, byName, `unit staging.orders "drops test orders and small amounts"`, check.Failed,
		"models/staging/orders.test.yml:1: no memory")
	wantCheck(t, byName, "render staging.orders", check.Passed)
}
