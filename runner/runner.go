package runner

import (
	"crypto/rand"
	"encoding/hex"
	"time"

	"github.com/refill/refill/runner/plan"
)

// Runner runs backfills of one project against one target: it is a
// plan.Reader (Plan, Facts, Records, Explain, Estimate) that also writes.
type Runner struct {
	plan.Reader
	Target string // the target's name, recorded with each run
}

// NewRunID returns a sortable, unique run id such as
// 20240102T030405Z-1a2b3c.
func NewRunID(now time.Time) string {
	b := make([]byte, 3)
	rand.Read(b)
	return now.UTC().Format("20060102T150405Z") + "-" + hex.EncodeToString(b)
}
