package clickhouse

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"

	"github.com/refill/refill/adapters"
	"github.com/refill/refill/models"
)

// What a cluster's run publishes, listed on every node. A publication's
// records are written after its swap (deferred.go), and until then the
// stage on the coordinator is the evidence that the target may hold rows
// the ledger does not show. On a cluster the next run may be coordinated
// from another node, with this one's coordinator gone: so before each
// swap, the stage's name is appended to a list on every node that
// answers, a Log table in the stage database named for the run
// (kindPublished). The next run reads the lists of dead runs from every
// node that answers, alongside their stages (Unrecorded), and records
// what they name pending; a run that ends with every record written drops
// its lists (ReleaseLeases).
//
// An append to a Log table is a file write on one server: no part, no
// merge, no ZooKeeper. A pending row in the replicated ledger before each
// swap, which this replaces, was a replicated INSERT: a part on every
// node and a round of ZooKeeper writes per partition, which made a
// partition on the 2 x 2 test cluster cost about twice what the swap a
// ClickHouse engineer writes by hand costs (docs/benchmarks.md).

// kindPublished is the kind of a run's list of the stages it publishes
// (adapters.StageName).
const kindPublished = "p"

// publishedList names the list of the stages run runID publishes, on
// every node, in the stage database.
func (a *Adapter) publishedList(runID string) models.Relation {
	return models.Relation{Schema: a.cfg.StageSchema,
		Name: adapters.StageName(models.Relation{Schema: a.cfg.LedgerSchema, Name: "published"}, kindPublished, runID, "list")}
}

// lists are the published lists made so far, by node and name.
type lists struct {
	mu   sync.Mutex
	made map[string]bool
}

func (l *lists) has(key string) bool {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.made[key]
}

func (l *lists) add(key string) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.made == nil {
		l.made = map[string]bool{}
	}
	l.made[key] = true
}

// take returns and forgets the lists named name.
func (l *lists) take(name string) []string {
	l.mu.Lock()
	defer l.mu.Unlock()
	var out []string
	for key := range l.made {
		if _, n, _ := strings.Cut(key, "\x00"); n == name {
			out = append(out, key)
			delete(l.made, key)
		}
	}
	return out
}

// announce appends st's name to its run's list on every node that
// answers: the coordinator must, another node may be down (it lacks the
// entry, which the others hold). It fails before the target changes if
// any node that answers cannot take it.
func (r replicatedCluster) announce(ctx context.Context, tag adapters.Tag, st *adapters.Stage) error {
	a := r.a
	list := a.publishedList(st.Tag.RunID)
	tag.Step = "ledger"
	errs := onEach(r.c.nodes(), func(_ int, n *node) error {
		err := r.appendTo(ctx, tag, n, list, st.Relation.Name)
		if err != nil && (n == r.c.self || !unreachable(err)) {
			return fmt.Errorf("listing %s as published on %s: %w", st.Relation.Name, n.addr, err)
		}
		return nil
	})
	return errors.Join(errs...)
}

// appendTo appends name to list on node n, creating list first.
func (r replicatedCluster) appendTo(ctx context.Context, tag adapters.Tag, n *node, list models.Relation, name string) error {
	key := n.addr + "\x00" + list.Name
	if !r.c.lists.has(key) {
		if err := n.ensureDatabase(ctx, tag, list.Schema); err != nil {
			return err
		}
		if err := n.exec(ctx, tag, "CREATE TABLE IF NOT EXISTS "+list.Quote(n.d)+" (`stage` String) ENGINE = Log"); err != nil {
			return err
		}
		r.c.lists.add(key)
	}
	return n.exec(ctx, tag, fmt.Sprintf("INSERT INTO %s SELECT %s", list.Quote(n.d), n.d.QuoteString(name)))
}

// runEnded drops the lists of runID on every node that answers, once
// every record of the run is written and no stage is kept as evidence:
// they name nothing the ledger lacks. Otherwise they stay for the next
// run, which records what they name pending and then drops them.
func (r replicatedCluster) runEnded(ctx context.Context, runID string) {
	a := r.a
	if !a.deferred.clean() {
		return
	}
	list := a.publishedList(runID)
	keys := r.c.lists.take(list.Name)
	if len(keys) == 0 {
		return
	}
	tag := adapters.Tag{RunID: runID, Step: "drop"}
	onEach(r.c.nodes(), func(_ int, n *node) error {
		n.drop(ctx, tag, list)
		return nil
	})
}

// listedHere returns the stages the lists of the runs dead reports name
// on node n.
func (n *node) listedHere(ctx context.Context, tag adapters.Tag, tables []string, dead func(runToken string) bool) ([]string, error) {
	var out []string
	for _, name := range tables {
		if token, ok := adapters.StageRun(name); !ok || !dead(token) || adapters.StageKind(name) != kindPublished {
			continue
		}
		res, err := n.query(ctx, tag, "SELECT DISTINCT `stage` FROM "+models.Relation{Schema: n.cfg.StageSchema, Name: name}.Quote(n.d))
		if unknownTable(err) {
			// Dropped since it was listed: by its run, which recorded
			// what it names as it ended, or by a cleanup after the next
			// run recorded it (see runEnded and CleanStages).
			continue
		}
		if err != nil {
			return nil, err
		}
		for _, row := range res.Rows {
			if s := fmt.Sprint(row[0]); adapters.IsStage(s) {
				out = append(out, s)
			}
		}
	}
	return out, nil
}
