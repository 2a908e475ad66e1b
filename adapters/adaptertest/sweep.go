package adaptertest

import (
	"iter"
	"strings"
	"testing"

	"github.com/refill/refill/adapters/recorder"
)

// sampleEvery is how far apart, beyond the first of each kind, the
// operations a fault sweep fails under -short are.
const sampleEvery = 8

// faultPoints yields the operations a fault sweep fails, numbered from 1.
// Without -short it yields every number, and the sweep stops once one
// exceeds what a run makes. Under -short it yields a deterministic sample
// of the operations of the clean run dry makes: the first of each kind
// (sweepKind) and every sampleEvery-th, so that every kind of operation
// still fails once.
func faultPoints(dry func() []recorder.Entry) iter.Seq[int] {
	if !testing.Short() {
		return func(yield func(int) bool) {
			for n := 1; yield(n); n++ {
			}
		}
	}
	log := dry()
	return func(yield func(int) bool) {
		seen := map[string]bool{}
		for i, e := range log {
			k := sweepKind(e)
			if !seen[k] || (i+1)%sampleEvery == 0 || i == len(log)-1 {
				seen[k] = true
				if !yield(i + 1) {
					return
				}
			}
		}
	}
}

// sweepKind names an operation's kind: begin, commit and rollback alone; a
// statement by its operation and its first words (exec CREATE TABLE,
// query SELECT).
func sweepKind(e recorder.Entry) string {
	words := strings.Fields(strings.ToUpper(e.SQL))
	n := 1
	if len(words) > 1 && (words[0] == "CREATE" || words[0] == "DROP" || words[0] == "ALTER" || words[0] == "INSERT" ||
		words[0] == "DELETE" || words[0] == "SYSTEM") {
		n = 2
	}
	return string(e.Op) + " " + strings.Join(words[:min(n, len(words))], " ")
}
