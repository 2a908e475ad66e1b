package clickhouse

import (
	"errors"
	"testing"

	"github.com/refill/refill/adapters"
)

// TestLocated: ClickHouse's "failed at position N" (1-based), as 18.16
// and 26 word it, becomes the offset in the statement.
func TestLocated(t *testing.T) {
	t.Parallel()
	stmt := "SELECT\n  count(*) 1 AS n\nFROM t"
	for _, msg := range []string{
		"code: 62, message: Syntax error: failed at position 19: 1 AS n FROM t. Expected one of: ...",
		"code: 62, message: Syntax error: failed at position 19 ('1') (line 2, col 12): 1 AS n",
	} {
		var se *adapters.StatementError
		err := located(stmt, errors.New(msg))
		if !errors.As(err, &se) || se.Offset != 18 || stmt[se.Offset] != '1' || err.Error() != msg {
			t.Errorf("%s: %v %+v", msg, err, se)
		}
	}
	if err := located(stmt, errors.New("code: 47, message: Missing columns: 'x'")); errors.As(err, new(*adapters.StatementError)) {
		t.Errorf("an error without a position is located: %v", err)
	}
}
