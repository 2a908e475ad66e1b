package statuspage

import (
	"fmt"
	"strings"
	"time"

	"github.com/refill/refill/models"
)

// A calendar draws one model's partitions as rows of a table whose columns
// are a fixed period: a day's 24 hours, a month's 31 days, a year's 53 ISO
// weeks or 12 months. Each cell covers a run of neighbouring partitions in
// one state (a colspan), and three or more neighbouring rows wholly in one
// state fold into one band, so the page grows with the number of state
// changes rather than with the number of partitions.
type calendar struct {
	Corner  string   // what a row is: "day (UTC)", "month", ...
	Axis    string   // what a column is: "hour of the day (UTC)", ...
	Columns []string // column labels
	Wide    bool     // columns labelled with words or years need wider cells
	Rows    []calRow
}

type calRow struct {
	Label string
	Fold  bool // a band of whole rows in one state
	Cells []calCell
}

// calCell is a run of partitions in one state (Class), or blank columns
// when Class is "".
type calCell struct {
	Class string
	Span  int
	Title string
	Text  string // a folded band's caption, or a list partition's value
	ID    string // set when the summary links to this cell
}

// calLayout places a model's partitions in a calendar.
type calLayout struct {
	corner, axis string
	columns      []string
	wide         bool
	unit         string // what a folded row counts: "days", "months", "years"
	// place returns the row label and column of the partition starting at t.
	place func(t time.Time) (string, int)
}

var monthColumns = []string{"Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"}

// layoutFor is the calendar of time-partitioned model m whose partitions
// start from first through last.
func layoutFor(m *models.Model, first, last time.Time) calLayout {
	loc := m.Config.Location
	if loc == nil {
		loc = time.UTC
	}
	zone := ""
	if loc != time.UTC {
		zone = " (" + loc.String() + ")"
	}
	numbered := func(from, n int, format string) []string {
		out := make([]string, n)
		for i := range out {
			out[i] = fmt.Sprintf(format, from+i)
		}
		return out
	}
	switch m.Config.Grain {
	case models.Hour:
		return calLayout{corner: "day (UTC)", axis: "hour of the day (UTC)", columns: numbered(0, 24, "%02d"), unit: "days",
			place: func(t time.Time) (string, int) { t = t.UTC(); return t.Format("2006-01-02 Mon"), t.Hour() }}
	case models.Day:
		return calLayout{corner: "month" + zone, axis: "day of the month" + zone, columns: numbered(1, 31, "%d"), unit: "months",
			place: func(t time.Time) (string, int) { t = t.In(loc); return t.Format("2006-01"), t.Day() - 1 }}
	case models.Week:
		return calLayout{corner: "ISO year" + zone, axis: "ISO week" + zone, columns: numbered(1, 53, "%d"), unit: "years",
			place: func(t time.Time) (string, int) { y, w := t.In(loc).ISOWeek(); return fmt.Sprint(y), w - 1 }}
	case models.SundayWeek:
		// A week from Sunday sits in the ISO week of its Monday.
		return calLayout{corner: "ISO year" + zone, axis: "ISO week of the Monday" + zone, columns: numbered(1, 53, "%d"), unit: "years",
			place: func(t time.Time) (string, int) {
				y, w := t.In(loc).AddDate(0, 0, 1).ISOWeek()
				return fmt.Sprint(y), w - 1
			}}
	case models.Month:
		return calLayout{corner: "year" + zone, axis: "month" + zone, columns: monthColumns, wide: true, unit: "years",
			place: func(t time.Time) (string, int) { t = t.In(loc); return fmt.Sprint(t.Year()), int(t.Month()) - 1 }}
	}
	// Years, calendar or fiscal, by the year they start in (a fiscal year
	// of weeks may start up to three days before its month).
	year := func(t time.Time) int { return t.In(loc).AddDate(0, 0, 3).Year() }
	y0, y1 := year(first), year(last)
	axis := "year"
	if m.Config.Grain.IsFiscal() {
		axis = m.Config.Grain.String()
	}
	return calLayout{corner: "", axis: axis + zone, columns: numbered(y0, y1-y0+1, "%d"), wide: true, unit: "rows",
		place: func(t time.Time) (string, int) { return "years", year(t) - y0 }}
}

// partCell is what a calendar needs of one partition.
type partCell struct {
	key   string
	start time.Time
	class string
	title string // for a cell of this partition alone
	note  string // its error or reason, for a cell of a run of partitions
}

// cellRef locates the cell that shows a partition: row and cell index.
type cellRef struct{ row, cell int }

// buildCalendar lays out parts (in time order) and returns the calendar
// and, for each partition, where its cell is.
func buildCalendar(lay calLayout, parts []partCell) (*calendar, []cellRef) {
	cal := &calendar{Corner: lay.corner, Axis: lay.axis, Columns: lay.columns, Wide: lay.wide}
	refs := make([]cellRef, len(parts))
	type row struct {
		label string
		cells []calCell
		parts int // partitions in the row
	}
	var rows []row
	var cur *row     // the row being filled
	col := 0         // cur's next column
	firstOfCell := 0 // the first partition of cur's last cell
	flush := func(i int) {
		// Axes name the partitions of a run of done or missing ones; other
		// cells say what they are when hovered.
		c := &cur.cells[len(cur.cells)-1]
		switch {
		case c.Span == 1:
			c.Title = parts[firstOfCell].title
		case c.Class != "done" && c.Class != "missing":
			c.Title = fmt.Sprintf("%s … %s: %d %s", parts[firstOfCell].key, parts[i].key, c.Span, stateWords[c.Class])
			if note := parts[firstOfCell].note; note != "" {
				c.Title += ", the first: " + note
			}
		}
	}
	for i, p := range parts {
		label, c := lay.place(p.start)
		if cur == nil || label != cur.label {
			if cur != nil {
				flush(i - 1)
			}
			rows = append(rows, row{label: label})
			cur, col = &rows[len(rows)-1], 0
		}
		if c > col { // blank columns: a sparse selection, or a first partition mid-row
			cur.cells = append(cur.cells, calCell{Span: c - col})
			col = c
		}
		last := len(cur.cells) - 1
		if last >= 0 && cur.cells[last].Class == p.class {
			cur.cells[last].Span++
		} else {
			if last >= 0 && cur.cells[last].Class != "" {
				flush(i - 1)
			}
			cur.cells = append(cur.cells, calCell{Class: p.class, Span: 1})
			firstOfCell = i
		}
		refs[i] = cellRef{row: len(rows) - 1, cell: len(cur.cells) - 1}
		cur.parts++
		col = c + 1
	}
	if cur != nil {
		flush(len(parts) - 1)
	}
	// Fold runs of three or more rows that are one cell each, in one state.
	uniform := func(r row) bool { return len(r.cells) == 1 && r.cells[0].Class != "" }
	rowAt := make([]int, len(rows)) // old row index -> new row index
	for i := 0; i < len(rows); {
		j := i + 1
		for uniform(rows[i]) && j < len(rows) && uniform(rows[j]) && rows[j].cells[0].Class == rows[i].cells[0].Class {
			j++
		}
		if j-i < 3 {
			for ; i < j; i++ {
				rowAt[i] = len(cal.Rows)
				cal.Rows = append(cal.Rows, calRow{Label: rows[i].label, Cells: rows[i].cells})
			}
			continue
		}
		n := 0
		for _, r := range rows[i:j] {
			n += r.parts
		}
		class := rows[i].cells[0].Class
		from, to := rows[i].label, rows[j-1].label
		if lay.unit == "days" { // drop the weekday from a band's dates
			from, to = strings.Fields(from)[0], strings.Fields(to)[0]
		}
		cal.Rows = append(cal.Rows, calRow{Label: from + " … " + to, Fold: true, Cells: []calCell{{
			Class: class, Span: len(lay.columns),
			Text: fmt.Sprintf("%d %s: all %d partitions %s", j-i, lay.unit, n, stateWords[class]),
		}}})
		for ; i < j; i++ {
			rowAt[i] = len(cal.Rows) - 1
		}
	}
	for i := range refs {
		if r := rowAt[refs[i].row]; cal.Rows[r].Fold {
			refs[i] = cellRef{row: r, cell: 0}
		} else {
			refs[i].row = r
		}
	}
	return cal, refs
}
