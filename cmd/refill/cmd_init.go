package main

import (
	"errors"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/refill/refill/models"
)

func (a *app) initCommand() *cobra.Command {
	return &cobra.Command{
		Use:   "init DIR",
		Short: "Create a working project: config, a model, a seed and a unit test",
		Long: `Init creates DIR (if needed) with a refill.yml that targets a local DuckDB
file, a daily model reading a seeded source, the seed, and a unit test. It
refuses to touch a folder that already holds a refill.yml. Then:

  cd DIR && refill seed && refill run --yes && refill status && refill test`,
		Example: `  refill init analytics`,
		Args: func(c *cobra.Command, args []string) error {
			if len(args) != 1 {
				return usagef("init takes exactly one DIR")
			}
			return nil
		},
		RunE: func(c *cobra.Command, args []string) error {
			dir := args[0]
			if _, err := os.Stat(filepath.Join(dir, models.ProjectFile)); err == nil {
				return usagef("%s already holds a %s: refill init creates new projects only", dir, models.ProjectFile)
			} else if !errors.Is(err, os.ErrNotExist) {
				return err
			}
			files := scaffold(time.Now().UTC())
			for _, name := range slices.Sorted(maps.Keys(files)) {
				path := filepath.Join(dir, filepath.FromSlash(name))
				if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
					return err
				}
				if err := os.WriteFile(path, []byte(files[name]), 0o644); err != nil {
					return err
				}
				fmt.Fprintf(a.stdout, "created %s\n", path)
			}
			fmt.Fprintf(a.stdout, "\nNext:\n  cd %s\n  refill seed          # load seeds/raw/events.csv\n  refill plan          # see what would run\n  refill run --yes     # backfill into warehouse.duckdb\n  refill status\n  refill test          # what CI runs\n", dir)
			return nil
		},
	}
}

// scaffold returns the files of a new project whose seed covers the last
// week before now.
func scaffold(now time.Time) map[string]string {
	start := now.AddDate(0, 0, -7).Truncate(24 * time.Hour)
	var seed strings.Builder
	seed.WriteString("event_id,user_id,event_date,kind,amount\n")
	kinds := []string{"view", "click", "purchase"}
	id := 1
	for d := 0; d < 7; d++ {
		day := start.AddDate(0, 0, d).Format("2006-01-02")
		for i := 0; i < 5+d%3; i++ {
			amount := ""
			if kinds[(d+i)%3] == "purchase" {
				amount = fmt.Sprintf("%d.50", 10+i*3)
			}
			fmt.Fprintf(&seed, "%d,%d,%s,%s,%s\n", id, 100+(d*7+i)%9, day, kinds[(d+i)%3], amount)
			id++
		}
	}
	return map[string]string{
		".gitignore": "*.duckdb\n*.duckdb.wal\n*.refill-holder\n",
		"refill.yml": `# refill project: see https://github.com/refill/refill#readme
models: models            # folder of .sql models
seeds: seeds              # CSV files loaded by refill seed
target: dev               # default target
targets:
  dev:
    adapter: duckdb
    path: warehouse.duckdb
  # prod:
  #   adapter: snowflake
  #   dsn: ${SNOWFLAKE_DSN}
  # clickhouse:
  #   adapter: clickhouse
  #   dsn: ${CLICKHOUSE_DSN}
vars:
  min_amount: 0
`,
		"models/daily_events.sql": fmt.Sprintf(`/* refill
description: Events and revenue per day and kind.
partition_by: event_date
grain: day
start: %s
lookback: 2                # scheduled runs redo the last two days, for late events
audits:
  - not_null: [event_date, kind]
  - unique: [event_date, kind]
*/
SELECT event_date,
       kind,
       count(*) AS events,
       count(DISTINCT user_id) AS users,
       coalesce(sum(amount), 0) AS revenue
FROM {{ source("raw.events") }}
WHERE event_date >= {{ start }} AND event_date < {{ end }}
  AND coalesce(amount, 0) >= {{ var("min_amount") }}
GROUP BY event_date, kind
`, start.Format("2006-01-02")),
		"models/daily_events.test.yml": fmt.Sprintf(`# Unit tests: given rows for each table the model reads, expect these rows.
- name: counts events and sums purchases
  partition: %[1]s
  given:
    raw.events:
      - {event_id: 1, user_id: 1, event_date: %[1]s, kind: view, amount: null}
      - {event_id: 2, user_id: 1, event_date: %[1]s, kind: purchase, amount: 12.5}
      - {event_id: 3, user_id: 2, event_date: %[1]s, kind: purchase, amount: 7.5}
  expect:
    - {event_date: %[1]s, kind: view, events: 1, users: 1, revenue: 0}
    - {event_date: %[1]s, kind: purchase, events: 2, users: 2, revenue: 20.0}
`, start.Format("2006-01-02")),
		"seeds/raw/events.csv": seed.String(),
	}
}
