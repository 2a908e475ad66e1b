package clickhouse

import (
	"regexp"
	"strconv"

	"github.com/refill/refill/adapters"
)

// positionRE finds where ClickHouse's syntax errors say they failed:
// "Syntax error: failed at position 45" (1-based, in bytes), in 18.16 and
// in 26 alike.
var positionRE = regexp.MustCompile(`failed at position (\d+)`)

// located returns err as an adapters.StatementError when ClickHouse's
// message says where in stmt it is, else err.
func located(stmt string, err error) error {
	if err == nil {
		return nil
	}
	m := positionRE.FindStringSubmatch(err.Error())
	if m == nil {
		return err
	}
	pos, _ := strconv.Atoi(m[1])
	if pos < 1 || pos > len(stmt)+1 {
		return err
	}
	return &adapters.StatementError{Statement: stmt, Offset: pos - 1, Err: err}
}
