package clickhouse_test

import (
	"context"
	"fmt"
	"os"
	"strings"
	"sync"
	"testing"

	"github.com/refill/refill/adapters"
	"github.com/refill/refill/adapters/adaptertest"
	"github.com/refill/refill/adapters/clickhouse"
)

// dsn returns CLICKHOUSE_DSN or skips the test.
func dsn(t *testing.T) string {
	t.Helper()
	return adaptertest.ClickHouseServer.Env(t)[0]
}

// statementLog collects the statements an adapter runs.
type statementLog struct {
	mu    sync.Mutex
	stmts []string
}

func (l *statementLog) add(s string) {
	l.mu.Lock()
	l.stmts = append(l.stmts, s)
	l.mu.Unlock()
}

// matching returns the logged statements containing every one of parts.
func (l *statementLog) matching(parts ...string) []string {
	l.mu.Lock()
	defer l.mu.Unlock()
	var out []string
next:
	for _, s := range l.stmts {
		for _, p := range parts {
			if !strings.Contains(s, p) {
				continue next
			}
		}
		out = append(out, s)
	}
	return out
}

// open opens an adapter on fresh databases that t's cleanup drops.
func open(t *testing.T, s adaptertest.Schemas, log *statementLog) *clickhouse.Adapter {
	t.Helper()
	var cfg clickhouse.Config
	if log != nil {
		cfg.Log = log.add
	}
	return openWith(t, s, cfg)
}

// openWith opens an adapter as open does, with cfg's other settings.
func openWith(t *testing.T, s adaptertest.Schemas, cfg clickhouse.Config) *clickhouse.Adapter {
	t.Helper()
	a, err := tryOpen(t, s, cfg)
	if err != nil {
		t.Fatal(err)
	}
	return a
}

// tryOpen is openWith for tests of Open's own failures.
func tryOpen(t *testing.T, s adaptertest.Schemas, cfg clickhouse.Config) (*clickhouse.Adapter, error) {
	cfg.DSN, cfg.Schema, cfg.LedgerSchema, cfg.StageSchema = dsn(t), s.Default, s.Ledger, s.Stage
	a, err := clickhouse.Open(t.Context(), cfg)
	if err != nil {
		return nil, err
	}
	t.Cleanup(func() {
		for _, db := range []string{s.Default, s.Ledger, s.Stage} {
			if _, err := a.DB().ExecContext(context.Background(), "DROP DATABASE IF EXISTS "+a.Dialect().QuoteIdent(db)); err != nil {
				t.Errorf("dropping %s: %v", db, err)
			}
		}
		a.Close()
	})
	return a, nil
}

func TestConformance(t *testing.T) {
	dsn(t)
	adaptertest.Run(t, func(t *testing.T, s adaptertest.Schemas) adapters.Adapter {
		return open(t, s, nil)
	})
}

// schemas returns fresh database names for one test.
func schemas(t *testing.T) adaptertest.Schemas {
	name := strings.ToLower(strings.NewReplacer("/", "_", " ", "_").Replace(t.Name()))
	suffix := fmt.Sprintf("%s_%d", name, os.Getpid())
	return adaptertest.Schemas{Default: "ct_" + suffix, Ledger: "ct_ledger_" + suffix, Stage: "ct_stage_" + suffix}
}
