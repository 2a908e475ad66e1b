package runner

import (
	"context"
	"fmt"
	"os"
	"sort"
	"time"

	"github.com/refill/refill/adapters"
	"github.com/refill/refill/models"
	"github.com/refill/refill/runner/plan"
)

// The ledger keeps every model version a run published (its text and
// fingerprint, models.Version), so that a stale partition can be
// explained by what changed since it was built, and so that a change can
// be accepted without rewriting history (forward-only).

// saveVersions records the current versions of the models plan runs that
// the ledger does not have yet.
func (r *Runner) saveVersions(ctx context.Context, p *plan.Plan) error {
	var names []string
	seen := map[*models.Model]bool{}
	for _, st := range p.Runs() {
		if !seen[st.Model] {
			seen[st.Model] = true
			names = append(names, st.Model.Name)
		}
	}
	if len(names) == 0 {
		return nil
	}
	have, err := r.Adapter.Versions(ctx, names)
	if err != nil {
		return err
	}
	kept := map[string]bool{}
	for _, v := range have {
		kept[v.Model+" "+v.Fingerprint] = true
	}
	var save []adapters.Version
	now := r.Now()
	for m := range seen {
		v := m.Version(r.Scope)
		if !kept[m.Name+" "+v.Fingerprint] {
			save = append(save, adapters.Version{Model: m.Name, Fingerprint: v.Fingerprint, Text: v.Text, CreatedAt: now})
		}
	}
	sort.Slice(save, func(i, j int) bool { return save[i].Model < save[j].Model })
	return r.Adapter.SaveVersions(ctx, save)
}

// Accept makes the current version of each selected model the version of
// its partitions in range that an earlier version built, without
// recomputing them (a forward-only change): it writes what
// plan.Reader.Acceptance decides, holding the tables' leases as a run
// does, waiting up to wait for tables another run holds (observe hears
// of the waiting). The ledger's version row records the acceptance, and
// plan notes it.
func (r *Runner) Accept(ctx context.Context, sel plan.Selection, runID string, wait time.Duration, observe func(Event)) ([]plan.Accepted, error) {
	acc, err := r.Acceptance(ctx, sel)
	if err != nil {
		return nil, err
	}
	records, versions, tables, out, now := acc.Records, acc.Versions, acc.Tables, acc.Models, acc.At
	if len(records) == 0 {
		return nil, nil
	}
	if err := r.Adapter.SetupLedger(ctx); err != nil {
		return nil, err
	}
	// Accepting rewrites ledger records: hold the tables as a run does,
	// and decide again after waiting for another run.
	err = r.leaseFresh(ctx, runID, tables, DefaultLeaseTTL, wait, observe, func(bool) ([]string, error) {
		if acc, err = r.Acceptance(ctx, sel); err != nil {
			return nil, err
		}
		records, versions, tables, out, now = acc.Records, acc.Versions, acc.Tables, acc.Models, acc.At
		return tables, nil
	})
	if err != nil {
		return nil, err
	}
	defer r.Adapter.ReleaseLeases(context.WithoutCancel(ctx), runID)
	if len(records) == 0 {
		return nil, nil
	}
	// The records first: a crash before the versions leaves no note
	// claiming an acceptance (acceptedNotes counts the records).
	if err := r.Adapter.RecordPartitions(ctx, records); err != nil {
		return nil, err
	}
	if err := r.Adapter.SaveVersions(ctx, versions); err != nil {
		return nil, err
	}
	host, _ := os.Hostname()
	run := &adapters.Run{ID: runID, Target: r.Target, Status: adapters.RunAccepted, Selection: sel.JSON(), Host: host,
		PID: os.Getpid(), StartedAt: now, FinishedAt: r.Now(), Succeeded: len(records)}
	if err := r.Adapter.SaveRun(ctx, run); err != nil {
		return nil, fmt.Errorf("recording the acceptance: %w", err)
	}
	return out, nil
}
