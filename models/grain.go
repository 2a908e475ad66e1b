package models

import (
	"fmt"
	"strconv"
	"strings"
	"time"
)

// Grain is the size of a time partition. The zero Grain means the model is
// not time-partitioned.
type Grain int

// The time grains a model may declare, finest first (a Grain is less
// than a coarser one). Weeks are ISO weeks, starting on Monday and keyed
// 2024-W01; SundayWeek weeks start on Sunday (a model's week_start:
// sunday) and are keyed by that Sunday's date.
const (
	Hour Grain = iota + 1
	Day
	Week
	SundayWeek
	Month
	Year
)

var grainNames = map[Grain]string{Hour: "hour", Day: "day", Week: "week", SundayWeek: "sunday_week", Month: "month", Year: "year"}

// ParseGrain parses a model's grain: hour, day, week, month or year
// (weeks from Sunday are week with week_start: sunday).
func ParseGrain(s string) (Grain, error) {
	if s == grainNames[SundayWeek] {
		return 0, fmt.Errorf("weeks from Sunday are grain: week with week_start: sunday")
	}
	names := []string{"hour", "day", "week", "month", "year"}
	for g, name := range grainNames {
		if s == name {
			return g, nil
		}
	}
	return 0, fmt.Errorf("unknown grain %q (want %s)%s", s, orList(names), suggest(s, names))
}

// ParseUnit parses the unit of a date helper (date_trunc, date_add,
// date_diff): a grain's name, or sunday_week.
func ParseUnit(s string) (Grain, error) {
	names := []string{"hour", "day", "week", "sunday_week", "month", "year"}
	for g, name := range grainNames {
		if s == name {
			return g, nil
		}
	}
	return 0, fmt.Errorf("unknown unit %q (want %s)%s", s, orList(names), suggest(s, names))
}

// IsWeek reports whether g is a week of either start.
func (g Grain) IsWeek() bool { return g == Week || g == SundayWeek }

// Divides reports whether every period of h is a run of whole periods of
// g (in one location): hours and days divide every grain, weeks the
// fiscal years of weeks from their weekday, months the years and the
// fiscal years of months, and every grain itself.
func (g Grain) Divides(h Grain) bool {
	if g == h || g == Hour || g == Day {
		return true
	}
	_, wd, weeks, fiscal := h.Fiscal()
	switch g {
	case Week:
		return fiscal && weeks && wd == time.Monday
	case SundayWeek:
		return fiscal && weeks && wd == time.Sunday
	case Month:
		return h == Year || fiscal && !weeks
	}
	return false
}

func (g Grain) String() string {
	if name, ok := grainNames[g]; ok {
		return name
	}
	if g.IsFiscal() {
		return g.fiscalString()
	}
	return "none"
}

// Truncate returns the start of the period of grain g that contains t,
// as a time in loc.
func (g Grain) Truncate(t time.Time, loc *time.Location) time.Time {
	if g.IsFiscal() {
		return g.fiscalTruncate(t, loc)
	}
	t = t.In(loc)
	y, m, d := t.Date()
	switch g {
	case Hour:
		return t.Truncate(time.Hour) // hour grains are UTC-aligned; see Config.Timezone
	case Day:
		return time.Date(y, m, d, 0, 0, 0, 0, loc)
	case Week:
		day := time.Date(y, m, d, 0, 0, 0, 0, loc)
		back := (int(day.Weekday()) + 6) % 7 // days since Monday
		return time.Date(y, m, d-back, 0, 0, 0, 0, loc)
	case SundayWeek:
		back := int(time.Date(y, m, d, 0, 0, 0, 0, loc).Weekday()) // days since Sunday
		return time.Date(y, m, d-back, 0, 0, 0, 0, loc)
	case Month:
		return time.Date(y, m, 1, 0, 0, 0, 0, loc)
	case Year:
		return time.Date(y, 1, 1, 0, 0, 0, 0, loc)
	}
	panic("models: Truncate on a model without a grain")
}

// Add returns the start of the period n periods after the one starting at
// start (n may be negative). start must be a period start in its location.
// Days are calendar days, so a local day across a DST change is 23 or 25
// hours long.
func (g Grain) Add(start time.Time, n int) time.Time {
	y, m, d := start.Date()
	loc := start.Location()
	if g.IsFiscal() {
		return g.fiscalStart(fiscalYearOf(start)+n, loc)
	}
	switch g {
	case Hour:
		return start.Add(time.Duration(n) * time.Hour)
	case Day:
		return time.Date(y, m, d+n, 0, 0, 0, 0, loc)
	case Week, SundayWeek:
		return time.Date(y, m, d+7*n, 0, 0, 0, 0, loc)
	case Month:
		return time.Date(y, m+time.Month(n), 1, 0, 0, 0, 0, loc)
	case Year:
		return time.Date(y+n, 1, 1, 0, 0, 0, 0, loc)
	}
	panic("models: Add on a model without a grain")
}

// Key formats the period starting at start: 2024-01-02T13 (hour),
// 2024-01-02 (day), 2024-W01 (week), 2024-01-07 (the Sunday a
// sunday_week starts on), 2024-01 (month) or 2024 (year).
func (g Grain) Key(start time.Time) string {
	switch g {
	case Hour:
		return start.UTC().Format("2006-01-02T15")
	case Day, SundayWeek:
		return start.Format("2006-01-02")
	case Week:
		y, w := start.ISOWeek()
		return fmt.Sprintf("%04d-W%02d", y, w)
	case Month:
		return start.Format("2006-01")
	case Year:
		return start.Format("2006")
	}
	if g.IsFiscal() {
		return g.fiscalKey(start)
	}
	return ""
}

// ParseKey parses a partition key of grain g (as Key formats it) and returns
// the start of its period in loc.
func (g Grain) ParseKey(key string, loc *time.Location) (time.Time, error) {
	p, err := ParsePeriod(key, loc)
	if err != nil {
		return time.Time{}, err
	}
	if g.IsFiscal() {
		return g.fiscalParseKey(p, key)
	}
	if g == SundayWeek {
		if p.Grain != Day || p.Start.Weekday() != time.Sunday {
			return time.Time{}, fmt.Errorf("%q is not a week starting on Sunday (want the date of its Sunday, such as %s)", key, g.example())
		}
		return p.Start, nil
	}
	if p.Grain != g {
		return time.Time{}, fmt.Errorf("%q is a %s, not a %s partition key (want %s)", key, p.Grain, g, g.example())
	}
	return p.Start, nil
}

func (g Grain) example() string {
	return g.Key(g.Truncate(time.Date(2024, 1, 2, 13, 0, 0, 0, time.UTC), time.UTC))
}

// A Period is a span of time named by a string such as 2024, 2024-01,
// 2024-W01, 2024-01-02, 2024-01-02T13 or an RFC 3339 instant. Selection
// flags (--from, --to, --partitions) take periods and map them to the
// partitions of each model that they overlap.
type Period struct {
	Start, End time.Time // half-open, in the location given to ParsePeriod
	Grain      Grain     // the grain the text names; 0 for an instant
}

// ParsePeriod parses s as a period in loc. Instants (RFC 3339, or
// "2006-01-02 15:04:05") are periods of zero length.
func ParsePeriod(s string, loc *time.Location) (Period, error) {
	s = strings.TrimSpace(s)
	bad := func(why string) (Period, error) {
		return Period{}, fmt.Errorf("invalid date or partition key %q: %s", s, why)
	}
	// A text of a layout's length that does not parse is in another
	// form (2024/03/01, 01/15/2024): say which forms are taken, not
	// where Go's layout stopped matching.
	unparsed := func(err error) (Period, error) {
		if msg := cleanTimeError(err); strings.HasSuffix(msg, "out of range") {
			return bad(msg)
		}
		return bad(periodForms)
	}
	if strings.Contains(s, "-W") {
		ys, ws, _ := strings.Cut(s, "-W")
		y, err1 := strconv.Atoi(ys)
		w, err2 := strconv.Atoi(ws)
		if err1 != nil || err2 != nil || len(ys) != 4 || len(ws) != 2 {
			return bad("want an ISO week such as 2024-W01")
		}
		start := isoWeekStart(y, w, loc)
		if yy, ww := start.ISOWeek(); yy != y || ww != w {
			return bad(fmt.Sprintf("%d has no ISO week %d", y, w))
		}
		return Period{Start: start, End: Week.Add(start, 1), Grain: Week}, nil
	}
	layouts := []struct {
		layout string
		grain  Grain
	}{
		{"2006", Year}, {"2006-01", Month}, {"2006-01-02", Day}, {"2006-01-02T15", Hour},
	}
	for _, l := range layouts {
		if len(s) != len(l.layout) {
			continue
		}
		t, err := time.ParseInLocation(l.layout, s, loc)
		if err != nil {
			return unparsed(err)
		}
		if l.grain == Hour {
			t, err = time.ParseInLocation(l.layout, s, time.UTC) // hour keys are UTC
			if err != nil {
				return unparsed(err)
			}
		}
		return Period{Start: t, End: l.grain.Add(t, 1), Grain: l.grain}, nil
	}
	for _, layout := range []string{time.RFC3339Nano, "2006-01-02T15:04:05", "2006-01-02 15:04:05", "2006-01-02T15:04"} {
		if t, err := time.ParseInLocation(layout, s, loc); err == nil {
			return Period{Start: t, End: t}, nil
		}
	}
	return bad(periodForms)
}

// periodForms says in words what ParsePeriod takes.
const periodForms = "want a year (2024), a month (2024-03), an ISO week (2024-W09), a day (2024-03-01), " +
	"an hour (2024-03-01T13, UTC) or a time (2024-03-01T13:30:00Z, or 2024-03-01 13:30:00)"

func isoWeekStart(year, week int, loc *time.Location) time.Time {
	jan4 := time.Date(year, 1, 4, 0, 0, 0, 0, loc)
	monday := jan4.AddDate(0, 0, -((int(jan4.Weekday()) + 6) % 7))
	return time.Date(monday.Year(), monday.Month(), monday.Day()+7*(week-1), 0, 0, 0, 0, loc)
}

// cleanTimeError turns `parsing time "2024-13-01": month out of range` into
// "month out of range".
func cleanTimeError(err error) string {
	msg := err.Error()
	if i := strings.LastIndex(msg, ": "); i >= 0 {
		return msg[i+2:]
	}
	return msg
}
