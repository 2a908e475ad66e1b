package clickhouse

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/refill/refill/adapters"
	"github.com/refill/refill/models"
)

// stageState is what the adapter knows of a stage (adapters.Stage.State).
type stageState struct {
	// key is the stage's partition key expression (the target's, or the
	// model's table options for a new target).
	key string
	// parts, once read, are the stage's partition IDs and the IDs of the
	// target's partitions the window touches (nil target: it did not
	// exist). A stage never changes, and while this run holds its lease on
	// the target only this run's swaps change the target, none of them
	// inside this stage's window; so the swap can use the touched
	// partitions the verification read. Not whether they hold rows outside
	// the window: other swaps add those, unless the layout is aligned.
	parts *stageParts
	// shards, on the sharded layout, are where the stage was swapped.
	shards *shardSwaps
}

type stageParts struct {
	staged []string
	// touched are the target's partitions that may hold rows inside the
	// window; nil when the target did not exist.
	touched []string
	// outside is set when some of the touched partitions may also hold
	// rows outside the window, which a swap must carry over.
	outside bool
	groups  []adapters.RowGroup // per data part of the stage: rows and the range of the partition column
	ranged  bool                // the parts' ranges are the window column's (see SummarizeStage)
}

// SummarizeStage counts the stage's rows from system.parts: each data part
// records its rows and the range of the window's column (see partRanges);
// where it does not, ok is false.
func (a *Adapter) SummarizeStage(ctx context.Context, st *adapters.Stage) ([]adapters.RowGroup, bool, error) {
	p, err := a.stageParts(ctx, st, a.role.readsTargetParts())
	if err != nil || !p.ranged {
		return nil, false, err
	}
	return p.groups, true, nil
}

// stageParts reads, in one query and once per stage, the stage's parts
// and which partitions of the target the window touches (targetParts).
//
// readsTarget says whether the target's partitions are read here: they are
// not where each shard's swap reads its own part of the target.
func (n *node) stageParts(ctx context.Context, st *adapters.Stage, readsTarget bool) (*stageParts, error) {
	s := stateOf(st)
	if s.parts != nil {
		return s.parts, nil
	}
	tag := st.Tag
	tag.Step = "verify"
	targetRel := n.resolve(st.Target)
	target, err := n.table(ctx, tag, targetRel)
	if err != nil {
		return nil, err
	}
	if target != nil && strings.HasPrefix(target.Engine, "Replicated") {
		// The partitions the window touches are read from this replica:
		// first it applies whatever other replicas wrote before.
		if err := n.catchUp(ctx, tag, targetRel); err != nil {
			return nil, err
		}
	}
	if !readsTarget {
		target = nil
	}
	pr := n.partRanges(st, s.key)
	d := n.d
	q := fmt.Sprintf("SELECT 's' AS kind, partition_id AS id, rows AS n, toString(%s) AS lo, toString(%s) AS hi FROM system.parts WHERE database = %s AND table = %s AND active",
		pr.lo, pr.hi, d.QuoteString(st.Relation.Schema), d.QuoteString(st.Relation.Name))
	if target != nil {
		q += "\nUNION ALL " + n.targetPartsSQL(st, targetRel, pr, n.aligned(target, st.Window))
	}
	res, err := n.query(ctx, tag, q)
	if err != nil {
		return nil, err
	}
	p := &stageParts{ranged: pr.ranged}
	var trows [][]any
	for _, row := range res.Rows {
		if row[0] == "t" {
			trows = append(trows, row)
			continue
		}
		l, h, readable := pr.read(row)
		p.staged = append(p.staged, fmt.Sprint(row[1]))
		if !readable {
			p.ranged = false // not tracked (a zero date), or unreadable
		}
		p.groups = append(p.groups, adapters.RowGroup{Rows: adapters.Int(row[2]), Lo: l, Hi: h})
	}
	p.staged = unique(p.staged)
	if target != nil {
		p.touched, p.outside = n.readTargetParts(target, st.Window, pr, trows)
	}
	s.parts = p
	st.State = s
	return p, nil
}

// stageRows counts st's rows: from the parts its verification read
// (stageParts), or else by a query.
func (a *Adapter) stageRows(ctx context.Context, tag adapters.Tag, st *adapters.Stage) (int64, error) {
	if p := stateOf(st).parts; p != nil {
		var n int64
		for _, g := range p.groups {
			n += g.Rows
		}
		return n, nil
	}
	res, err := a.query(ctx, tag, "SELECT count() FROM "+st.Relation.Quote(a.d))
	if err != nil {
		return 0, err
	}
	return adapters.Int(res.Rows[0][0]), nil
}

// targetParts reads, now, which partitions of the target the window
// touches, and whether they hold rows outside it (see targetPartsSQL).
func (n *node) targetParts(ctx context.Context, tag adapters.Tag, st *adapters.Stage, target *tableInfo) ([]string, bool, error) {
	pr := n.partRanges(st, stateOf(st).key)
	res, err := n.query(ctx, tag, n.targetPartsSQL(st, n.resolve(st.Target), pr, n.aligned(target, st.Window)))
	if err != nil {
		return nil, false, err
	}
	touched, outside := n.readTargetParts(target, st.Window, pr, res.Rows)
	return touched, outside, nil
}

// targetPartsSQL selects the target's partitions that the window touches,
// as rows of ('t', partition ID, rows, least, greatest). Where the parts'
// ranges are the window column's, they come from system.parts: a
// partition is touched if its parts overlap the window or the stage has
// it. When the layout is aligned with the window, no partition the stage
// has can hold rows outside it, and the parts overlapping the window are
// enough. Otherwise they are the partitions with rows inside the window (a
// scan of the window), without ranges.
func (n *node) targetPartsSQL(st *adapters.Stage, target models.Relation, pr partRanges, aligned bool) string {
	d, w := n.d, st.Window
	if pr.ranged && aligned {
		start, end := w.Bounds(d)
		return fmt.Sprintf("SELECT 't', partition_id, rows, toString(%s), toString(%s) FROM system.parts WHERE database = %s AND table = %s AND active AND %s >= %s AND %s < %s",
			pr.lo, pr.hi, d.QuoteString(target.Schema), d.QuoteString(target.Name), pr.hi, start, pr.lo, end)
	}
	if pr.ranged {
		start, end := w.Bounds(d)
		return fmt.Sprintf("SELECT 't', partition_id, sum(rows), toString(min(%s)), toString(max(%s)) FROM system.parts WHERE database = %s AND table = %s AND active GROUP BY partition_id HAVING (max(%s) >= %s AND min(%s) < %s) OR partition_id IN (SELECT partition_id FROM system.parts WHERE database = %s AND table = %s AND active)",
			pr.lo, pr.hi, d.QuoteString(target.Schema), d.QuoteString(target.Name), pr.hi, start, pr.lo, end,
			d.QuoteString(st.Relation.Schema), d.QuoteString(st.Relation.Name))
	}
	return fmt.Sprintf("SELECT 't', *, toUInt64(0), '', '' FROM (%s)", touchedSQL(d, target, w))
}

// readTargetParts reads the rows of targetPartsSQL: the touched
// partitions, and whether some of them may hold rows outside window w.
// Without ranges that follows from the partition key (aligned).
func (n *node) readTargetParts(target *tableInfo, w adapters.Window, pr partRanges, rows [][]any) ([]string, bool) {
	touched := []string{}
	outside := false
	for _, row := range rows {
		touched = append(touched, fmt.Sprint(row[1]))
		if l, h, readable := pr.read(row); pr.ranged && (!readable || !inside(l, h, w)) {
			outside = true
		}
	}
	if !pr.ranged {
		outside = !n.aligned(target, w)
	}
	return uniqueOrEmpty(touched), outside
}

// partRanges says which columns of system.parts hold the range of the
// window's column in each part, if any.
type partRanges struct {
	ranged  bool   // min_date/max_date or min_time/max_time are the window column's
	lo, hi  string // the columns
	layout  string // how toString prints them
	colType string
	zone    *time.Location
}

// partRanges: each data part records the least and greatest value of the
// date column of its partition key (min_date/max_date, min_time/max_time).
// That is the window's column when the partition key is the column or a
// calendar function of it (toYYYYMM(d), ...) and the column is a plain
// Date (with date windows) or DateTime (with timestamp windows).
func (n *node) partRanges(st *adapters.Stage, key string) partRanges {
	w := st.Window
	pr := partRanges{lo: "min_date", hi: "max_date", layout: "2006-01-02", zone: n.server.zone}
	for _, c := range st.Columns {
		if c.Name == w.Column {
			pr.colType = c.Type
		}
	}
	pr.ranged = !w.Whole() && w.Values == nil && keyBucket(key, w.Column) != bucketUnknown
	switch {
	case pr.colType == "Date" && !w.Timestamp:
	case (pr.colType == "DateTime" || strings.HasPrefix(pr.colType, "DateTime('")) && w.Timestamp:
		pr.lo, pr.hi, pr.layout = "min_time", "max_time", "2006-01-02 15:04:05"
	default:
		pr.ranged = false
	}
	return pr
}

// read parses a row's least and greatest values; readable is false when
// they are not ranges of the window's column, not tracked (a zero date) or
// unreadable.
func (pr partRanges) read(row []any) (lo, hi time.Time, readable bool) {
	if !pr.ranged {
		return time.Time{}, time.Time{}, false
	}
	// The driver would read Dates and DateTimes in the server's zone; as
	// text they are the column's own values.
	l, err1 := parseIn(fmt.Sprint(row[3]), pr.layout, pr.colType, pr.zone)
	h, err2 := parseIn(fmt.Sprint(row[4]), pr.layout, pr.colType, pr.zone)
	return l, h, err1 == nil && err2 == nil && l.Unix() > 0
}

// inside reports whether the values from lo to hi (read by parseIn) lie
// inside window w.
func inside(lo, hi time.Time, w adapters.Window) bool {
	start, end := w.Start, w.End
	if !w.Timestamp {
		loc := w.Location
		if loc == nil {
			loc = time.UTC
		}
		// Dates, as midnight UTC, against the window's dates.
		s, e := w.Start.In(loc), w.End.In(loc)
		start = time.Date(s.Year(), s.Month(), s.Day(), 0, 0, 0, 0, time.UTC)
		end = time.Date(e.Year(), e.Month(), e.Day(), 0, 0, 0, 0, time.UTC)
	}
	return !lo.Before(start) && hi.Before(end)
}

// parseIn reads a Date or DateTime printed by toString: a Date as midnight
// UTC (as Result documents dates), a DateTime in its column's zone (or the
// server's).
func parseIn(v, layout, colType string, server *time.Location) (time.Time, error) {
	loc := time.UTC
	if layout != "2006-01-02" {
		loc = server
		if zone, ok := strings.CutPrefix(colType, "DateTime('"); ok {
			z, err := time.LoadLocation(strings.TrimSuffix(zone, "')"))
			if err != nil {
				return time.Time{}, err
			}
			loc = z
		}
		if loc == nil {
			return time.Time{}, fmt.Errorf("unknown time zone")
		}
	}
	t, err := time.ParseInLocation(layout, v, loc)
	return t.UTC(), err
}

// uniqueOrEmpty is unique, keeping nil apart from empty.
func uniqueOrEmpty(ids []string) []string {
	if ids == nil {
		return nil
	}
	if out := unique(ids); out != nil {
		return out
	}
	return []string{}
}

func stateOf(st *adapters.Stage) *stageState {
	s, _ := st.State.(*stageState)
	if s == nil {
		s = &stageState{}
	}
	return s
}
