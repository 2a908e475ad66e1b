package plan

import (
	"context"
	"fmt"
	"hash/fnv"
	"math/big"
	"slices"
	"strconv"
	"strings"

	"github.com/refill/refill/adapters"
	"github.com/refill/refill/models"
)

// Content fingerprints of targets. A model with content_hash: records, with
// each partition it publishes, the count and an order-independent hash of
// the partition's rows (taken from the stage it swaps in), and refill
// verify hashes the table's partitions again: a row updated, added or
// deleted outside refill shows, not only a changed count. The hash covers
// the columns in name order; a print also keeps a hash of their names, so
// a partition built before the table's columns changed is reported as not
// verifiable rather than changed.

// ContentPrint is one partition's content fingerprint as a record keeps it.
type ContentPrint struct {
	Rows    int64
	Hash    uint64
	Columns uint32 // a hash of the column names hashed
}

// String renders p as the ledger keeps it.
func (p ContentPrint) String() string {
	return fmt.Sprintf("%d:%016x:%08x", p.Rows, p.Hash, p.Columns)
}

// ParseContentPrint reads a ContentPrint from its String form.
func ParseContentPrint(s string) (ContentPrint, bool) {
	parts := strings.Split(s, ":")
	if len(parts) != 3 {
		return ContentPrint{}, false
	}
	rows, err1 := strconv.ParseInt(parts[0], 10, 64)
	hash, err2 := strconv.ParseUint(parts[1], 16, 64)
	cols, err3 := strconv.ParseUint(parts[2], 16, 32)
	return ContentPrint{Rows: rows, Hash: hash, Columns: uint32(cols)}, err1 == nil && err2 == nil && err3 == nil
}

// columnsHash hashes a list of column names, in name order.
func columnsHash(columns []string) uint32 {
	h := fnv.New32a()
	for _, c := range sortedColumns(columns) {
		h.Write([]byte(strings.ToLower(c)))
		h.Write([]byte{0})
	}
	return h.Sum32()
}

func sortedColumns(columns []string) []string {
	out := slices.Clone(columns)
	slices.SortFunc(out, func(a, b string) int { return strings.Compare(strings.ToLower(a), strings.ToLower(b)) })
	return out
}

// ContentPrints hashes the rows of rel, over columns, per partition of m,
// in one statement grouped as CountPartitions groups (colType is the
// partition column's type). It returns the print of each partition in want
// (every partition holding rows, when want is nil), but for partitions that
// share a bucket with another (zones whose offset is not a whole number of
// hours): a bucket cannot be split, so those are left out, and returned
// as shared.
//
// casts, by lower-case column name, are the types to hash columns as: a
// stage's rows are hashed as its table will hold them.
func ContentPrints(ctx context.Context, a adapters.Adapter, tag adapters.Tag, m *models.Model, rel models.Relation, columns []string, colType string, want []models.Partition, casts map[string]string) (prints map[string]ContentPrint, shared map[string]bool, err error) {
	d := a.Dialect()
	cols := make([]string, len(columns))
	for i, c := range sortedColumns(columns) {
		cols[i] = d.QuoteIdent(c)
		if t := casts[strings.ToLower(c)]; t != "" {
			cols[i] = fmt.Sprintf("CAST(%s AS %s)", cols[i], t)
		}
	}
	names := columnsHash(columns)
	hash := d.CastString(d.HashRows(cols))
	out := map[string]ContentPrint{}
	for _, p := range want {
		out[p.Key] = ContentPrint{Columns: names}
	}
	if m.Kind() == models.WholeTable {
		res, err := a.Query(ctx, fmt.Sprintf("SELECT count(*), %s FROM %s", hash, rel.Quote(d)), tag)
		if err != nil {
			return nil, nil, err
		}
		h, err := hashOf(res.Rows[0][1])
		if err != nil {
			return nil, nil, err
		}
		out[models.WholeTableKey] = ContentPrint{Rows: adapters.Int(res.Rows[0][0]), Hash: h, Columns: names}
		return out, nil, nil
	}
	col := d.QuoteIdent(m.Config.PartitionBy)
	bucket := col
	if m.Kind() == models.TimePartitioned && !adapters.IsDateType(colType) {
		bucket = d.DateTrunc(models.Hour, col)
	}
	// (Aliases no column is named: ClickHouse resolves a name to an alias
	// of the SELECT before a column, even inside the aggregates.)
	res, err := a.Query(ctx, fmt.Sprintf("SELECT min(%s) AS refill_lo, max(%s) AS refill_hi, count(*) AS refill_n, %s AS refill_hash FROM %s GROUP BY %s",
		col, col, hash, rel.Quote(d), bucket), tag)
	if err != nil {
		return nil, nil, err
	}
	shared = map[string]bool{}
	for _, row := range res.Rows {
		if row[0] == nil {
			continue // NULL partition values: in no partition
		}
		lo, err := PartitionOf(m, row[0])
		if err != nil {
			return nil, nil, err
		}
		hi, err := PartitionOf(m, row[1])
		if err != nil {
			return nil, nil, err
		}
		if lo != hi {
			shared[lo], shared[hi] = true, true
			continue
		}
		if _, ok := out[lo]; !ok && want != nil {
			continue
		}
		h, err := hashOf(row[3])
		if err != nil {
			return nil, nil, err
		}
		p := out[lo]
		p.Rows += adapters.Int(row[2])
		p.Hash += h
		p.Columns = names
		out[lo] = p
	}
	for k := range shared {
		delete(out, k)
	}
	return out, shared, nil
}

// ContentCheck is what refill verify found of one model's table.
type ContentCheck struct {
	Model *models.Model
	// Checked counts the built partitions in range whose content was
	// compared with the fingerprint recorded when they were published.
	Checked int
	Changed []ContentChange // those whose content differs, by key
	// Unrecorded counts built partitions without a fingerprint: published
	// before content_hash: was set, or sharing a bucket (see ContentPrints).
	Unrecorded int
	// ColumnsChanged counts built partitions whose fingerprint covers other
	// columns than the table has now: they cannot be compared.
	ColumnsChanged int
	Missing        bool // the table does not exist
}

// ContentChange is one partition whose rows changed since refill
// published them.
type ContentChange struct {
	Partition string
	Detail    string
}

// VerifyContent compares the content of the built partitions of pl's
// models (every partition of pl in range, as a --mode all plan lists
// them) with the fingerprints recorded when they were published: one
// grouped scan per table. It finds rows updated, added or deleted outside
// refill.
func (r *Reader) VerifyContent(ctx context.Context, pl *Plan) ([]ContentCheck, error) {
	inRange := map[*models.Model]map[string]bool{}
	for _, m := range pl.Models {
		inRange[m] = map[string]bool{}
	}
	for _, seq := range []func(func(Step) bool){pl.AllSteps(), pl.AllBlocked()} {
		for st := range seq {
			if keys := inRange[st.Model]; keys != nil {
				keys[st.Partition.Key] = true
			}
		}
	}
	names := make([]string, len(pl.Models))
	for i, m := range pl.Models {
		names[i] = m.Name
	}
	records, err := r.Adapter.Partitions(ctx, names)
	if err != nil {
		return nil, err
	}
	built := map[string][]*adapters.Record{}
	for i := range records {
		if rec := &records[i]; rec.State.Published() {
			built[rec.Model] = append(built[rec.Model], rec)
		}
	}
	var out []ContentCheck
	for _, m := range pl.Models {
		check := ContentCheck{Model: m}
		var recs []*adapters.Record
		for _, rec := range built[m.Name] {
			if inRange[m][rec.Partition] {
				recs = append(recs, rec)
			}
		}
		if len(recs) == 0 {
			out = append(out, check)
			continue
		}
		rel := r.Scope.Relation(m)
		cols, err := r.Adapter.Columns(ctx, rel)
		if err != nil {
			return nil, err
		}
		if cols == nil {
			check.Missing = true
			for _, rec := range recs {
				check.Changed = append(check.Changed, ContentChange{Partition: rec.Partition, Detail: "the table does not exist"})
			}
			out = append(out, check)
			continue
		}
		colNames, colType := make([]string, len(cols)), ""
		for i, c := range cols {
			colNames[i] = c.Name
			if strings.EqualFold(c.Name, m.Config.PartitionBy) {
				colType = c.Type
			}
		}
		prints, shared, err := ContentPrints(ctx, r.Adapter, adapters.Tag{Model: m.Name, Step: "verify"}, m, rel, colNames, colType, nil, nil)
		if err != nil {
			return nil, fmt.Errorf("hashing the rows of %s: %w", m.Name, err)
		}
		names := columnsHash(colNames)
		slices.SortFunc(recs, func(a, b *adapters.Record) int {
			if c := a.WindowStart.Compare(b.WindowStart); c != 0 {
				return c
			}
			return strings.Compare(a.Partition, b.Partition)
		})
		for _, rec := range recs {
			then, ok := ParseContentPrint(ParseMarks(rec.Watermark).Content)
			switch {
			case !ok || shared[rec.Partition]:
				check.Unrecorded++
				continue
			case then.Columns != names:
				check.ColumnsChanged++
				continue
			}
			check.Checked++
			now := prints[rec.Partition]
			now.Columns = names
			switch {
			case now == then:
			case now.Rows != then.Rows:
				check.Changed = append(check.Changed, ContentChange{Partition: rec.Partition,
					Detail: fmt.Sprintf("%s when published, %d now", Plural(int(then.Rows), "row"), now.Rows)})
			default:
				check.Changed = append(check.Changed, ContentChange{Partition: rec.Partition,
					Detail: fmt.Sprintf("rows changed in place (%s, different content)", Plural(int(then.Rows), "row"))})
			}
		}
		out = append(out, check)
	}
	return out, nil
}

// hashOf reads a HashRows value as text, modulo 2^64.
func hashOf(v any) (uint64, error) {
	if v == nil {
		return 0, nil
	}
	s := fmt.Sprint(adapters.Normalize(v))
	h, ok := new(big.Int).SetString(s, 10)
	if !ok {
		return 0, fmt.Errorf("the hash of the rows is %q, not a number", s)
	}
	return h.Mod(h, mod64).Uint64(), nil
}
