package adaptertest

import (
	"os"
	"strings"
	"testing"

	"github.com/refill/refill/adapters"
	"github.com/refill/refill/models"
)

// A Server is a warehouse the tests run against when the environment
// names it: the variables that must be set, and how to get one. Every
// test package skips the same way, saying which variable is unset and
// how to start the server (a set but unreachable server fails instead).
type Server struct {
	Name  string   // for messages
	Vars  []string // the variables that name it, all required
	Start string   // how to get one
	// Target makes a target of the server from the variables' values.
	Target func(env []string) *models.Target
}

// The servers refill's tests know.
var (
	ClickHouseServer = Server{Name: "ClickHouse", Vars: []string{"CLICKHOUSE_DSN"},
		Start:  "start a server with .ci/clickhouse/start (or ClickHouse 26 with .ci/chdb/start; see README)",
		Target: func(env []string) *models.Target { return &models.Target{DSN: env[0]} }}
	ClusterServer = Server{Name: "the ClickHouse cluster", Vars: []string{"CLICKHOUSE_CLUSTER_DSN", "CLICKHOUSE_CLUSTER", "CLICKHOUSE_CLUSTER_NODES"},
		Start: "start a cluster with .ci/cluster/start (see README)",
		Target: func(env []string) *models.Target {
			return &models.Target{DSN: env[0], Settings: map[string]string{"cluster": env[1]}}
		}}
	SnowflakeAccount = Server{Name: "Snowflake", Vars: []string{"SNOWFLAKE_DSN"},
		Start: "set it to run against a real account (see README)",
		Target: func(env []string) *models.Target {
			return &models.Target{DSN: env[0], Settings: map[string]string{"warehouse": os.Getenv("SNOWFLAKE_WAREHOUSE")}}
		}}
)

// Env returns the values of s's variables, or skips t, naming those unset
// and how to get the server.
func (s Server) Env(t testing.TB) []string {
	t.Helper()
	var vals, unset []string
	for _, v := range s.Vars {
		val := os.Getenv(v)
		if val == "" {
			unset = append(unset, v)
		}
		vals = append(vals, val)
	}
	if len(unset) > 0 {
		verb := "is"
		if len(unset) > 1 {
			verb = "are"
		}
		t.Skipf("%s %s not set: %s", strings.Join(unset, " and "), verb, s.Start)
	}
	return vals
}

// Open skips t unless s is configured, then opens a target of s through
// engine e's descriptor, as refill would: schemas, when set, are the
// target's default, ledger and stage schemas. The adapter closes when t
// ends.
func (s Server) Open(t testing.TB, e adapters.Engine, schemas Schemas) adapters.Adapter {
	t.Helper()
	target := s.Target(s.Env(t))
	target.Name, target.Adapter = "test", e.Info.Name
	target.Schema, target.LedgerSchema, target.StageSchema = schemas.Default, schemas.Ledger, schemas.Stage
	a, err := e.Open(t.Context(), target, adapters.OpenOptions{})
	if err != nil {
		t.Fatalf("opening %s: %v", s.Name, err)
	}
	t.Cleanup(func() { a.Close() })
	return a
}
