package snowflake

import (
	"errors"
	"testing"

	"github.com/refill/refill/adapters"
)

// TestLocated: Snowflake's "line N at position M" (M 0-based) becomes
// the offset in the statement.
func TestLocated(t *testing.T) {
	t.Parallel()
	stmt := "SELECT\n  count(*) 1 AS n\nFROM t"
	var se *adapters.StatementError
	err := located(stmt, errors.New("001003 (42000): SQL compilation error:\nsyntax error line 2 at position 11 unexpected '1'."))
	if !errors.As(err, &se) || stmt[se.Offset] != '1' || se.Offset != 18 {
		t.Errorf("%v %+v", err, se)
	}
	if err := located(stmt, errors.New("syntax error line 9 at position 0")); errors.As(err, new(*adapters.StatementError)) {
		t.Errorf("a line the statement lacks is located: %v", err)
	}
}
