package models

import (
	"strings"
	"testing"
	"testing/fstest"
	"time"

	"github.com/google/go-cmp/cmp"
)

func TestParseSeed(t *testing.T) {
	t.Parallel()
	csv := "id,amount,ok,day,at,name,maybe\n1,1.5,true,2024-01-02,2024-01-02 03:04:05,a,\n2,2,false,2024-01-03,2024-01-03T00:00:00Z,\"b, c\",7\n"
	s, err := ParseSeed("seeds/raw/x.csv", strings.NewReader(csv))
	if err != nil {
		t.Fatal(err)
	}
	want := []Column{
		{Name: "id", Type: TypeInt}, {Name: "amount", Type: TypeFloat}, {Name: "ok", Type: TypeBool},
		{Name: "day", Type: TypeDate}, {Name: "at", Type: TypeTimestamp}, {Name: "name", Type: TypeString}, {Name: "maybe", Type: TypeInt, Nullable: true},
	}
	if diff := cmp.Diff(want, s.Columns); diff != "" {
		t.Errorf("columns (-want +got):\n%s", diff)
	}
	row := s.Rows[1]
	if row[0] != int64(2) || row[1] != 2.0 || row[2] != false || row[5] != "b, c" || row[6] != int64(7) {
		t.Errorf("row = %#v", row)
	}
	if !row[3].(time.Time).Equal(date("2024-01-03")) || s.Rows[0][6] != nil {
		t.Errorf("row = %#v", s.Rows[0])
	}
}

func TestLoadSeeds(t *testing.T) {
	t.Parallel()
	p := mustLoad(t, map[string]string{"models/a.sql": "SELECT 1"})
	fsys := fstest.MapFS{
		"seeds/raw/orders.csv": {Data: []byte("id\n1\n")},
		"seeds/top.csv":        {Data: []byte("x\nhello\n")},
		"seeds/bad.csv":        {Data: []byte("a,a\n1,2\n")},
	}
	seeds, err := p.LoadSeeds(fsys)
	if err == nil || !strings.Contains(err.Error(), "seeds/bad.csv:1") {
		t.Errorf("duplicate column not reported: %v", err)
	}
	if len(seeds) != 2 || seeds[0].Relation != (Relation{Schema: "raw", Name: "orders"}) || seeds[1].Relation != (Relation{Name: "top"}) {
		t.Errorf("seeds = %+v", seeds)
	}
}
