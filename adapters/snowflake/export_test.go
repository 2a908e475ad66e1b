package snowflake

// The package's own functions that its external tests call.
var (
	Capabilities     = capabilities
	DriverConfig     = driverConfig
	DefaultSchema    = defaultSchema
	ParseBlock       = parseBlock
	RecordStatements = recordStatements
	ColumnValue      = columnValue
	SeedStatements   = seedStatements
	QueryTag         = queryTag
	TargetType       = targetType
)
