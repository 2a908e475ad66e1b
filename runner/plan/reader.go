package plan

import (
	"context"
	"fmt"
	"time"

	"github.com/refill/refill/adapters"
	"github.com/refill/refill/models"
)

// Reader reads from a target what planning a project's backfills needs:
// the ledger, what dead runs may have published unrecorded, watermarks,
// what the tables hold, versions and schema changes. It is the only
// reader of facts for a plan; it never writes.
type Reader struct {
	Project *models.Project
	Adapter adapters.Adapter
	// Scope renders the models for this target: its dialect, default
	// schema and vars.
	Scope *models.Scope
	// Clock is the time the reader takes as now (leases' expiry, pending
	// records); time.Now when nil.
	Clock func() time.Time
	// Defer, when set, reads some models from another target (--defer).
	Defer *Deferral
}

// Now returns the reader's time, in UTC.
func (r *Reader) Now() time.Time {
	if r.Clock != nil {
		return r.Clock().UTC()
	}
	return time.Now().UTC()
}

// Records returns the ledger's records for every model of the project.
func (r *Reader) Records(ctx context.Context) ([]adapters.Record, error) {
	var names, deferred []string
	for _, m := range r.Project.Models {
		if r.Defer != nil && r.Defer.Models[m.Name] {
			deferred = append(deferred, m.Name)
		} else {
			names = append(names, m.Name)
		}
	}
	records, err := r.recordsOf(ctx, names)
	if err != nil || len(deferred) == 0 {
		return records, err
	}
	// A deferred model's records are the other target's ledger's.
	theirs, err := r.Defer.Reader.recordsOf(ctx, deferred)
	if err != nil {
		return nil, fmt.Errorf("reading the ledger of target %s: %w", r.Defer.Target, err)
	}
	return append(records, theirs...), nil
}

// recordsOf reads the records of the named models, with those a dead run
// left unrecorded.
func (r *Reader) recordsOf(ctx context.Context, names []string) ([]adapters.Record, error) {
	records, err := r.Adapter.Partitions(ctx, names)
	if err != nil {
		return nil, err
	}
	return r.withUnrecorded(ctx, records)
}

// Deferral reads some models from another target of the same engine
// (--defer): their tables are the other target's (models.Scope.Defer
// names them in queries), and so are their ledger records, which say
// which of their partitions are built and when they were published. A
// plan that defers does not start from the ledger's summaries.
type Deferral struct {
	Target string  // the other target's name
	Reader *Reader // the other target's project, adapter and scope
	// Models are the deferred models, by name: those the selection does
	// not build and a selected model reads.
	Models map[string]bool
}

// Plan reads the ledger, evaluates the watermarks a scheduled run checks,
// compares the selected tables with the ledger (see Facts), and plans sel.
// With an adapter that summarizes its ledger, it reads only the records
// the plan needs (see planProven).
func (r *Reader) Plan(ctx context.Context, sel Selection) (*Plan, error) {
	facts, err := r.facts(ctx, sel, true)
	if err != nil {
		return nil, err
	}
	return NewPlanFacts(r.Project, r.Scope, *facts, sel)
}

// Facts reads what planning sel needs from the warehouse, every ledger
// record included.
func (r *Reader) Facts(ctx context.Context, sel Selection) (*Facts, error) {
	return r.facts(ctx, sel, false)
}

func (r *Reader) facts(ctx context.Context, sel Selection, summarize bool) (*Facts, error) {
	facts := &Facts{}
	if r.Defer != nil {
		summarize = false // the summaries pair this ledger's records alone
	}
	if sel.Scheduled() && sel.Mode == ModeDefault && sel.Since.IsZero() {
		sf, err := r.sourceChanges(ctx, sel)
		if err != nil {
			return nil, err
		}
		facts.SourceChanged, facts.SourceChecked, facts.SourceParts = sf.changed, sf.checked, sf.parts
		if len(facts.SourceChanged) > 0 {
			// Partitions the summaries prove done may have to rerun.
			summarize = false
		}
	}
	sums, err := r.summaries(ctx, sel, summarize)
	if err != nil {
		return nil, err
	}
	var totals map[string]*ledgerTotal
	if sums != nil {
		totals = totalsOfSummaries(sums)
	} else {
		if facts.Records, err = r.Records(ctx); err != nil {
			return nil, err
		}
		totals = totalsOfRecords(facts.Records)
	}
	if sel.Scheduled() {
		if facts.Watermarks, err = r.watermarks(ctx, sel); err != nil {
			return nil, err
		}
	}
	if facts.Tables, err = r.tableFacts(ctx, sel, totals); err != nil {
		return nil, err
	}
	selected, err := r.Project.Select(sel.Select, sel.Exclude)
	if err != nil {
		return nil, usageErrorf("%v", err)
	}
	names := make([]string, len(selected))
	for i, m := range selected {
		names[i] = m.Name
	}
	if facts.Versions, err = r.Adapter.Versions(ctx, names); err != nil {
		return nil, fmt.Errorf("reading model versions: %w", err)
	}
	if facts.SchemaChanged, err = r.schemaChanges(ctx, selected); err != nil {
		return nil, err
	}
	if sums != nil {
		fp := planProven(r.Project, r.Scope, sel, sums, facts.Tables, facts.SchemaChanged, accepted(r.Project, r.Scope, facts.Versions))
		if facts.Records, err = r.Adapter.(adapters.LedgerSummarizer).QueryPartitions(ctx, fp.query); err != nil {
			return nil, err
		}
		facts.Proven = fp.proven
	}
	return facts, nil
}

// summaries returns the ledger's summaries when the plan can start from
// them: the adapter summarizes, the selection looks at partitions the
// summaries can vouch for, and no dead run left publications unrecorded.
// It returns nil otherwise.
func (r *Reader) summaries(ctx context.Context, sel Selection, summarize bool) ([]adapters.RecordSummary, error) {
	ls, ok := r.Adapter.(adapters.LedgerSummarizer)
	if !summarize || !ok || !summariesApply(sel) {
		return nil, nil
	}
	if unrecorded, err := r.AnyUnrecorded(ctx); err != nil || unrecorded {
		return nil, err
	}
	sums, err := ls.SummarizePartitions(ctx, summaryQuery(r.Project, sel.Now))
	if err != nil {
		return nil, err
	}
	if sums == nil {
		sums = []adapters.RecordSummary{} // an empty ledger: nothing is done
	}
	return sums, nil
}
