package models

import (
	"encoding/csv"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"path"
	"sort"
	"strconv"
	"strings"
	"time"

	"go.yaml.in/yaml/v3"
)

// Column is one column of a seed.
type Column struct {
	Name     string
	Type     ColumnType
	Nullable bool // some value is empty
	Declared bool // the type is declared, not inferred
}

// Seed is a CSV file under the seeds folder, with column types inferred from
// its values. seeds/raw/orders.csv loads into table raw.orders.
type Seed struct {
	Relation Relation
	Path     string
	Columns  []Column
	// Rows hold typed values: bool, int64, float64, time.Time (UTC) for
	// dates and timestamps, string, or nil for an empty field.
	Rows [][]any
}

// LoadSeeds reads every .csv file under the project's seeds folder. A
// missing folder means no seeds.
func (p *Project) LoadSeeds(fsys fs.FS) ([]*Seed, error) {
	var seeds []*Seed
	var errs ErrorList
	err := fs.WalkDir(fsys, p.SeedsDir, func(file string, e fs.DirEntry, err error) error {
		if errors.Is(err, fs.ErrNotExist) && file == p.SeedsDir {
			return fs.SkipAll
		}
		if err != nil || e.IsDir() || path.Ext(file) != ".csv" {
			return err
		}
		rel := strings.TrimSuffix(strings.TrimPrefix(file, p.SeedsDir+"/"), ".csv")
		rel = strings.ReplaceAll(rel, "/", ".")
		r, err := ParseRelation(rel)
		if err != nil || strings.Count(rel, ".") > 1 {
			errs.add(&Error{File: file, Msg: "seed files go in seeds/<schema>/<table>.csv or seeds/<table>.csv"})
			return nil
		}
		if err := checkRegular(fsys, file); err != nil {
			errs.add(err)
			return nil
		}
		f, err := fsys.Open(file)
		if err != nil {
			return err
		}
		defer f.Close()
		declared, err := seedTypes(fsys, strings.TrimSuffix(file, ".csv")+".yml")
		if err != nil {
			errs.add(err)
			return nil
		}
		s, err := ParseSeedTypes(file, f, declared)
		if err != nil {
			errs.add(err)
			return nil
		}
		s.Relation = r
		seeds = append(seeds, s)
		return nil
	})
	if err != nil {
		errs.add(&Error{File: p.SeedsDir, Msg: err.Error(), Err: err})
	}
	sort.Slice(seeds, func(i, j int) bool { return seeds[i].Path < seeds[j].Path })
	return seeds, errs.Err()
}

// ParseSeed reads a CSV with a header row and infers each column's type:
// the narrowest of boolean, bigint, double, date, timestamp and varchar that
// holds every non-empty value.
func ParseSeed(file string, r io.Reader) (*Seed, error) {
	return ParseSeedTypes(file, r, nil)
}

// seedTypes reads the declared column types of a seed from the YAML file
// beside it (seeds/raw/customers.yml for seeds/raw/customers.csv):
//
//	columns:
//	  zip: varchar       # 00501 stays a string
//	  amount: decimal(12,2)
//
// A missing file declares nothing.
func seedTypes(fsys fs.FS, file string) (map[string]ColumnType, error) {
	raw, err := readFile(fsys, file)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	var errs ErrorList
	d := &yamlDoc{file: file, text: string(raw), errs: &errs}
	root := d.parse(string(raw))
	if root == nil {
		return nil, errs.Err()
	}
	out := map[string]ColumnType{}
	d.fields(root, "seed", []string{"columns", "description"}, func(key string, v *yaml.Node) {
		if key != "columns" {
			return
		}
		d.entries(v, "columns", func(k, val *yaml.Node) {
			t, err := ParseColumnType(val.Value)
			if err != nil || val.Kind != yaml.ScalarNode {
				d.errAt(val, "columns.%s: %v", k.Value, err)
				return
			}
			out[strings.ToLower(k.Value)] = t
		})
	})
	return out, errs.Err()
}

// ParseSeedTypes is ParseSeed with declared types for some columns, by
// lower-cased name; the others are inferred. A value that is not of its
// declared type is an error naming its line.
func ParseSeedTypes(file string, r io.Reader, declared map[string]ColumnType) (*Seed, error) {
	cr := csv.NewReader(r)
	cr.ReuseRecord = false
	header, err := cr.Read()
	if err != nil {
		return nil, &Error{File: file, Line: 1, Msg: fmt.Sprintf("cannot read the CSV header: %v", err)}
	}
	s := &Seed{Path: file}
	seen := map[string]bool{}
	for i, name := range header {
		name = strings.TrimSpace(name)
		if i == 0 {
			name = strings.TrimPrefix(name, "\ufeff")
		}
		if !identRE.MatchString(name) || seen[strings.ToLower(name)] {
			return nil, &Error{File: file, Line: 1, Msg: fmt.Sprintf("column %d: %q is not a unique column name (letters, digits, _)", i+1, name)}
		}
		seen[strings.ToLower(name)] = true
		s.Columns = append(s.Columns, Column{Name: name})
	}
	var records [][]string
	for {
		rec, err := cr.Read()
		if err == io.EOF {
			break
		}
		if err != nil {
			var pe *csv.ParseError
			if errors.As(err, &pe) {
				return nil, &Error{File: file, Line: pe.Line, Col: pe.Column, Msg: pe.Err.Error()}
			}
			return nil, &Error{File: file, Msg: err.Error()}
		}
		records = append(records, rec)
	}
	for name := range declared {
		if !seen[name] {
			return nil, &Error{File: strings.TrimSuffix(file, ".csv") + ".yml", Msg: fmt.Sprintf("declares column %s, which %s does not have", name, file)}
		}
	}
	for i, c := range s.Columns {
		t, ok := declared[strings.ToLower(c.Name)]
		if !ok {
			continue
		}
		s.Columns[i].Type, s.Columns[i].Declared = t, true
		for r, rec := range records {
			if v := rec[i]; v != "" && !fits(v, t) {
				return nil, &Error{File: file, Line: r + 2, Msg: fmt.Sprintf("column %s: %q is not a %s, as declared", c.Name, v, t)}
			}
		}
	}
	s.fill(records)
	return s, nil
}

// NewSeed builds a table from text values, inferring column types as for
// CSV seeds. An empty string is NULL.
func NewSeed(columns []string, records [][]string) *Seed {
	return NewSeedTypes(columns, records, nil)
}

// NewSeedTypes is NewSeed with declared types for some columns, by
// lower-cased name (values must fit them).
func NewSeedTypes(columns []string, records [][]string, declared map[string]ColumnType) *Seed {
	s := &Seed{}
	for _, c := range columns {
		col := Column{Name: c}
		if t, ok := declared[strings.ToLower(c)]; ok {
			col.Type, col.Declared = t, true
		}
		s.Columns = append(s.Columns, col)
	}
	s.fill(records)
	return s
}

func (s *Seed) fill(records [][]string) {
	for i := range s.Columns {
		t, nullable := inferType(records, i)
		if !s.Columns[i].Declared {
			s.Columns[i].Type = t
		}
		s.Columns[i].Nullable = nullable
	}
	s.Rows = make([][]any, len(records))
	for r, rec := range records {
		row := make([]any, len(rec))
		for i, v := range rec {
			row[i] = convert(v, s.Columns[i].Type)
		}
		s.Rows[r] = row
	}
}

var (
	dateLayouts = []string{"2006-01-02"}
	tsLayouts   = []string{time.RFC3339Nano, "2006-01-02 15:04:05.999999999", "2006-01-02T15:04:05.999999999", "2006-01-02 15:04"}
)

func inferType(records [][]string, col int) (ColumnType, bool) {
	candidates := []ColumnType{TypeBool, TypeInt, TypeFloat, TypeDate, TypeTimestamp}
	nullable, nonEmpty := false, false
	for _, rec := range records {
		v := rec[col]
		if v == "" {
			nullable = true
			continue
		}
		nonEmpty = true
		kept := candidates[:0]
		for _, t := range candidates {
			if fits(v, t) {
				kept = append(kept, t)
			}
		}
		candidates = kept
		if len(candidates) == 0 {
			break
		}
	}
	if !nonEmpty || len(candidates) == 0 {
		return TypeString, nullable
	}
	return candidates[0], nullable
}

func fits(v string, t ColumnType) bool {
	switch t {
	case TypeBool:
		return v == "true" || v == "false"
	case TypeInt:
		_, err := strconv.ParseInt(v, 10, 64)
		return err == nil
	case TypeInt32:
		_, err := strconv.ParseInt(v, 10, 32)
		return err == nil
	case TypeFloat:
		_, err := strconv.ParseFloat(v, 64)
		return err == nil
	case TypeDate:
		return parseAny(v, dateLayouts) != nil
	case TypeTimestamp:
		return parseAny(v, tsLayouts) != nil || parseAny(v, dateLayouts) != nil
	}
	if _, _, ok := t.Decimal(); ok {
		_, err := strconv.ParseFloat(v, 64)
		return err == nil && !strings.ContainsAny(v, "eEnN")
	}
	return true
}

func parseAny(v string, layouts []string) *time.Time {
	for _, l := range layouts {
		if t, err := time.Parse(l, v); err == nil {
			t = t.UTC()
			return &t
		}
	}
	return nil
}

func convert(v string, t ColumnType) any {
	if v == "" {
		return nil
	}
	switch t {
	case TypeBool:
		return v == "true"
	case TypeInt, TypeInt32:
		n, _ := strconv.ParseInt(v, 10, 64)
		return n
	case TypeFloat:
		f, _ := strconv.ParseFloat(v, 64)
		return f
	case TypeDate:
		return *parseAny(v, dateLayouts)
	case TypeTimestamp:
		if ts := parseAny(v, tsLayouts); ts != nil {
			return *ts
		}
		return *parseAny(v, dateLayouts)
	}
	if _, _, ok := t.Decimal(); ok {
		return SQL(v) // a numeric literal, exact
	}
	return v
}
