package runner

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/refill/refill/adapters"
	"github.com/refill/refill/models"
	"github.com/refill/refill/runner/plan"
)

// verification is what the verify query learned about a stage.
type verification struct {
	columns []string
	types   []string
	total   int64
	rows    []int64 // per partition of the unit, in order
	// content holds the partitions' content fingerprints, when asked for.
	content map[string]plan.ContentPrint
}

// verify checks that every staged row lies inside the unit's window and
// counts the rows of each partition, in one grouped scan of the stage; with
// content (the types of the table's columns, by lower-case name, when it
// has any), it also hashes each partition's rows as the table will hold
// them (plan.ContentPrints), in another.
func verify(ctx context.Context, a adapters.Adapter, st *adapters.Stage, parts []models.Partition, content map[string]string) (*verification, error) {
	d := a.Dialect()
	m := st.Model
	tag := st.Tag
	tag.Step = "verify"
	v := &verification{}
	if st.Columns != nil {
		for _, c := range st.Columns {
			v.columns, v.types = append(v.columns, c.Name), append(v.types, c.Type)
		}
	} else {
		probe, err := a.Query(ctx, fmt.Sprintf("SELECT * FROM %s LIMIT 0", st.Relation.Quote(d)), tag)
		if err != nil {
			return nil, err
		}
		v.columns, v.types = probe.Columns, probe.Types
	}
	w := st.Window
	colType := ""
	if !w.Whole() {
		i := columnIndex(v.columns, w.Column)
		if i < 0 {
			return nil, &VerifyError{Model: m.Name, Column: w.Column, Missing: true}
		}
		if i < len(v.types) {
			colType = v.types[i]
		}
		if err := checkWindowType(m, w, colType); err != nil {
			return nil, err
		}
	}
	c, err := plan.Summarize(ctx, a, st, parts)
	if err != nil {
		return nil, err
	}
	if c == nil {
		if c, err = plan.CountPartitions(ctx, a, tag, m, st.Relation, colType, parts, ""); err != nil {
			return nil, err
		}
	}
	v.total = c.Total
	v.rows = make([]int64, len(parts))
	for i, p := range parts {
		v.rows[i] = c.Rows[p.Key]
	}
	if c.Outside > 0 {
		e := &VerifyError{Model: m.Name, Outside: c.Outside, Total: c.Total, Example: c.Example,
			Column: w.Column, Window: describeWindow(m, parts)}
		if m.Config.TimestampWindow && m.Config.Location != time.UTC && adapters.IsDateType(colType) {
			e.Hint = fmt.Sprintf("%s is a %s column, and the model's windows start at midnight in %s: write partition_type: date so that windows are local dates",
				w.Column, colType, m.Config.Location)
		}
		return nil, e
	}
	if content != nil {
		tag.Step = "hash"
		casts := map[string]string{}
		for i, c := range v.columns {
			if t := content[strings.ToLower(c)]; t != "" && i < len(v.types) && !strings.EqualFold(t, v.types[i]) {
				casts[strings.ToLower(c)] = t
			}
		}
		if v.content, _, err = plan.ContentPrints(ctx, a, tag, m, st.Relation, v.columns, colType, parts, casts); err != nil {
			return nil, err
		}
	}
	return v, nil
}

// checkWindowType refuses a partition column whose type makes the window
// mean something else than the ledger records: local dates compared with
// a timestamp column would select UTC days.
func checkWindowType(m *models.Model, w adapters.Window, colType string) error {
	if w.Values != nil || w.Timestamp || m.Config.Location == time.UTC || colType == "" || adapters.IsDateType(colType) {
		return nil
	}
	return &VerifyError{Model: m.Name, Column: w.Column, TypeMismatch: colType,
		Hint: fmt.Sprintf("the model's windows are calendar dates of %s (partition_type: date), so %s must be a DATE; it is a %s. Output the local date, or use partition_type: timestamp",
			m.Config.Location, w.Column, colType)}
}

func columnIndex(cols []string, name string) int {
	for i, c := range cols {
		if strings.EqualFold(c, name) {
			return i
		}
	}
	return -1
}

// describeWindow names a unit's window for messages.
func describeWindow(m *models.Model, parts []models.Partition) string {
	first, last := parts[0], parts[len(parts)-1]
	switch m.Kind() {
	case models.TimePartitioned:
		if !m.Config.TimestampWindow {
			loc := m.Config.Location
			s := fmt.Sprintf("[%s, %s)", first.Start.In(loc).Format("2006-01-02"), last.End.In(loc).Format("2006-01-02"))
			if loc != time.UTC {
				s += " (dates in " + loc.String() + ")"
			}
			return s
		}
		return fmt.Sprintf("[%s, %s)", first.Start.UTC().Format("2006-01-02 15:04:05"), last.End.UTC().Format("2006-01-02 15:04:05"))
	case models.ListPartitioned:
		keys := make([]string, len(parts))
		for i, p := range parts {
			keys[i] = p.Key
		}
		return "{" + strings.Join(keys, ", ") + "}"
	}
	return "the table"
}
