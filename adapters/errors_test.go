package adapters_test

import (
	"context"
	"errors"
	"fmt"
	"testing"

	"github.com/refill/refill/adapters"
)

func TestKnownTransience(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		err              error
		transient, known bool
	}{
		{nil, false, true},
		{context.Canceled, false, true},
		{fmt.Errorf("query: %w", context.DeadlineExceeded), false, true},
		{&adapters.TransientError{Err: errors.New("overloaded")}, true, true},
		{fmt.Errorf("stage: %w", &adapters.TransientError{Err: errors.New("conflict")}), true, true},
		{errors.New("Binder Error: column x not found"), false, false},
	} {
		if transient, known := adapters.KnownTransience(c.err); transient != c.transient || known != c.known {
			t.Errorf("KnownTransience(%v) = %v, %v; want %v, %v", c.err, transient, known, c.transient, c.known)
		}
	}
}
