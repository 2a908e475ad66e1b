package plan

import (
	"maps"
	"slices"
	"strings"
	"testing"
	"testing/fstest"
	"time"

	"github.com/refill/refill/models"
)

func TestMarksKeepTheWatermarkAlone(t *testing.T) {
	t.Parallel()
	for _, m := range []Marks{{}, {Query: "2024-01-01 10:00:00"}, {Query: `{"sources": no}`},
		{Sources: map[string]string{"raw.t": "3:00000000000000ff"}}, {Sources: map[string]string{"b": "1@t2024", "a": "0:0000000000000000"}, Query: "x"}} {
		got := ParseMarks(m.String())
		if got.Query != m.Query || !maps.Equal(got.Sources, m.Sources) {
			t.Errorf("%+v read back as %+v", m, got)
		}
	}
	// A watermark alone is stored as before sources were tracked.
	if s := (Marks{Query: "42"}).String(); s != "42" {
		t.Errorf("a watermark alone is stored as %q", s)
	}
}

// TestPrintsSumBuckets maps a scan's buckets onto a model's partitions:
// a partition sums the buckets in it, hashes adding up modulo 2^64, and a
// bucket straddling two partitions (a zone half an hour off UTC) counts
// in both.
func TestPrintsSumBuckets(t *testing.T) {
	t.Parallel()
	fsys := fstest.MapFS{"refill.yml": {Data: []byte("targets:\n  dev: {adapter: duckdb}\n")},
		"models/d.sql": {Data: []byte("/* refill\npartition_by: d\ngrain: day\nstart: 2024-01-01\ntimezone: Asia/Kolkata\n*/\nSELECT 1")}}
	p, err := models.Load(fsys, models.LoadOptions{LookupEnv: func(string) (string, bool) { return "", false }})
	if err != nil {
		t.Fatal(err)
	}
	m := p.ModelByName("d")
	at := func(s string) time.Time { v, _ := time.Parse(time.DateTime, s); return v }
	// Kolkata's 2024-01-02 starts at 2024-01-01 18:30 UTC.
	scan := &SourceScan{Source: &models.Source{Name: "raw.t", TimeColumn: "ts"}, buckets: []bucket{
		{lo: at("2024-01-01 10:00:00"), hi: at("2024-01-01 10:59:00"), print: Print{Rows: 2, Hash: 1<<63 + 5}},
		{lo: at("2024-01-01 12:00:00"), hi: at("2024-01-01 12:10:00"), print: Print{Rows: 1, Hash: 1 << 63}},
		{lo: at("2024-01-01 18:10:00"), hi: at("2024-01-01 18:50:00"), print: Print{Rows: 4, Hash: 7}},
		{lo: at("2024-01-02 03:00:00"), hi: at("2024-01-02 03:00:00"), print: Print{Rows: 1, Hash: 1}},
	}}
	got := scan.Prints(m, nil)
	want := map[string]string{
		"2024-01-01": Print{Rows: 7, Hash: 12}.String(), // wrapped around
		"2024-01-02": Print{Rows: 5, Hash: 8}.String(),
	}
	if !maps.Equal(got, want) {
		t.Errorf("prints = %v, want %v", got, want)
	}
	// With the partitions wanted, others are left out and empty ones are
	// the print of no rows.
	jan3, _ := m.Partition("2024-01-03")
	jan2, _ := m.Partition("2024-01-02")
	got = scan.Prints(m, []models.Partition{jan2, jan3})
	if want := []string{"2024-01-02", "2024-01-03"}; !slices.Equal(slices.Sorted(maps.Keys(got)), want) || got["2024-01-03"] != "0:0000000000000000" {
		t.Errorf("prints of Jan 2 and 3 = %v", got)
	}
}

func TestSourceChangeSaysHow(t *testing.T) {
	t.Parallel()
	loaded := func(s string) Loaded { v, _ := time.Parse(time.DateTime, s); return LoadedOf(v) }
	for _, c := range []struct{ then, now, want string }{
		{"3:00000000000000ff", "3:00000000000000ff", ""},
		{"", "3:00000000000000ff", "raw.t: no fingerprint of its rows was recorded"},
		{"3:00000000000000ff", "4:00000000000000aa", "raw.t: 3 rows when built, 4 now"},
		{"1:00000000000000ff", "1:00000000000000aa", "raw.t: rows changed in place (1 row then and now, different content)"},
		{"3@" + string(loaded("2024-01-01 10:00:00")), "3@" + string(loaded("2024-01-02 00:00:00")),
			"raw.t: rows loaded since it was built (latest loaded_at 2024-01-02 00:00:00, was 2024-01-01 10:00:00)"},
		{"3:00000000000000ff", "3@" + string(loaded("2024-01-02 00:00:00")), "fingerprinted differently"},
	} {
		if got := SourceChange("raw.t", c.then, c.now); c.want == "" && got != "" || !strings.Contains(got, c.want) {
			t.Errorf("SourceChange(%q, %q) = %q, want %q", c.then, c.now, got, c.want)
		}
	}
	// Loaded values sort as the values do.
	if !(LoadedOf(int64(9)) < LoadedOf(int64(10))) || !(loaded("2024-01-01 10:00:00") < loaded("2024-01-01 10:00:01")) {
		t.Errorf("loaded values do not sort")
	}
	if s := LoadedOf(time.Date(2024, 1, 1, 10, 0, 0, 500, time.UTC)).String(); s != "2024-01-01 10:00:00.0000005" {
		t.Errorf("a loaded_at prints as %q", s)
	}
}

// TestPartProofRescansWhatMoved: the windows a check reads are every
// model partition that meets a physical partition whose state moved, and
// only those.
func TestPartProofRescansWhatMoved(t *testing.T) {
	t.Parallel()
	fsys := fstest.MapFS{"refill.yml": {Data: []byte("targets:\n  dev: {adapter: duckdb}\n")},
		"models/d.sql": {Data: []byte("/* refill\npartition_by: d\ngrain: day\nstart: 2024-01-01\n*/\nSELECT 1")},
		"models/w.sql": {Data: []byte("/* refill\npartition_by: w\ngrain: week\nstart: 2024-01-01\n*/\nSELECT 1")}}
	p, err := models.Load(fsys, models.LoadOptions{LookupEnv: func(string) (string, bool) { return "", false }})
	if err != nil {
		t.Fatal(err)
	}
	day := func(s string) time.Time { v, _ := time.Parse(time.DateOnly, s); return v }
	// August 2024's physical partition moved: its rows span Aug 3..Aug 30.
	proof := &partProof{prior: true, changed: []stretch{{from: day("2024-08-02"), to: day("2024-08-31")}}}
	got := proof.rescan([]*models.Model{p.ModelByName("d"), p.ModelByName("w")}, time.Time{})
	// The weeks meeting it: from Monday July 29 to Monday September 2.
	if len(got) != 1 || !got[0].from.Equal(day("2024-07-29")) || !got[0].to.Equal(day("2024-09-02")) {
		t.Errorf("rescan = %v, want [2024-07-29, 2024-09-02)", got)
	}
	if !proof.touches(day("2024-08-30"), day("2024-08-31")) || proof.touches(day("2024-07-31"), day("2024-08-01")) ||
		proof.touches(day("2024-09-01"), day("2024-09-02")) {
		t.Errorf("touches is wrong at the edges of the moved span")
	}
	// A span wholly before the tracked history is not read.
	if got := proof.rescan([]*models.Model{p.ModelByName("d")}, day("2024-10-01")); len(got) != 0 {
		t.Errorf("rescan before the tracked history = %v", got)
	}
}
