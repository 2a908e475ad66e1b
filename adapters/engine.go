package adapters

import (
	"context"

	"github.com/refill/refill/models"
)

// Engine describes one engine to a program that opens targets: what a
// project's files may say for it, how to check a target without
// connecting, and how to open one. Each engine package exports its own
// (duckdb.Engine, clickhouse.Engine, snowflake.Engine); a program lists the
// engines it runs on and holds none of their rules.
type Engine struct {
	// Info is what the engine guarantees, known without a connection.
	Info Info
	// Title is the engine's name in prose (DuckDB).
	Title string
	// Driver is the module path of the Go driver the engine imports, whose
	// version refill --version reports.
	Driver string
	// DSN says the engine's targets connect with dsn:.
	DSN bool
	// TargetKeys are the target settings of its own (models.Target.Settings).
	TargetKeys []string
	// Block checks a model's block of settings for the engine (a block
	// keyed by Info.Name); nil when models may not have one.
	Block models.BlockFunc
	// Dialect returns target t's dialect and default schema, without
	// connecting.
	Dialect func(t *models.Target) (models.Dialect, string)
	// CheckTarget, when set, refuses settings of t that cannot work with
	// project p, whose tables land in schemas.
	CheckTarget func(t *models.Target, p *models.Project, schemas models.TargetSchemas) error
	// Open connects to target t.
	Open func(ctx context.Context, t *models.Target, o OpenOptions) (Adapter, error)
	// Parser, when set, opens a parser of the dialect that needs no
	// connection (refill validate checks every model's SQL with it).
	Parser func() (Parser, error)
	// Sandbox, when set, opens a new, empty in-memory database of an
	// engine linked into the binary, with the default schema of a target
	// that names none (refill test runs models there). The caller closes it.
	Sandbox func(ctx context.Context) (Adapter, error)
	// Library, when set, returns the version of the engine's library linked
	// into the binary, such as v1.5.0 (refill --version).
	Library func(ctx context.Context) (string, error)
}

// Keys are what the engine adds to a project's files, for models.Load.
func (e Engine) Keys() models.AdapterKeys {
	return models.AdapterKeys{Name: e.Info.Name, TargetKeys: e.TargetKeys, Block: e.Block}
}

// OpenOptions are how a program opens a target, whatever its engine.
type OpenOptions struct {
	// Dir is the project's folder, against which relative paths resolve.
	Dir string
	// ReadOnly opens for plan and status: never write, never create, never
	// lock out a writer.
	ReadOnly bool
	// Holder names this process to another that finds the warehouse
	// locked, e.g. "refill run".
	Holder string
	// Log, when set, receives every statement before it runs.
	Log func(sql string)
	// LookupEnv resolves the environment variables an engine reads for
	// credentials; os.LookupEnv when nil.
	LookupEnv func(string) (string, bool)
	// Configure, when set, sees the engine's own Config (a pointer) before
	// it opens: tests put fault injectors and recorders there.
	Configure func(config any)
}

// Parser parses one dialect's statements offline.
type Parser interface {
	Parse(ctx context.Context, sql string) error
	Close() error
}
