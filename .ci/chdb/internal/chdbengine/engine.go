// Package chdbengine runs statements in chDB, the embedded ClickHouse, for
// the native-protocol server: one chDB session, one statement at a time,
// each in the database and with the settings of the connection that sent
// it.
//
// chDB is loaded by github.com/chdb-io/chdb-go/chdb-purego when the
// program starts, from the file CHDB_LIB_PATH names; the program panics
// if it cannot be loaded. chDB allows one session per process.
package chdbengine

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"strings"

	chdb "github.com/chdb-io/chdb-go/chdb-purego"

	"github.com/refill/refill/ci/chdb/internal/server"
)

// Engine is a chDB session shared by all connections. It implements
// server.Engine.
type Engine struct {
	// sem holds one token while a statement runs: a channel rather than
	// a mutex, so that a statement can stop waiting when its context is
	// cancelled.
	sem chan struct{}
	log *slog.Logger

	// The fields below are guarded by sem.
	conn     chdb.ChdbConn
	closed   bool
	database string              // the session's current database; "" if unknown
	baseline map[string]baseline // settings' values before statements changed them
}

var _ server.Engine = (*Engine)(nil)

// baseline is a setting's value in the session when no statement runs.
type baseline struct {
	changed bool   // differs from the default (chDB changes a few)
	value   string // as system.settings shows it
}

// Open starts a chDB session whose data lives in dir (created if
// missing), so that tables survive a restart. It must be called once per
// process; close the Engine to release the session.
func Open(dir string, log *slog.Logger) (*Engine, error) {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, fmt.Errorf("creating chDB's data directory: %w", err)
	}
	conn, err := chdb.NewConnection(2, []string{"clickhouse", "--path=" + dir})
	if err != nil {
		return nil, fmt.Errorf("opening chDB in %s: %w", dir, err)
	}
	e := &Engine{sem: make(chan struct{}, 1), log: log, conn: conn, baseline: map[string]baseline{}}
	if e.database, err = e.Scalar(context.Background(), "SELECT currentDatabase()"); err != nil {
		conn.Close()
		return nil, err
	}
	return e, nil
}

// Close waits for the running statement and closes the session. Later
// statements fail.
func (e *Engine) Close() {
	e.sem <- struct{}{}
	defer e.release()
	if !e.closed {
		e.closed = true
		e.conn.Close()
	}
}

// Scalar runs a statement in the session as it is and returns its output
// as raw tab-separated text, without the final newline.
func (e *Engine) Scalar(ctx context.Context, sql string) (string, error) {
	if err := e.acquire(ctx); err != nil {
		return "", err
	}
	defer e.release()
	out, err := e.query(sql, "TSVRaw")
	return strings.TrimSuffix(string(out), "\n"), err
}

// Run runs req's statement in req's database with req's settings, and then
// resets the settings. See server.Engine.
func (e *Engine) Run(ctx context.Context, req server.Request) (server.Output, error) {
	if err := e.acquire(ctx); err != nil {
		return server.Output{}, err
	}
	defer e.release()
	if req.Database != "" && req.Database != e.database {
		if _, err := e.query("USE "+quoteIdent(req.Database), "TSV"); err != nil {
			return server.Output{}, err
		}
		e.database = req.Database
	}
	if len(req.Settings) > 0 {
		reset, err := e.apply(req.Settings)
		defer reset()
		if err != nil {
			return server.Output{}, err
		}
	}
	if req.SQL == "" {
		return server.Output{}, nil
	}
	if strings.Contains(strings.ToUpper(req.SQL), "DATABASE") {
		// DROP or RENAME DATABASE may have removed the current one: the
		// next statement says USE again.
		defer func() { e.database = "" }()
	}
	data, err := e.query(req.SQL, req.Format)
	if err != nil || len(data) > 0 || req.IfEmpty == "" {
		return server.Output{Data: data}, err
	}
	data, err = e.query(req.SQL, req.IfEmpty)
	return server.Output{Data: data, Fallback: true}, err
}

// acquire waits for the session, or for ctx.
func (e *Engine) acquire(ctx context.Context) error {
	select {
	case e.sem <- struct{}{}:
	case <-ctx.Done():
		return ctx.Err()
	}
	if e.closed {
		e.release()
		return errors.New("the chDB session is closed")
	}
	return nil
}

func (e *Engine) release() { <-e.sem }

// query runs one statement and returns a copy of its output.
func (e *Engine) query(sql, format string) ([]byte, error) {
	res, err := e.conn.Query(sql, format)
	if err != nil {
		return nil, err
	}
	defer res.Free()
	return append([]byte(nil), res.Buf()...), nil
}

// apply sets settings for one statement and returns the function that
// resets them to their baseline. A setting without a baseline (a query
// parameter, param_<name>, or a custom setting) keeps its value until a
// later statement sets it again.
func (e *Engine) apply(settings []server.Setting) (reset func(), err error) {
	var names, sets []string
	seen := map[string]bool{}
	for _, s := range settings {
		sets = append(sets, quoteIdent(s.Name)+" = "+s.Value)
		if !seen[s.Name] {
			seen[s.Name] = true
			names = append(names, s.Name)
		}
	}
	if err := e.learnBaseline(names); err != nil {
		return func() {}, err
	}
	reset = func() {
		var resets []string
		for _, n := range names {
			b, ok := e.baseline[n]
			switch {
			case !ok:
			case b.changed:
				resets = append(resets, quoteIdent(n)+" = "+quoteString(b.value))
			default:
				resets = append(resets, quoteIdent(n)+" = DEFAULT")
			}
		}
		if len(resets) == 0 {
			return
		}
		if _, err := e.query("SET "+strings.Join(resets, ", "), "TSV"); err != nil {
			e.log.Error("cannot reset settings: later statements may see them", "settings", names, "err", err)
		}
	}
	if _, err := e.query("SET "+strings.Join(sets, ", "), "TSV"); err != nil {
		reset() // SET may have applied the assignments before the failing one
		return func() {}, err
	}
	return reset, nil
}

// learnBaseline reads the session's values of the settings named that it
// does not know yet. Names system.settings does not list get none.
func (e *Engine) learnBaseline(names []string) error {
	var unknown []string
	for _, n := range names {
		if _, ok := e.baseline[n]; !ok && !strings.HasPrefix(n, "param_") {
			unknown = append(unknown, quoteString(n))
		}
	}
	if len(unknown) == 0 {
		return nil
	}
	out, err := e.query("SELECT name, changed, value FROM system.settings WHERE name IN ("+strings.Join(unknown, ", ")+")", "JSONEachRow")
	if err != nil {
		return fmt.Errorf("reading settings: %w", err)
	}
	dec := json.NewDecoder(strings.NewReader(string(out)))
	for dec.More() {
		var row struct {
			Name    string `json:"name"`
			Changed int    `json:"changed"`
			Value   string `json:"value"`
		}
		if err := dec.Decode(&row); err != nil {
			return fmt.Errorf("reading settings: %w", err)
		}
		e.baseline[row.Name] = baseline{changed: row.Changed != 0, value: row.Value}
	}
	return nil
}

// quoteIdent renders a name as a quoted identifier.
func quoteIdent(s string) string {
	return "`" + strings.NewReplacer(`\`, `\\`, "`", "\\`").Replace(s) + "`"
}

// quoteString renders s as a string literal.
func quoteString(s string) string {
	return "'" + strings.NewReplacer(`\`, `\\`, `'`, `\'`).Replace(s) + "'"
}
