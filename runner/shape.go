package runner

import "github.com/refill/refill/runner/plan"

// ApplyShape sets the options a resumed run's shape decides.
func (o *RunOptions) ApplyShape(s plan.Shape) {
	o.Together, o.Batch, o.SplitFailed, o.FailFast = s.Together, s.Batch, s.SplitFailed, s.FailFast
	o.Concurrency, o.Retries = s.Concurrency, s.Retries
}

// shape is the part of o a resumed run repeats.
func (o RunOptions) shape() *plan.Shape {
	return &plan.Shape{Together: o.Together, Batch: o.Batch, SplitFailed: o.SplitFailed, FailFast: o.FailFast,
		Concurrency: o.Concurrency, Retries: o.Retries}
}
