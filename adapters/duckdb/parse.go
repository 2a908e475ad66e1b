package duckdb

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"

	"github.com/duckdb/duckdb-go/v2"

	"github.com/refill/refill/adapters"
)

// A parser checks statements with DuckDB's own parser, offline: it
// parses without binding (json_serialize_sql), so tables need not exist.
type parser struct {
	db *sql.DB
}

// newParser opens the in-memory DuckDB a parser uses.
func newParser() (*parser, error) {
	c, err := duckdb.NewConnector("", nil)
	if err != nil {
		return nil, err
	}
	return &parser{db: sql.OpenDB(c)}, nil
}

// Close closes p's database.
func (p *parser) Close() error { return p.db.Close() }

// Parse returns nil if query is one statement DuckDB can parse. A syntax
// error is an *adapters.StatementError at the offset DuckDB points at.
func (p *parser) Parse(ctx context.Context, query string) error {
	var out string
	if err := p.db.QueryRowContext(ctx, "SELECT CAST(json_serialize_sql(?::VARCHAR) AS VARCHAR)", query).Scan(&out); err != nil {
		return err
	}
	var res struct {
		Error      bool              `json:"error"`
		Type       string            `json:"error_type"`
		Message    string            `json:"error_message"`
		Position   string            `json:"position"`
		Statements []json.RawMessage `json:"statements"`
	}
	if err := json.Unmarshal([]byte(out), &res); err != nil {
		return fmt.Errorf("reading DuckDB's parse of the statement: %w", err)
	}
	switch {
	case res.Error && res.Type != "parser":
		// Parsed, but not serializable (a PIVOT statement): nothing to
		// report.
		return nil
	case res.Error:
		err := errors.New("DuckDB's parser: " + res.Message)
		if pos, perr := strconv.Atoi(res.Position); perr == nil && pos >= 0 && pos <= len(query) {
			return &adapters.StatementError{Statement: query, Offset: pos, Err: err}
		}
		return err
	case len(res.Statements) != 1:
		return fmt.Errorf("a model is one SELECT statement; DuckDB's parser finds %d", len(res.Statements))
	}
	return nil
}
