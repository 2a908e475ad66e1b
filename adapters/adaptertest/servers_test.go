package adaptertest_test

import (
	"testing"

	"github.com/refill/refill/adapters/adaptertest"
)

// A server whose variables are not all set skips the test, naming those
// unset and how to start one; set, its values come back in order.
func TestServerEnv(t *testing.T) {
	s := adaptertest.Server{Name: "x", Vars: []string{"REFILL_TEST_A", "REFILL_TEST_B"}, Start: "start one"}
	t.Setenv("REFILL_TEST_A", "a")
	t.Setenv("REFILL_TEST_B", "")
	var skipped bool
	t.Run("unset", func(t *testing.T) {
		defer func() { skipped = t.Skipped() }()
		s.Env(t)
		t.Error("Env did not skip with REFILL_TEST_B unset")
	})
	if !skipped {
		t.Error("the test was not skipped")
	}
	t.Setenv("REFILL_TEST_B", "b")
	if got := s.Env(t); len(got) != 2 || got[0] != "a" || got[1] != "b" {
		t.Errorf("Env = %q", got)
	}
}
