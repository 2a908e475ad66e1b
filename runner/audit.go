package runner

import (
	"context"
	"fmt"
	"math"
	"strings"

	"github.com/refill/refill/adapters"
	"github.com/refill/refill/models"
	"github.com/refill/refill/runner/plan"
)

// AuditResult is the outcome of one audit on one staged unit.
type AuditResult struct {
	Name     string
	File     string // the model file
	Line     int    // of the audit in the model file
	Severity models.Severity
	Passed   bool
	Message  string // what failed, with examples
}

// auditor runs a model's audits on a stage.
type auditor struct {
	a     adapters.Adapter
	scope *models.Scope
	// For row counts relative to the previous partition: what this run
	// staged (previous), else the ledger the plan read.
	plan     *plan.Plan
	previous func(model, key string) (int64, bool)
}

// run runs every audit of the stage's model and returns the results.
func (au *auditor) run(ctx context.Context, st *adapters.Stage, parts []models.Partition, v *verification) ([]AuditResult, error) {
	m := st.Model
	var out []AuditResult
	for _, audit := range m.Config.Audits {
		res := AuditResult{Name: audit.Name, File: m.Path, Line: audit.Line, Severity: audit.Severity, Passed: true}
		msg, err := au.check(ctx, st, audit, parts, v)
		if err != nil {
			return nil, fmt.Errorf("audit %s (%s:%d): %w", audit.Name, m.Path, audit.Line, err)
		}
		if msg != "" {
			res.Passed, res.Message = false, msg
		}
		out = append(out, res)
	}
	return out, nil
}

func (au *auditor) check(ctx context.Context, st *adapters.Stage, audit models.Audit, parts []models.Partition, v *verification) (string, error) {
	d := au.a.Dialect()
	stage := st.Relation.Quote(d)
	tag := st.Tag
	tag.Step = "audit"
	query := func(q string) (*adapters.Result, error) { return au.a.Query(ctx, q, tag) }
	switch audit.Kind {
	case models.AuditNotNull:
		sums := make([]string, len(audit.Columns))
		for i, c := range audit.Columns {
			sums[i] = fmt.Sprintf("sum(CASE WHEN %s IS NULL THEN 1 ELSE 0 END)", d.QuoteIdent(c))
		}
		res, err := query(fmt.Sprintf("SELECT %s FROM %s", strings.Join(sums, ", "), stage))
		if err != nil {
			return "", err
		}
		var bad []string
		for i, c := range audit.Columns {
			if n := adapters.Int(res.Rows[0][i]); n > 0 {
				bad = append(bad, fmt.Sprintf("%d rows have NULL %s", n, c))
			}
		}
		return strings.Join(bad, ", "), nil
	case models.AuditUnique:
		cols := quoteAll(d, audit.Columns)
		res, err := query(fmt.Sprintf("SELECT %s, count(*) AS refill_n FROM %s GROUP BY %s HAVING count(*) > 1 ORDER BY refill_n DESC LIMIT 3",
			cols, stage, cols))
		if err != nil || len(res.Rows) == 0 {
			return "", err
		}
		return fmt.Sprintf("(%s) is not unique: %s", strings.Join(audit.Columns, ", "), describeRows(res, len(audit.Columns))), nil
	case models.AuditAcceptedValues:
		list, err := models.Literal(d, audit.Values)
		if err != nil {
			return "", err
		}
		col := d.QuoteIdent(audit.Columns[0])
		res, err := query(fmt.Sprintf("SELECT %s, count(*) AS refill_n FROM %s WHERE %s NOT IN %s GROUP BY %s ORDER BY refill_n DESC LIMIT 5",
			col, stage, col, list, col))
		if err != nil || len(res.Rows) == 0 {
			return "", err
		}
		return fmt.Sprintf("%s has values outside %v: %s", audit.Columns[0], audit.Values, describeRows(res, 1)), nil
	case models.AuditRowCount:
		return au.rowCount(st.Model, audit, parts, v), nil
	case models.AuditSQL:
		scope := *au.scope
		scope.This = models.SQL(stage)
		sql, err := st.Model.RenderTemplate(audit.SQL, &scope, parts...)
		if err != nil {
			return "", err
		}
		res, err := query(fmt.Sprintf("SELECT count(*) FROM (\n%s\n) audit_rows", sql))
		if err != nil {
			return "", err
		}
		if n := adapters.Int(res.Rows[0][0]); n > 0 {
			return fmt.Sprintf("the audit query returned %d rows (it must return none)", n), nil
		}
		return "", nil
	}
	return "", fmt.Errorf("unknown audit kind %q", audit.Kind)
}

// rowCount checks bounds per partition; within compares each partition
// with the previous one (in the same batch, or in the ledger).
func (au *auditor) rowCount(m *models.Model, audit models.Audit, parts []models.Partition, v *verification) string {
	var bad []string
	for i, p := range parts {
		n := v.rows[i]
		if audit.Min != nil && n < *audit.Min {
			bad = append(bad, fmt.Sprintf("%s has %d rows, fewer than %d", p.Key, n, *audit.Min))
		}
		if audit.Max != nil && n > *audit.Max {
			bad = append(bad, fmt.Sprintf("%s has %d rows, more than %d", p.Key, n, *audit.Max))
		}
		if audit.Within == nil || m.Kind() != models.TimePartitioned {
			continue
		}
		prev, prevKey, ok := au.previousRows(m, parts, i, v)
		if !ok {
			continue
		}
		if prev == 0 {
			if n > 0 {
				bad = append(bad, fmt.Sprintf("%s has %d rows where %s had none (allowed %.0f%% off)", p.Key, n, prevKey, *audit.Within*100))
			}
			continue
		}
		if change := math.Abs(float64(n-prev)) / float64(prev); change > *audit.Within {
			bad = append(bad, fmt.Sprintf("%s has %d rows, %.0f%% off the %d of %s (allowed %.0f%%)",
				p.Key, n, change*100, prev, prevKey, *audit.Within*100))
		}
	}
	return strings.Join(bad, "; ")
}

// previousRows returns the row count of the partition before parts[i]:
// from the same unit, else as this run staged it, else as the ledger
// recorded its data (a failed partition's record keeps the rows still in
// the table). ok is false when nothing is known of it (it was never built,
// or it precedes the model's start).
func (au *auditor) previousRows(m *models.Model, parts []models.Partition, i int, v *verification) (int64, string, bool) {
	if i > 0 {
		return v.rows[i-1], parts[i-1].Key, true
	}
	pp := m.Next(parts[i], -1)
	if pp.Start.Before(m.Config.Start) {
		return 0, "", false
	}
	if au.previous != nil {
		if n, ok := au.previous(m.Name, pp.Key); ok {
			return n, pp.Key, true
		}
	}
	if r := au.plan.Record(m.Name, pp.Key); r != nil && (r.State.Published() || r.State == adapters.RecordFailed && !r.PublishedAt.IsZero()) {
		return r.Rows, pp.Key, true
	}
	return 0, "", false
}

func quoteAll(d models.Dialect, cols []string) string {
	q := make([]string, len(cols))
	for i, c := range cols {
		q[i] = d.QuoteIdent(c)
	}
	return strings.Join(q, ", ")
}

// describeRows prints up to three result rows as "a, b (n times)".
func describeRows(res *adapters.Result, keyCols int) string {
	var parts []string
	for _, row := range res.Rows {
		vals := make([]string, keyCols)
		for i := range vals {
			vals[i] = plan.ValueText(row[i])
		}
		parts = append(parts, fmt.Sprintf("%s (%d rows)", strings.Join(vals, ", "), adapters.Int(row[keyCols])))
	}
	return strings.Join(parts, "; ")
}
