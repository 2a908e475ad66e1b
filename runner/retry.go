package runner

import (
	"math/rand/v2"
	"time"
)

// maxRetryDelay caps the exponential backoff.
const maxRetryDelay = time.Minute

// backoff returns the delay before retry attempt (1 for the first retry):
// base doubled per attempt, capped, with ±50% jitter so that parallel
// workers that failed together do not retry together.
func backoff(base time.Duration, attempt int) time.Duration {
	if base <= 0 {
		return 0
	}
	d := base << (attempt - 1)
	if d > maxRetryDelay || d <= 0 {
		d = maxRetryDelay
	}
	return time.Duration(float64(d) * (0.5 + rand.Float64()))
}
