package models

import (
	"fmt"
	"strconv"
	"strings"
	"time"
)

// Fiscal years are grains too, coarser than every calendar grain. There
// are two kinds:
//
//   - of calendar months: twelve months from the first of a start month
//     (FiscalYear(time.April) is April 1 through March 31), keyed by the
//     first month, 2024-04;
//   - of weeks (52 or 53 of them, as retail calendars count): from the
//     weekday nearest the first of a start month (WeekFiscalYear(time.
//     February, time.Sunday) starts on the Sunday nearest February 1),
//     keyed by the first day, 2024-02-04.
//
// A fiscal Grain encodes its start: fiscalBase + 8*month + w, where w is
// 0 for calendar months and 1+weekday for weeks.
const fiscalBase Grain = 64

// FiscalYear returns the grain of fiscal years of calendar months that
// start on the first of start; FiscalYear(time.January) is Year.
func FiscalYear(start time.Month) Grain {
	if start == time.January {
		return Year
	}
	return fiscalBase + Grain(8*int(start))
}

// WeekFiscalYear returns the grain of fiscal years of whole weeks that
// start on the weekday nearest the first of month start.
func WeekFiscalYear(start time.Month, weekStart time.Weekday) Grain {
	return fiscalBase + Grain(8*int(start)+1+int(weekStart))
}

// Fiscal returns the start month of a fiscal grain, and whether its years
// are of weeks and from which weekday. ok is false for other grains.
func (g Grain) Fiscal() (start time.Month, weekStart time.Weekday, weeks, ok bool) {
	if g < fiscalBase+8 || g >= fiscalBase+8*13 {
		return 0, 0, false, false
	}
	n := int(g - fiscalBase)
	start, w := time.Month(n/8), n%8
	if w == 0 {
		return start, 0, false, true
	}
	return start, time.Weekday(w - 1), true, true
}

// IsFiscal reports whether g is a fiscal year.
func (g Grain) IsFiscal() bool {
	_, _, _, ok := g.Fiscal()
	return ok
}

// fiscalString names a fiscal grain.
func (g Grain) fiscalString() string {
	start, wd, weeks, _ := g.Fiscal()
	if weeks {
		return fmt.Sprintf("fiscal year from the %s nearest %s 1", wd, start)
	}
	return "fiscal year from " + start.String()
}

// fiscalStart returns the first instant of the fiscal year labelled y (the
// year of the first of its start month), in loc.
func (g Grain) fiscalStart(y int, loc *time.Location) time.Time {
	start, wd, weeks, _ := g.Fiscal()
	first := time.Date(y, start, 1, 0, 0, 0, 0, loc)
	if !weeks {
		return first
	}
	ahead := (int(wd) - int(first.Weekday()) + 7) % 7 // days to the next wd
	if ahead > 3 {
		ahead -= 7 // the previous one is nearer
	}
	return time.Date(y, start, 1+ahead, 0, 0, 0, 0, loc)
}

// fiscalYearOf returns the label of the fiscal year that starts at start
// (which is at most three days from the first of its start month).
func fiscalYearOf(start time.Time) int { return start.AddDate(0, 0, 3).Year() }

// fiscalTruncate returns the start of the fiscal year holding t.
func (g Grain) fiscalTruncate(t time.Time, loc *time.Location) time.Time {
	t = t.In(loc)
	y := t.Year()
	for _, c := range []int{y + 1, y, y - 1} {
		if s := g.fiscalStart(c, loc); !t.Before(s) {
			return s
		}
	}
	return g.fiscalStart(y-2, loc) // not reached: a fiscal year starts within a year of t
}

// fiscalKey formats the fiscal year starting at start: its first month
// (2024-04) for years of months, its first day (2024-02-04) for years of
// weeks.
func (g Grain) fiscalKey(start time.Time) string {
	if _, _, weeks, _ := g.Fiscal(); weeks {
		return start.Format("2006-01-02")
	}
	return start.Format("2006-01")
}

// fiscalParseKey parses a fiscal year's key as fiscalKey formats it.
func (g Grain) fiscalParseKey(p Period, key string) (time.Time, error) {
	_, _, weeks, _ := g.Fiscal()
	want := Month
	if weeks {
		want = Day
	}
	if p.Grain != want || !g.fiscalTruncate(p.Start, p.Start.Location()).Equal(p.Start) {
		return time.Time{}, fmt.Errorf("%q does not start a %s (want %s, such as %s)", key, g.fiscalString(),
			map[bool]string{false: "its first month", true: "its first day"}[weeks], g.example())
	}
	return p.Start, nil
}

// parseFiscalStart reads fiscal_year_start: a month (april, apr or 4) for
// years of months; with week_start, years of weeks.
func parseFiscalStart(month, weekStart string) (Grain, error) {
	m, err := parseMonth(month)
	if err != nil {
		return 0, err
	}
	if weekStart == "" {
		return FiscalYear(m), nil
	}
	for wd := time.Sunday; wd <= time.Saturday; wd++ {
		if strings.EqualFold(weekStart, wd.String()) {
			return WeekFiscalYear(m, wd), nil
		}
	}
	return 0, fmt.Errorf("week_start must be a day of the week (sunday, monday, ...), not %q", weekStart)
}

// parseMonth reads a month by name (april), abbreviation (apr) or number
// (4).
func parseMonth(s string) (time.Month, error) {
	if n, err := strconv.Atoi(s); err == nil && n >= 1 && n <= 12 {
		return time.Month(n), nil
	}
	var names []string
	for m := time.January; m <= time.December; m++ {
		name := strings.ToLower(m.String())
		if strings.EqualFold(s, name) || strings.EqualFold(s, name[:3]) {
			return m, nil
		}
		names = append(names, name)
	}
	return 0, fmt.Errorf("%q is not a month (want its name, such as april, or its number, 1 to 12)%s", s, suggest(strings.ToLower(s), names))
}

// fiscalUnit is the date_trunc unit of the model's own fiscal year.
const fiscalUnit = "fiscal_year"

// truncateFiscal renders date_trunc("fiscal_year", x): the start of the
// fiscal year of m's grain holding x. In SQL only fiscal years of months
// can be computed (the start of x's year shifted by the start month); a
// fiscal year of weeks is start, for a model whose partitions are them.
func (m *Model) truncateFiscal(s *Scope, loc *time.Location, x any) (any, error) {
	g := m.Config.Grain
	start, _, weeks, ok := g.Fiscal()
	if !ok {
		return nil, fmt.Errorf("date_trunc(%q, ...) is the model's fiscal year: declare fiscal_year_start: with grain: year", fiscalUnit)
	}
	switch x := x.(type) {
	case Time:
		return Time{T: g.Truncate(x.T, loc), Timestamp: x.Timestamp}, nil
	case SQL:
		if weeks {
			return nil, fmt.Errorf("date_trunc(%q, ...) of SQL is not computed for a fiscal year of weeks: use {{ start }}, the start of the partition's fiscal year", fiscalUnit)
		}
		shift := int(start) - 1
		d := s.Dialect
		return SQL(d.DateAdd(d.DateTrunc(Year, d.DateAdd(string(x), -shift, Month)), shift, Month)), nil
	}
	return nil, fmt.Errorf("date_trunc needs a date (start, end) or SQL (raw, ident), not %T", x)
}
