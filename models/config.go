package models

import (
	"fmt"
	"regexp"
	"slices"
	"strings"
	"time"

	"go.yaml.in/yaml/v3"
)

// Config is a model's configuration, from the YAML in its header comment.
type Config struct {
	// PartitionBy is the output column holding the partition key; empty for
	// a model rebuilt as a whole table.
	PartitionBy string
	// Grain is set for time-partitioned models, Values for list-partitioned.
	Grain  Grain
	Values []any
	// Start is the first partition's start, in Location.
	Start time.Time
	// End, when not zero, is the end of the last partition (the one
	// holding the end: date): no partition after it exists.
	End time.Time
	// Location is the time zone of day and coarser partitions (UTC unless
	// timezone is set). Windows are stored and rendered in UTC.
	Location *time.Location
	// TimestampWindow renders start and end as timestamps rather than dates.
	// It defaults to true for hour grains and for models with a time zone.
	TimestampWindow bool

	// Batch is how many consecutive partitions one statement computes. A
	// model that sets it (1 or more) declares its SQL batch-safe: run over
	// several partitions' window, it returns for each what it returns for
	// that partition alone. 0 means not declared: never batched.
	Batch         int
	Tags          []string       // for tag: selectors
	DependsOnPast map[string]int // ref name ("*" for all refs) -> extra partitions of look-back
	// Self is set by depends_on_past: self: each partition reads the
	// model's own earlier partitions through this (a cumulative model).
	// Its partitions run in time order, each published before the next.
	Self         bool
	Lookback     []int         // offsets from the last complete partition rerun on every scheduled run
	Delay        time.Duration // how long after a window closes its data is complete
	AllowPartial bool          // allow the current, incomplete partition to run
	// Watermark is an optional query returning a freshness marker (such as
	// max(loaded_at)) of a partition's source rows. A scheduled run then
	// reruns a lookback partition only when its marker moved.
	Watermark *Template
	// Refresh says when a scheduled run rebuilds a whole-table or list
	// model that is otherwise done (see Refresh).
	Refresh Refresh
	Audits  []Audit // checks on every staged partition
	// Columns, when declared, are the table's columns in order: refill
	// creates the table from them and checks every stage against them.
	Columns []ColumnDecl
	// OnSchemaChange says what to do when a stage's columns differ from the
	// table's; "" means the project's default (fail).
	OnSchemaChange SchemaPolicy
	// NoFullRefresh forbids rebuilding the whole table (full_refresh: false).
	NoFullRefresh bool
	// Adapter holds the model's blocks of settings for adapters, by the
	// adapter's name: how its table is created or where it runs on that
	// adapter. Each adapter decodes its own (see AdapterKeys.Block).
	Adapter     map[string]*Options
	Description string
	// UniqueKey, when declared (unique_key:), are the columns that identify
	// a row: refill diff matches old and new rows by them, and reports the
	// rows whose other columns changed. It changes nothing refill builds.
	UniqueKey []string
	// ContentHash, when set (content_hash:), says whether a publication
	// records a hash of each partition's rows, which refill verify compares
	// with the table; nil means the project's default.
	ContentHash *bool
}

// Severity says whether a failed audit blocks the swap.
type Severity string

// Audit severities.
const (
	SeverityError Severity = "error"
	SeverityWarn  Severity = "warn"
)

// AuditKind names a built-in audit.
type AuditKind string

// The audits a model may declare.
const (
	AuditNotNull        AuditKind = "not_null"
	AuditUnique         AuditKind = "unique"
	AuditAcceptedValues AuditKind = "accepted_values"
	AuditRowCount       AuditKind = "row_count"
	AuditSQL            AuditKind = "sql"
)

// Audit is one check run on every staged partition before it is swapped in.
type Audit struct {
	Name     string // defaults to the kind plus its columns
	Kind     AuditKind
	Columns  []string // not_null, unique, accepted_values
	Values   []any    // accepted_values
	Min, Max *int64   // row_count bounds
	// Within bounds the row count relative to the previous partition's, as a
	// fraction: 0.5 means within 50% of it.
	Within *float64
	SQL    *Template // sql audits: a query that must return no rows
	Severity
	Line int // position of the audit in the model file
}

var configKeys = []string{
	"partition_by", "grain", "week_start", "fiscal_year_start", "values", "start", "end", "timezone", "partition_type", "batch", "tags",
	"depends_on_past", "lookback", "delay", "allow_partial", "watermark", "refresh", "audits", "columns",
	"on_schema_change", "full_refresh", "description", "unique_key", "content_hash",
}

// RefreshMode is when a scheduled run rebuilds a whole-table or list model
// that is done. refill knows when the models it reads change; a source()
// it does not track, so a model reading one is refreshed by this rule.
type RefreshMode string

// Refresh modes.
const (
	// RefreshNever rebuilds the model only when it is stale: its SQL or an
	// upstream model changed. The default of a model reading no source.
	RefreshNever RefreshMode = "never"
	// RefreshAlways rebuilds it on every scheduled run. The default of a
	// model that reads a source() and declares no watermark.
	RefreshAlways RefreshMode = "always"
	// RefreshEvery rebuilds it once its last build is Refresh.Every old.
	RefreshEvery RefreshMode = "every"
	// RefreshWatermark rebuilds it when its watermark query's value moved
	// since the last build. The default of a model that declares one.
	RefreshWatermark RefreshMode = "watermark"
)

// Refresh is a whole-table or list model's refresh rule: refresh: always,
// never, or a duration (6h, 1d); watermark when the model declares one.
type Refresh struct {
	Mode  RefreshMode
	Every time.Duration // for RefreshEvery
}

// String renders the rule as refresh: takes it.
func (r Refresh) String() string {
	if r.Mode == RefreshEvery {
		return FormatDuration(r.Every)
	}
	return string(r.Mode)
}

// SchemaPolicy says what a run does when a stage's columns differ from its
// table's.
type SchemaPolicy string

// Schema change policies.
const (
	// SchemaFail refuses the swap, printing the column differences; the
	// table is untouched.
	SchemaFail SchemaPolicy = "fail"
	// SchemaAppend adds the stage's new columns to the table. Columns the
	// stage lacks, and type changes, are refused.
	SchemaAppend SchemaPolicy = "append"
	// SchemaSync adds new columns, drops the columns the stage lacks and
	// widens columns whose type grew. Type changes that lose values are
	// refused.
	SchemaSync SchemaPolicy = "sync"
	// SchemaRebuild rebuilds the whole table (a full refresh) instead.
	SchemaRebuild SchemaPolicy = "rebuild"
)

var schemaPolicies = []string{string(SchemaFail), string(SchemaAppend), string(SchemaSync), string(SchemaRebuild)}

// ParseSchemaPolicy reads an on_schema_change value.
func ParseSchemaPolicy(s string) (SchemaPolicy, error) {
	for _, p := range schemaPolicies {
		if s == p {
			return SchemaPolicy(s), nil
		}
	}
	return "", fmt.Errorf("on_schema_change must be %s, not %q%s", strings.Join(schemaPolicies, ", "), s, suggest(s, schemaPolicies))
}

var identRE = regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_$]*$`)

// decodeConfig reads a model's YAML header; x holds the adapters' blocks.
// Errors are recorded in d.
func decodeConfig(d *yamlDoc, root *yaml.Node, x *extensions) Config {
	c := Config{Location: time.UTC}
	var (
		startNode, endNode, grainNode, tzNode, typeNode, batchNode, lookbackNode, watermarkNode, dependsNode, refreshNode *yaml.Node
		weekStartNode, fiscalNode, uniqueNode                                                                             *yaml.Node
		fiscal                                                                                                            Grain
		partitionType, start, end, weekStart                                                                              string
	)
	d.fields(root, "model config", append(slices.Clip(configKeys), x.blockNames()...), func(key string, v *yaml.Node) {
		switch key {
		case "partition_by":
			if s, ok := d.str(v, key); ok {
				if !identRE.MatchString(s) {
					d.errAt(v, "partition_by must be a column name, not %q", s)
				}
				c.PartitionBy = s
			}
		case "grain":
			grainNode = v
			if s, ok := d.str(v, key); ok {
				g, err := ParseGrain(s)
				if err != nil {
					d.errAt(v, "%v", err)
					g = Day // go on as a time-partitioned model, so errors do not cascade
				}
				c.Grain = g
			}
		case "fiscal_year_start":
			fiscalNode = v
			var month, weekStart string
			if v.Kind == yaml.MappingNode {
				d.fields(v, "fiscal_year_start", []string{"month", "week_start"}, func(key string, v *yaml.Node) {
					if s, ok := d.str(v, key); ok {
						*map[string]*string{"month": &month, "week_start": &weekStart}[key] = s
					}
				})
				if month == "" {
					d.errAt(v, "fiscal_year_start needs month: the month whose first day the fiscal year starts nearest")
					return
				}
			} else if s, ok := d.str(v, key); ok {
				month = s
			} else {
				return
			}
			g, err := parseFiscalStart(month, weekStart)
			if err != nil {
				d.errAt(v, "fiscal_year_start: %v", err)
				return
			}
			fiscal = g
		case "week_start":
			weekStartNode = v
			if s, ok := d.str(v, key); ok {
				if s != "monday" && s != "sunday" {
					d.errAt(v, "week_start must be monday (ISO weeks, the default) or sunday, not %q%s", s, suggest(s, []string{"monday", "sunday"}))
				}
				weekStart = s
			}
		case "values":
			if v.Kind != yaml.SequenceNode || len(v.Content) == 0 {
				d.errAt(v, "values must be a non-empty list")
				return
			}
			seen := map[string]bool{}
			for _, item := range v.Content {
				val := d.value(item)
				switch val.(type) {
				case string, int, float64, bool:
				default:
					d.errAt(item, "each partition value must be a string, number or boolean")
					continue
				}
				k := fmt.Sprint(val)
				if seen[k] {
					d.errAt(item, "duplicate partition value %q", k)
				}
				seen[k] = true
				c.Values = append(c.Values, val)
			}
		case "start":
			startNode = v
			start, _ = d.str(v, key)
		case "end":
			endNode = v
			end, _ = d.str(v, key)
		case "timezone":
			tzNode = v
			if s, ok := d.str(v, key); ok {
				loc, err := time.LoadLocation(s)
				if err != nil {
					d.errAt(v, "unknown time zone %q (want an IANA name such as Europe/Berlin)", s)
					return
				}
				c.Location = loc
			}
		case "partition_type":
			typeNode = v
			if s, ok := d.str(v, key); ok {
				if s != "date" && s != "timestamp" {
					d.errAt(v, "partition_type must be date or timestamp, not %q", s)
				}
				partitionType = s
			}
		case "batch":
			batchNode = v
			c.Batch, _ = d.int(v, key, 1)
		case "tags":
			c.Tags, _ = d.strList(v, key)
		case "depends_on_past":
			c.DependsOnPast, c.Self = decodeDependsOnPast(d, v)
			dependsNode = v
		case "lookback":
			lookbackNode = v
			c.Lookback = decodeLookback(d, v)
		case "delay":
			c.Delay, _ = d.duration(v, key)
		case "allow_partial":
			c.AllowPartial, _ = d.bool(v, key)
		case "watermark":
			watermarkNode = v
			if s, ok := d.str(v, key); ok {
				line, col := d.pos(v)
				t, err := parseTemplateAt(d.file, d.text, s, line, col, v.Style)
				if err != nil {
					d.errs.add(err)
					return
				}
				c.Watermark = t
			}
		case "refresh":
			refreshNode = v
			if s, ok := d.str(v, key); ok {
				switch s {
				case string(RefreshAlways), string(RefreshNever):
					c.Refresh.Mode = RefreshMode(s)
				default:
					every, err := ParseDuration(s)
					if err != nil || every <= 0 {
						d.errAt(v, "refresh must be always, never or a duration such as 6h or 1d, not %q", s)
						return
					}
					c.Refresh = Refresh{Mode: RefreshEvery, Every: every}
				}
			}
		case "audits":
			c.Audits = decodeAudits(d, v)
		case "columns":
			c.Columns = decodeColumns(d, v, x.names)
		case "on_schema_change":
			if s, ok := d.str(v, key); ok {
				p, err := ParseSchemaPolicy(s)
				if err != nil {
					d.errAt(v, "%v", err)
				}
				c.OnSchemaChange = p
			}
		case "full_refresh":
			if b, ok := d.bool(v, key); ok {
				c.NoFullRefresh = !b
			}
		case "description":
			c.Description, _ = d.str(v, key)
		case "content_hash":
			if b, ok := d.bool(v, key); ok {
				c.ContentHash = &b
			}
		case "unique_key":
			uniqueNode = v
			if v.Kind == yaml.ScalarNode {
				if s, ok := d.str(v, key); ok {
					c.UniqueKey = []string{s}
				}
			} else {
				c.UniqueKey, _ = d.strList(v, key)
			}
		default: // an adapter's block
			o := decodeOptions(d, keyNode(root, key), v)
			if o == nil {
				return
			}
			version, err := x.blocks[key](o)
			d.errs.add(o.positioned(err))
			if version != "" {
				o.version = strings.TrimSuffix(version, "\n") + "\n"
			}
			if c.Adapter == nil {
				c.Adapter = map[string]*Options{}
			}
			c.Adapter[key] = o
		}
	})

	// Cross-field rules.
	switch {
	case c.Grain != 0 && c.Values != nil:
		d.errAt(grainNode, "a model has either grain (time partitions) or values (list partitions), not both")
	case c.Grain != 0 && c.PartitionBy == "":
		d.errAt(grainNode, "grain needs partition_by: the output column holding the partition key")
	case c.Values != nil && c.PartitionBy == "":
		d.errAt(root, "values needs partition_by: the output column holding the partition value")
	case c.PartitionBy != "" && c.Grain == 0 && c.Values == nil:
		d.errAt(root, "partition_by %q needs a grain (hour, day, week, month, year) or a list of values", c.PartitionBy)
	}
	if fiscalNode != nil {
		switch {
		case c.Grain != Year:
			d.errAt(fiscalNode, "fiscal_year_start applies to grain: year")
		case fiscal != 0:
			c.Grain = fiscal
		}
	}
	if weekStartNode != nil {
		switch {
		case c.Grain != Week:
			d.errAt(weekStartNode, "week_start applies to grain: week")
		case weekStart == "sunday":
			c.Grain = SundayWeek
		}
	}
	for _, k := range c.UniqueKey {
		switch {
		case !identRE.MatchString(k):
			d.errAt(uniqueNode, "unique_key must name columns, not %q", k)
		case len(c.Columns) > 0 && !slices.ContainsFunc(c.Columns, func(col ColumnDecl) bool { return strings.EqualFold(col.Name, k) }):
			d.errAt(uniqueNode, "unique_key %s is not among the declared columns", k)
		}
	}
	if c.PartitionBy != "" && len(c.Columns) > 0 {
		found := false
		for _, col := range c.Columns {
			found = found || strings.EqualFold(col.Name, c.PartitionBy)
		}
		if !found {
			d.errAt(root, "partition_by %s is not among the declared columns", c.PartitionBy)
		}
	}
	if c.Self {
		switch {
		case c.Grain == 0:
			d.errAt(dependsNode, "depends_on_past: self applies only to time-partitioned models, whose partitions have an order")
		case len(c.Columns) == 0:
			d.errAt(dependsNode, "a model that reads its own past needs columns: refill creates its table from them before the first partition, which then reads it empty")
		case c.Batch > 0:
			d.errAt(batchNode, "a model that reads its own past cannot be batched: each partition reads the one before it, published")
		}
	}
	if c.Grain == Hour && tzNode != nil && c.Location != time.UTC {
		d.errAt(tzNode, "hour partitions are always UTC; timezone applies to day and coarser grains")
	}
	if c.Grain == 0 {
		for key, n := range map[string]*yaml.Node{"start": startNode, "end": endNode, "timezone": tzNode, "partition_type": typeNode, "batch": batchNode, "lookback": lookbackNode} {
			if n != nil {
				d.errAt(n, "%s applies only to time-partitioned models (set grain)", key)
			}
		}
		if c.Refresh.Mode == "" && watermarkNode != nil {
			c.Refresh.Mode = RefreshWatermark
		}
	} else if refreshNode != nil {
		d.errAt(refreshNode, "refresh applies to whole-table and list models; a time-partitioned model reruns its recent partitions with lookback")
	}
	if c.Grain != 0 && watermarkNode != nil && len(c.Lookback) == 0 {
		d.errAt(watermarkNode, "watermark needs lookback: the recent partitions whose freshness each scheduled run checks")
	}
	if c.Grain != 0 {
		if startNode == nil {
			d.errAt(root, "a time-partitioned model needs start: the first partition, e.g. start: 2024-01-01")
		} else if start != "" {
			p, err := ParsePeriod(start, c.Location)
			if err != nil {
				d.errAt(startNode, "start: %v", err)
			} else {
				c.Start = c.Grain.Truncate(p.Start, c.Location)
			}
		}
		if endNode != nil && end != "" {
			p, err := ParsePeriod(end, c.Location)
			switch {
			case err != nil:
				d.errAt(endNode, "end: %v", err)
			case !c.Start.IsZero() && p.Start.Before(c.Start):
				d.errAt(endNode, "end %s is before start", end)
			default:
				// Through the end of what end: names, at any grain: a
				// date is its whole day for an hourly model.
				last := p.Start
				if p.End.After(p.Start) {
					last = p.End.Add(-time.Nanosecond)
				}
				c.End = c.Grain.Add(c.Grain.Truncate(last, c.Location), 1)
			}
		}
		c.TimestampWindow = c.Grain == Hour || c.Location != time.UTC
		switch partitionType {
		case "date":
			if c.Grain == Hour {
				d.errAt(typeNode, "partition_type date cannot hold hour partitions")
			}
			c.TimestampWindow = false
		case "timestamp":
			c.TimestampWindow = true
		}
	}
	return c
}

// decodeColumns reads the columns map: name: type, where a type is a
// portable name or a map of the adapters' own types, by the names of the
// program's adapters (kept in their order).
func decodeColumns(d *yamlDoc, v *yaml.Node, adapters []string) []ColumnDecl {
	var out []ColumnDecl
	seen := map[string]bool{}
	d.entries(v, "columns", func(k, val *yaml.Node) {
		line, _ := d.pos(k)
		col := ColumnDecl{Name: k.Value, Line: line}
		if !identRE.MatchString(k.Value) {
			d.errAt(k, "column names must be identifiers (letters, digits, _), not %q", k.Value)
		}
		if seen[strings.ToLower(k.Value)] {
			d.errAt(k, "column %s is declared twice", k.Value)
		}
		seen[strings.ToLower(k.Value)] = true
		switch val.Kind {
		case yaml.ScalarNode:
			t, err := ParseColumnType(val.Value)
			if err != nil {
				d.errAt(val, "columns.%s: %v", k.Value, err)
			}
			col.Type.Portable = t
		case yaml.MappingNode:
			native := map[string]string{}
			d.fields(val, "columns."+k.Value, append([]string{"portable"}, adapters...), func(key string, tv *yaml.Node) {
				s, ok := d.str(tv, key)
				if !ok {
					return
				}
				if key == "portable" {
					t, err := ParseColumnType(s)
					if err != nil {
						d.errAt(tv, "columns.%s: %v", k.Value, err)
					}
					col.Type.Portable = t
					return
				}
				native[key] = s
			})
			for _, a := range adapters {
				if t, ok := native[a]; ok {
					col.Type.Native = append(col.Type.Native, NativeType{Dialect: a, Type: t})
				}
			}
		default:
			d.errAt(val, "columns.%s must be a type name (bigint, varchar, decimal(18,2), ...) or a map of dialect types", k.Value)
		}
		out = append(out, col)
	})
	return out
}

// decodeDependsOnPast reads depends_on_past: a number for every ref, a
// map of ref name to number, or self (alone, or as a key set to true) for
// a model that reads its own earlier partitions.
func decodeDependsOnPast(d *yamlDoc, v *yaml.Node) (map[string]int, bool) {
	if v.Kind == yaml.ScalarNode {
		if v.Value == "self" {
			return nil, true
		}
		n, ok := d.int(v, "depends_on_past", 0)
		if !ok {
			return nil, false
		}
		return map[string]int{"*": n}, false
	}
	out := map[string]int{}
	self := false
	d.entries(v, "depends_on_past", func(k, val *yaml.Node) {
		if k.Value == "self" {
			self, _ = d.bool(val, "depends_on_past.self")
			return
		}
		if n, ok := d.int(val, "depends_on_past."+k.Value, 0); ok {
			out[k.Value] = n
		}
	})
	return out, self
}

func decodeLookback(d *yamlDoc, v *yaml.Node) []int {
	if v.Kind == yaml.ScalarNode {
		n, ok := d.int(v, "lookback", 0)
		if !ok {
			return nil
		}
		out := make([]int, n) // lookback: 3 reruns the last three: offsets 0, 1, 2
		for i := range out {
			out[i] = i
		}
		return out
	}
	if v.Kind != yaml.SequenceNode {
		d.errAt(v, "lookback must be a number of partitions or a list of offsets such as [0, 1, 7]")
		return nil
	}
	var out []int
	for _, item := range v.Content {
		if n, ok := d.int(resolve(item), "each lookback offset", 0); ok {
			out = append(out, n)
		}
	}
	return out
}

var auditKinds = []string{string(AuditNotNull), string(AuditUnique), string(AuditAcceptedValues), string(AuditRowCount), string(AuditSQL)}

// decodeAudits reads the audits list. Each entry is a mapping with exactly
// one audit kind key plus optional name and severity, e.g.
//
//   - not_null: [order_date, revenue]
//   - row_count: {min: 1, within: 50%}
//   - sql: SELECT * FROM {{ this }} WHERE revenue < 0
//     severity: warn
func decodeAudits(d *yamlDoc, v *yaml.Node) []Audit {
	if v.Kind != yaml.SequenceNode {
		d.errAt(v, "audits must be a list, e.g. - not_null: [order_date]")
		return nil
	}
	var out []Audit
	for _, item := range v.Content {
		item = resolve(item)
		line, _ := d.pos(item)
		a := Audit{Severity: SeverityError, Line: line}
		kinds := 0
		d.fields(item, "audit", append([]string{"name", "severity"}, auditKinds...), func(key string, v *yaml.Node) {
			switch key {
			case "name":
				a.Name, _ = d.str(v, key)
				return
			case "severity":
				if s, ok := d.str(v, key); ok {
					if s != string(SeverityError) && s != string(SeverityWarn) {
						d.errAt(v, "severity must be error or warn, not %q", s)
					}
					a.Severity = Severity(s)
				}
				return
			}
			kinds++
			a.Kind = AuditKind(key)
			switch a.Kind {
			case AuditNotNull, AuditUnique:
				a.Columns, _ = d.strList(v, key)
			case AuditAcceptedValues:
				d.fields(v, "accepted_values", []string{"column", "values"}, func(k string, v *yaml.Node) {
					if k == "column" {
						if s, ok := d.str(v, k); ok {
							a.Columns = []string{s}
						}
						return
					}
					if list, ok := d.value(v).([]any); ok && len(list) > 0 {
						a.Values = list
					} else {
						d.errAt(v, "accepted_values.values must be a non-empty list")
					}
				})
				if len(a.Columns) == 0 {
					d.errAt(v, "accepted_values needs column: and values:")
				}
			case AuditRowCount:
				d.fields(v, "row_count", []string{"min", "max", "within"}, func(k string, v *yaml.Node) {
					switch k {
					case "min", "max":
						if n, ok := d.int(v, "row_count."+k, 0); ok {
							n64 := int64(n)
							if k == "min" {
								a.Min = &n64
							} else {
								a.Max = &n64
							}
						}
					case "within":
						if f, ok := parsePercent(v.Value); ok && v.Kind == yaml.ScalarNode {
							a.Within = &f
						} else {
							d.errAt(v, "row_count.within must be a percentage such as 50%%")
						}
					}
				})
				if a.Min == nil && a.Max == nil && a.Within == nil {
					d.errAt(v, "row_count needs min, max or within")
				}
			case AuditSQL:
				s, ok := d.str(v, key)
				if !ok {
					return
				}
				line, col := d.pos(v)
				t, err := parseTemplateAt(d.file, d.text, s, line, col, v.Style)
				if err != nil {
					d.errs.add(err)
					return
				}
				a.SQL = t
			}
		})
		if kinds != 1 {
			d.errAt(item, "each audit needs exactly one of %s", strings.Join(auditKinds, ", "))
			continue
		}
		if a.Name == "" {
			a.Name = string(a.Kind)
			if len(a.Columns) > 0 {
				a.Name += "(" + strings.Join(a.Columns, ", ") + ")"
			}
		}
		out = append(out, a)
	}
	return out
}

func parsePercent(s string) (float64, bool) {
	num, ok := strings.CutSuffix(strings.TrimSpace(s), "%")
	if !ok {
		return 0, false
	}
	var f float64
	if _, err := fmt.Sscanf(num, "%g", &f); err != nil || f < 0 {
		return 0, false
	}
	return f / 100, true
}
