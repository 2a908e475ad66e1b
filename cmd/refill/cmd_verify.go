package main

import (
	"fmt"
	"strings"

	"github.com/spf13/cobra"

	"github.com/refill/refill/runner/plan"
)

func (a *app) verifyCommand() *cobra.Command {
	var f selectionFlags
	c := &cobra.Command{
		Use:   "verify [MODEL...] [--from KEY --to KEY | --partitions KEYS]",
		Short: "Find rows changed outside refill: compare each built partition's content with the hash recorded when it was published",
		Long: `Verify hashes the rows of each built partition of the selected models (all of
them, without MODEL) and compares the hash with the one recorded when refill
published the partition: a row updated, added or deleted in the table outside
refill shows, where a plan's drift check compares row counts only. Each table is
read once, grouped by partition. It writes nothing.

Only models with content_hash: true (in the model, or as the project's default in
refill.yml) record the hash; partitions published before it was set are counted as
not recorded, and partitions built before the table's columns changed as not
comparable. It exits 1 when any partition changed, and prints the command that
rebuilds them.

` + selectorHelp,
		Example: `  refill verify
  refill verify marts.daily_revenue --from 2024-01-01 --to 2024-03-31
  refill verify tag:finance --output json`,
		RunE: func(c *cobra.Command, args []string) error {
			sel, nothing, err := a.selectionOf(&f, args)
			if err != nil {
				return err
			}
			if nothing {
				fmt.Fprintln(a.stdout, nothingChanged)
				return nil
			}
			// Every partition in range, to look at the built ones.
			sel.Mode, sel.AllowMissingUpstream = plan.ModeAll, true
			s, err := a.session(readOnly, false, "refill verify", &sel)
			if err != nil {
				return err
			}
			defer s.close()
			pl, err := s.plan(sel)
			if err != nil {
				return err
			}
			checks, err := s.runner.VerifyContent(a.ctx, pl)
			if err != nil {
				return exitf(exitWarehouse, "target %s: %v", s.target.Name, err)
			}
			changed := 0
			out := verifyOutput{Target: s.target.Name, Adapter: s.info.Name, Models: []verifyModelJSON{}}
			for _, ch := range checks {
				m := verifyModelJSON{Model: ch.Model.Name, Verified: ch.Checked, Changed: []verifyChangeJSON{},
					Unrecorded: ch.Unrecorded, ColumnsChanged: ch.ColumnsChanged, Missing: ch.Missing}
				for _, c := range ch.Changed {
					m.Changed = append(m.Changed, verifyChangeJSON{Partition: c.Partition, Detail: c.Detail})
				}
				changed += len(ch.Changed)
				out.Models = append(out.Models, m)
			}
			if f.output == "json" {
				if err := writeJSON(a.stdout, out); err != nil {
					return err
				}
			} else {
				printVerify(a, checks)
			}
			if changed > 0 {
				return &exitError{code: exitFailed, err: fmt.Errorf("%s changed outside refill", plan.Plural(changed, "partition"))}
			}
			return nil
		},
	}
	f.register(c, false)
	a.completeSelection(c)
	c.Flags().StringVarP(&f.output, "output", "o", "text", "text or json")
	return c
}

// verifyOutput is refill verify --output json.
type verifyOutput struct {
	Target  string            `json:"target"`
	Adapter string            `json:"adapter"`
	Models  []verifyModelJSON `json:"models"`
}

type verifyModelJSON struct {
	Model string `json:"model"`
	// Verified counts the partitions compared; Changed lists those whose
	// rows differ from what refill published.
	Verified int                `json:"verified"`
	Changed  []verifyChangeJSON `json:"changed"`
	// Unrecorded counts built partitions without a recorded hash,
	// ColumnsChanged those whose hash covers other columns than the table
	// has now.
	Unrecorded     int  `json:"unrecorded"`
	ColumnsChanged int  `json:"columns_changed"`
	Missing        bool `json:"missing"` // the table does not exist
}

type verifyChangeJSON struct {
	Partition string `json:"partition"`
	Detail    string `json:"detail"`
}

// printVerify writes what verify found, model by model, and how to rebuild
// the partitions that changed.
func printVerify(a *app, checks []plan.ContentCheck) {
	for _, ch := range checks {
		var notes []string
		if ch.Unrecorded > 0 {
			notes = append(notes, fmt.Sprintf("%s without a recorded hash (published before content_hash:)", plan.Plural(ch.Unrecorded, "partition")))
		}
		if ch.ColumnsChanged > 0 {
			notes = append(notes, fmt.Sprintf("%s built before the table's columns changed", plan.Plural(ch.ColumnsChanged, "partition")))
		}
		status := "unchanged"
		switch {
		case ch.Missing:
			status = "its table does not exist"
		case len(ch.Changed) > 0:
			status = fmt.Sprintf("%d changed outside refill", len(ch.Changed))
		case ch.Checked == 0:
			status = "nothing to verify"
		}
		line := fmt.Sprintf("%s: %s verified, %s", ch.Model.Name, plan.Plural(ch.Checked, "partition"), status)
		if len(notes) > 0 {
			line += "; " + strings.Join(notes, "; ")
		}
		fmt.Fprintln(a.stdout, line)
		for _, c := range ch.Changed {
			fmt.Fprintf(a.stdout, "  %s  %s\n", c.Partition, c.Detail)
		}
		if len(ch.Changed) > 0 && !ch.Missing {
			keys := make([]string, len(ch.Changed))
			for i, c := range ch.Changed {
				keys[i] = c.Partition
			}
			fmt.Fprintf(a.stdout, "  rebuild them: refill run %s --partitions %s --mode all\n", ch.Model.Name, strings.Join(keys, ","))
		}
	}
}
