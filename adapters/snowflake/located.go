package snowflake

import (
	"regexp"
	"strconv"

	"github.com/refill/refill/adapters"
)

// positionRE finds where Snowflake's compilation errors point: "syntax
// error line 4 at position 20 unexpected 'AS'." (line 1-based, position
// 0-based, in characters).
var positionRE = regexp.MustCompile(`line (\d+) at position (\d+)`)

// located returns err as an adapters.StatementError when Snowflake's
// message says where in stmt it is, else err.
func located(stmt string, err error) error {
	if err == nil {
		return nil
	}
	m := positionRE.FindStringSubmatch(err.Error())
	if m == nil {
		return err
	}
	line, _ := strconv.Atoi(m[1])
	pos, _ := strconv.Atoi(m[2])
	off := adapters.OffsetOf(stmt, line, pos+1)
	if off < 0 {
		return err
	}
	return &adapters.StatementError{Statement: stmt, Offset: off, Err: err}
}
