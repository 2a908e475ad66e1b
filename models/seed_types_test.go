package models

import (
	"strings"
	"testing"
	"testing/fstest"
)

// Declared seed types: a zip code stays text, an amount is exact.
func TestSeedDeclaredTypes(t *testing.T) {
	t.Parallel()
	fsys := fstest.MapFS{
		"refill.yml":              {Data: []byte(testProjectYML)},
		"models/a.sql":            {Data: []byte("SELECT 1 AS x")},
		"seeds/raw/customers.csv": {Data: []byte("id,zip,amount\n1,00501,12.30\n2,10001,7\n")},
		"seeds/raw/customers.yml": {Data: []byte("columns:\n  zip: varchar\n  amount: decimal(12,2)\n")},
	}
	p, err := Load(fsys, LoadOptions{Adapters: testAdapters})
	if err != nil {
		t.Fatal(err)
	}
	seeds, err := p.LoadSeeds(fsys)
	if err != nil {
		t.Fatal(err)
	}
	s := seeds[0]
	if s.Columns[0].Type != TypeInt || s.Columns[1].Type != TypeString || s.Columns[2].Type != Decimal(12, 2) {
		t.Errorf("columns %+v", s.Columns)
	}
	if s.Rows[0][1] != "00501" || s.Rows[0][2] != SQL("12.30") {
		t.Errorf("row %#v", s.Rows[0])
	}
	for yml, want := range map[string]string{
		"columns:\n  amount: bigint\n": `seeds/raw/customers.csv:2: column amount: "12.30" is not a bigint`,
		"columns:\n  zp: varchar\n":    "seeds/raw/customers.yml: declares column zp, which seeds/raw/customers.csv does not have",
		"columns:\n  zip: strnig\n":    `unknown column type "strnig"`,
		"colums:\n  zip: varchar\n":    `unknown key "colums"`,
	} {
		fsys["seeds/raw/customers.yml"] = &fstest.MapFile{Data: []byte(yml)}
		if _, err := p.LoadSeeds(fsys); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%q: %v; want %q", yml, err, want)
		}
	}
}
