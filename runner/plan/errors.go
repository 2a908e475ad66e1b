package plan

import (
	"errors"
	"fmt"
)

// ErrUsage marks a selection refill cannot act on (a bad date, an unknown
// model, contradictory flags). The CLI exits 2 for it.
var ErrUsage = errors.New("usage")

func usageErrorf(format string, args ...any) error {
	return fmt.Errorf("%w: %s", ErrUsage, fmt.Sprintf(format, args...))
}
