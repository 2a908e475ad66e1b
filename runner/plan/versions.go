package plan

import (
	"context"
	"fmt"
	"time"

	"github.com/refill/refill/adapters"
	"github.com/refill/refill/models"
)

// Change is what changed in a model since some of its partitions were
// built: the difference between the version that built them and the
// current one.
type Change struct {
	Model      *models.Model
	From, To   string // fingerprints
	Partitions int    // stale partitions the plan runs that From built
	// Diff is a unified diff of the versions' texts; empty when the ledger
	// does not have the old version (built before refill kept versions).
	Diff string
}

// Explain returns, for every model with partitions the plan runs because
// its SQL or config changed, what changed.
func (r *Reader) Explain(ctx context.Context, plan *Plan) ([]Change, error) {
	type key struct {
		m  *models.Model
		fp string
	}
	counts := map[key]int{}
	var order []key
	for _, r := range plan.Runs() {
		st := r.Step
		if st.Reason != ReasonStale || st.Record == nil {
			continue
		}
		k := key{st.Model, st.Record.Fingerprint}
		if counts[k] == 0 {
			order = append(order, k)
		}
		counts[k] += r.N
	}
	if len(order) == 0 {
		return nil, nil
	}
	var names []string
	for _, k := range order {
		names = append(names, k.m.Name)
	}
	versions, err := r.Adapter.Versions(ctx, names)
	if err != nil {
		return nil, err
	}
	text := map[string]string{}
	for _, v := range versions {
		text[v.Model+" "+v.Fingerprint] = v.Text
	}
	var out []Change
	for _, k := range order {
		cur := k.m.Version(r.Scope)
		c := Change{Model: k.m, From: k.fp, To: cur.Fingerprint, Partitions: counts[k]}
		if old, ok := text[k.m.Name+" "+k.fp]; ok {
			c.Diff = unifiedDiff(k.m.Name+" "+k.fp+" (built)", k.m.Name+" "+cur.Fingerprint+" (now)", old, cur.Text)
		}
		out = append(out, c)
	}
	return out, nil
}

// acceptedNotes returns the plan notes of selected models whose current
// version was accepted for partitions an earlier version built, and whose
// ledger still has such partitions: carrying the current version, built
// before the acceptance (a full refresh, say, rebuilt the others). The
// ledger's records of those models are read whole (accepted).
func acceptedNotes(selected []*models.Model, scope *models.Scope, versions []adapters.Version, l *ledger) []string {
	var notes []string
	for _, m := range selected {
		v := acceptedVersion(m, scope, versions)
		if v == nil {
			continue
		}
		n := 0
		if mr := l.byModel[m.Name]; mr != nil {
			for _, r := range mr.byKey {
				if r.State.Published() && r.Fingerprint == v.Fingerprint && r.StartedAt.Before(v.AcceptedAt) {
					n++
				}
			}
		}
		if n == 0 {
			continue
		}
		notes = append(notes, fmt.Sprintf("%s: forward-only since %s: %d partition(s) keep rows computed by version %s, accepted as the current version %s by refill accept",
			m.Name, v.AcceptedAt.UTC().Format("2006-01-02 15:04"), n, v.AcceptedFrom, v.Fingerprint))
	}
	return notes
}

// acceptedVersion returns m's current version if refill accept made it
// current, or nil.
func acceptedVersion(m *models.Model, scope *models.Scope, versions []adapters.Version) *adapters.Version {
	fp := m.Version(scope).Fingerprint
	for i, v := range versions {
		if v.Model == m.Name && v.Fingerprint == fp && v.AcceptedFrom != "" {
			return &versions[i]
		}
	}
	return nil
}

// accepted returns the names of the models of p whose current version
// refill accept made current: planning reads their records whole, to say
// how many partitions keep rows of the version it replaced.
func accepted(p *models.Project, scope *models.Scope, versions []adapters.Version) map[string]bool {
	out := map[string]bool{}
	for _, m := range p.Models {
		if acceptedVersion(m, scope, versions) != nil {
			out[m.Name] = true
		}
	}
	return out
}

// Accepted is what accepting a model's current version does to it.
type Accepted struct {
	Model      *models.Model
	Partitions int      // records now carrying the current fingerprint
	From       []string // the fingerprints they carried
}

// Acceptance is what accepting the current versions of some models writes
// (runner.Runner.Accept): nothing when Records is empty.
type Acceptance struct {
	Models   []Accepted
	Records  []adapters.Record  // the records that take the current fingerprint
	Versions []adapters.Version // the current versions, noting the acceptance
	Tables   []string           // the tables whose records change
	At       time.Time          // when it was decided: the versions' AcceptedAt
}

// Acceptance decides what making the current version of each model sel
// selects the version of its partitions in range that an earlier version
// built would write, without recomputing them (a forward-only change):
// their ledger records take the current fingerprint, so they are no
// longer stale; partitions built from then on use the new SQL. Partitions
// stale for another reason (an upstream republished, a failure) are left
// as they are.
func (r *Reader) Acceptance(ctx context.Context, sel Selection) (*Acceptance, error) {
	facts, err := r.Facts(ctx, sel)
	if err != nil {
		return nil, err
	}
	chosen, err := r.Project.Select(sel.Select, sel.Exclude)
	if err != nil {
		return nil, usageErrorf("%v", err)
	}
	a := &assessor{scope: r.Scope, ledger: indexLedger(facts.Records), now: sel.Now}
	var out []Accepted
	var records []adapters.Record
	var versions []adapters.Version
	var tables []string
	now := r.Now()
	for _, m := range chosen {
		parts, _, err := sel.rangeFor(m)
		if err != nil {
			return nil, err
		}
		acc := Accepted{Model: m}
		from := map[string]bool{}
		for _, p := range parts {
			as, err := a.assess(m, p)
			if err != nil {
				return nil, err
			}
			if as.state != StateStale || as.reason != ReasonStale {
				continue
			}
			rec := *as.record
			if !from[rec.Fingerprint] {
				from[rec.Fingerprint] = true
				acc.From = append(acc.From, rec.Fingerprint)
			}
			rec.Fingerprint = as.fingerprint
			records = append(records, rec)
			acc.Partitions++
		}
		if acc.Partitions == 0 {
			continue
		}
		out = append(out, acc)
		v := m.Version(r.Scope)
		versions = append(versions, adapters.Version{Model: m.Name, Fingerprint: v.Fingerprint, Text: v.Text, CreatedAt: now,
			AcceptedFrom: acc.From[0], AcceptedAt: now, Accepted: int64(acc.Partitions)})
		tables = append(tables, r.Scope.Relation(m).String())
	}
	return &Acceptance{Models: out, Records: records, Versions: versions, Tables: tables, At: now}, nil
}
