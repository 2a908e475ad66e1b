package adaptertest

import (
	"testing"
	"time"
)

// A lease written just before midnight expires tomorrow: both times are the
// clock's, and both are masked, while the data's own dates are kept.
func TestMaskVolatileAcrossMidnight(t *testing.T) {
	t.Parallel()
	now := time.Now().UTC()
	at := func(d time.Duration) string { return now.Add(d).Format("2006-01-02 15:04:05.999999") }
	for _, tc := range []struct{ in, want string }{
		{"TIMESTAMP '" + at(0) + "'", "TIMESTAMP 'NOW'"},
		{"TIMESTAMP '" + at(10*time.Minute) + "'", "TIMESTAMP 'NOW'"},
		{"TIMESTAMP '" + at(-23*time.Hour) + "'", "TIMESTAMP 'NOW'"},
		{"'" + now.Add(time.Hour).Format(time.RFC3339) + "'", "'NOWZ'"},
		{"WHERE d >= TIMESTAMP '2024-01-01 00:00:00'", "WHERE d >= TIMESTAMP '2024-01-01 00:00:00'"},
		{"DATE '" + now.Format("2006-01-02") + "'", "DATE '" + now.Format("2006-01-02") + "'"},
	} {
		if got := MaskVolatile(tc.in); got != tc.want {
			t.Errorf("MaskVolatile(%q) = %q, want %q", tc.in, got, tc.want)
		}
	}
}
