package clickhouse

import (
	"context"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/refill/refill/adapters"
	"github.com/refill/refill/adapters/internal/sqlkit"
	"github.com/refill/refill/models"
)

// LoadSeed replaces table with the seed's rows. The new table is built
// beside the old one under a temporary name (<table>__refill_seed_<time>_...),
// loaded with INSERT ... SELECT in chunks, then swapped in: with EXCHANGE
// TABLES on an Atomic database (the default since ClickHouse 20.10),
// which readers see as one step; on an Ordinary database (18.16) with one
// RENAME TABLE of the old table away and the new one into place, between
// which the table is briefly absent. The old table is then dropped. A
// failure before the swap leaves the old table as it was and drops the
// new one; temporary tables older than an hour that a crash left are
// dropped by the next load of the same table.
func (a *Adapter) LoadSeed(ctx context.Context, seed *models.Seed, table models.Relation) error {
	if table.Database != "" {
		return fmt.Errorf("%s: ClickHouse tables are named database.table, not database.schema.table", table)
	}
	table = a.resolve(table)
	if err := a.loadSeed(ctx, seed, table); err != nil {
		return fmt.Errorf("loading seed %s: %w", table, err)
	}
	return nil
}

func (a *Adapter) loadSeed(ctx context.Context, seed *models.Seed, table models.Relation) error {
	tag := adapters.Tag{Model: table.String(), Step: "seed"}
	defer a.forget(table)
	if err := a.ensureDatabase(ctx, tag, table.Schema); err != nil {
		return err
	}
	a.cleanSeedLeftovers(ctx, tag, table)
	// <table>__refill_seed_<unix time>_<adapter><seq>: the time lets a
	// later load tell a crashed load's leftover from a running one.
	id := fmt.Sprintf("%d_%s%d", time.Now().Unix(), a.suffix, a.seq.Add(1))
	tmp := models.Relation{Schema: table.Schema, Name: table.Name + "__refill_seed_" + id}
	old := models.Relation{Schema: table.Schema, Name: table.Name + "__refill_old_" + id}
	engine, err := a.role.seedEngine(tmp)
	if err != nil {
		return err
	}
	if err := a.execAll(ctx, tag, seedStatements(a.d, seed, tmp, a.role.onCluster(), engine)); err != nil {
		a.role.dropShared(ctx, tag, tmp)
		return err
	}
	if err := a.role.swapped(ctx, tag, tmp); err != nil {
		a.role.dropShared(ctx, tag, tmp)
		return err
	}
	existing, err := a.readTable(ctx, tag, table)
	if err != nil {
		a.role.dropShared(ctx, tag, tmp)
		return err
	}
	res, err := a.query(ctx, tag, "SELECT engine FROM system.databases WHERE name = "+a.d.QuoteString(table.Schema))
	if err != nil {
		a.role.dropShared(ctx, tag, tmp)
		return err
	}
	atomicDB := len(res.Rows) == 1 && res.Rows[0][0] == "Atomic"
	swap, leftover := seedSwapStatements(a.d, table, tmp, old, existing != nil, atomicDB)
	for i := range swap {
		swap[i] += a.role.onCluster()
	}
	if err := a.execAll(ctx, tag, swap); err != nil {
		// A RENAME of two tables is two steps on an Ordinary database: if
		// only the first happened, put the old table back.
		if existing != nil && !atomicDB {
			if now, _ := a.readTable(ctx, tag, table); now == nil {
				a.exec(context.WithoutCancel(ctx), tag, fmt.Sprintf("RENAME TABLE %s TO %s%s", old.Quote(a.d), table.Quote(a.d), a.role.onCluster()))
			}
		}
		a.role.dropShared(ctx, tag, tmp)
		return err
	}
	if leftover != (models.Relation{}) {
		a.role.dropShared(ctx, tag, leftover)
	}
	return nil
}

// cleanSeedLeftovers drops temporary tables of table's earlier loads
// whose names say they are over an hour old (a load in progress is
// younger).
func (a *Adapter) cleanSeedLeftovers(ctx context.Context, tag adapters.Tag, table models.Relation) {
	names, err := a.tablesWithPrefix(ctx, tag, table.Schema, table.Name+"__refill_")
	if err != nil {
		return
	}
	for _, name := range names {
		rest := strings.TrimPrefix(name, table.Name+"__refill_")
		_, rest, _ = strings.Cut(rest, "_") // seed_ or old_
		stamp, _, _ := strings.Cut(rest, "_")
		if t, err := strconv.ParseInt(stamp, 10, 64); err == nil && time.Since(time.Unix(t, 0)) > time.Hour {
			a.role.dropShared(ctx, tag, models.Relation{Schema: table.Schema, Name: name})
		}
	}
}

// seedEngine is the engine of a seed's table on one server.
const seedEngine = "ENGINE = MergeTree() ORDER BY tuple()"

// seedStatements render the table tmp, created with on (ON CLUSTER, or
// "") and engine, and the INSERTs of the seed's rows. Values are typed
// literals (toInt64(1), toDate('2024-01-02'), ...) so that UNION ALL
// agrees on every column's type.
func seedStatements(d Dialect, seed *models.Seed, tmp models.Relation, on, engine string) []string {
	defs := make([]string, len(seed.Columns))
	names := make([]string, len(seed.Columns))
	for i, c := range seed.Columns {
		typ := seedType(d, seed, i)
		if c.Nullable {
			typ = nullableType(typ)
		}
		defs[i] = d.QuoteIdent(c.Name) + " " + typ
		names[i] = c.Name
	}
	stmts := []string{fmt.Sprintf("CREATE TABLE %s%s (%s) %s", tmp.Quote(d), on, strings.Join(defs, ", "), engine)}
	rows := make([][]string, len(seed.Rows))
	for r, row := range seed.Rows {
		rows[r] = make([]string, len(row))
		for i, v := range row {
			rows[r][i] = seedLiteral(d, seed.Columns[i].Type, v)
		}
	}
	return append(stmts, insertSelectStatements(d, tmp, names, rows)...)
}

// seedType is column i's type: d.ColumnType, except that a timestamp
// column holding fractions of a second is DateTime64 (ClickHouse 20.1+).
func seedType(d Dialect, seed *models.Seed, i int) string {
	t := seed.Columns[i].Type
	if t != models.TypeTimestamp {
		return d.ColumnType(t)
	}
	scale := 0
	for _, row := range seed.Rows {
		if tm, ok := row[i].(time.Time); ok && tm.Nanosecond() != 0 {
			scale = 6
			if tm.Nanosecond()%1000 != 0 {
				scale = 9
				break
			}
		}
	}
	if scale == 0 {
		return d.ColumnType(t)
	}
	return fmt.Sprintf("DateTime64(%d, 'UTC')", scale)
}

func seedLiteral(d Dialect, t models.ColumnType, v any) string {
	if v == nil {
		return "NULL"
	}
	lit := sqlkit.SeedLiteral(d, t, v)
	if p, s, ok := t.Decimal(); ok {
		return fmt.Sprintf("CAST(%s AS Decimal(%d, %d))", d.QuoteString(lit), p, s) // from text: exact
	}
	switch t {
	case models.TypeInt:
		return "toInt64(" + lit + ")"
	case models.TypeInt32:
		return "toInt32(" + lit + ")"
	case models.TypeFloat:
		return "toFloat64(" + lit + ")"
	case models.TypeBool:
		return "toUInt8(" + lit + ")"
	}
	return lit
}

// seedSwapStatements render the swap of a loaded tmp into table and
// return the table left to drop afterwards (zero if none): EXCHANGE
// TABLES on an Atomic database, else RENAME TABLE table TO old, tmp TO
// table.
func seedSwapStatements(d Dialect, table, tmp, old models.Relation, exists, atomicDB bool) ([]string, models.Relation) {
	switch {
	case !exists:
		return []string{fmt.Sprintf("RENAME TABLE %s TO %s", tmp.Quote(d), table.Quote(d))}, models.Relation{}
	case atomicDB:
		return []string{fmt.Sprintf("EXCHANGE TABLES %s AND %s", tmp.Quote(d), table.Quote(d))}, tmp
	}
	return []string{fmt.Sprintf("RENAME TABLE %s TO %s, %s TO %s", table.Quote(d), old.Quote(d), tmp.Quote(d), table.Quote(d))}, old
}
